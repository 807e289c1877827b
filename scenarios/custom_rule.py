"""Your own rules: a coordinate-wise median aggregator and a clipped-SGD local rule.
Each is a config class with a ``kind`` plus an implementation given to simfl.register."""

from dataclasses import dataclass

import simfl
import torch


@dataclass(frozen=True)
class Median(simfl.Aggregator):
    """Coordinate-wise median of the received updates (robust to a few wild ones)."""

    kind, local_rule = "median", "clipped_sgd"
    max_norm: float = 1.0


@dataclass(frozen=True, eq=False)
class ClippedPayload(simfl.LocalPayload):
    """SGD with each parameter's gradient scaled down to norm <= max_norm."""

    kind = "clipped_sgd"
    max_norm: float = 1.0


@simfl.register(ClippedPayload)
class ClippedSgd(simfl.LocalRule):
    adds_term = True  # term() changes g: a step is more than p -= lr * g

    def init(self, payloads, start):  # one number per stacked client
        like = next(iter(start.values()))
        return torch.tensor([p.max_norm if p else float("inf") for p in payloads],
                            dtype=like.dtype, device=like.device)

    def term(self, max_norm, name, p, g):  # g: [clients still training, ...]
        norm = g.flatten(1).norm(dim=1).clamp_min(1e-12)
        g.mul_((max_norm[:len(g)] / norm).clamp(max=1.0).view(-1, *[1] * (g.dim() - 1)))


@simfl.register(Median)
class MedianAggregator:
    def __init__(self, cfg: Median, local_lr: float) -> None:
        self.cfg, self.init = cfg, lambda params, n_samples: None

    def client_payload(self, state, client):
        return ClippedPayload(self.cfg.max_norm)

    def aggregate(self, state, params, outcome, updates):
        new = {k: w + torch.stack([u.delta[k].to(w) for u in updates]).median(0).values
               for k, w in params.items()} if updates else params
        used = float(len(updates))  # every aggregator reports what it used and whether it moved
        return new, state, {"n_aggregated": used, "stepped": float(used > 0)}


def scenario() -> simfl.Scenario:
    return simfl.Scenario(name="custom_rule", seed=1, task=simfl.Task(
        dataset=simfl.Digits(), model=simfl.Mlp(hidden=(32,)), n_clients=20, local_steps=5,
        lr=0.1),
        server=simfl.Server(algorithm=Median(max_norm=2.0), clients_per_round=5),
        run=simfl.Run(rounds=20, eval_every_rounds=5))
