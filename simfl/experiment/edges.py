"""The model side of hierarchical FL: one model per edge server, the cloud's above them.

:class:`EdgeTrainer` keeps each edge server's model and aggregator state. In every
round each edge aggregates the updates of its own clients (they trained from that
edge's model) with the run's aggregator, through the run's
:class:`~simfl.experiment.training.ModelTrainer` (same executor, local rule and random
streams as a flat run). In a cloud round (``RoundOutcome.tier.cloud``) the cloud then
averages the edge models that reached it, weighted by the samples under each edge
(HierFAVG: w = sum_e (N_e / N) w_e over the edges in), and every edge the cloud's model
reached takes it. Evaluations and samplers' probes see the cloud's latest model.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from simfl.core.config import Scenario
from simfl.core.records import RoundOutcome
from simfl.core.tiers import TierRecord
from simfl.metrics.recorder import RunRecorder
from simfl.sim.rounds.server_steps import Update


def tier_arguments(scenario: Scenario) -> dict[str, Any]:
    """The extra arguments of a :class:`~simfl.sim.hierarchy.simulation.TieredSimulation`
    (empty without ``server.hierarchy``)."""
    tiers = scenario.server.hierarchy
    if tiers is None:
        return {}
    return {"hierarchy": tiers, "n_edges": n_edges(scenario)}


def n_edges(scenario: Scenario) -> int:
    """How many edge servers ``scenario`` has (0 without a hierarchy)."""
    tiers = scenario.server.hierarchy
    return 0 if tiers is None else tiers.n_edges(len(scenario.network.cells.access_points))


def with_edges(scenario: Scenario, trainer: Any) -> Any:
    """``trainer``, with a model per edge server when ``scenario`` has a hierarchy."""
    return trainer if scenario.server.hierarchy is None else EdgeTrainer(trainer,
                                                                        n_edges(scenario))


def edge_outcome(outcome: RoundOutcome, edge_of: Mapping[int, int], edge: int) -> RoundOutcome:
    """The part of ``outcome`` that edge ``edge`` sees: its own invitees (``outcome``
    itself when they are all its own)."""
    selected = outcome.selected
    mine = [edge_of[c] == edge for c in selected]
    if all(mine):
        return outcome
    keep = {c for c, m in zip(selected, mine) if m}
    return dataclasses.replace(
        outcome, selected=tuple(c for c in selected if c in keep),
        received=tuple(a for a in outcome.received if a.client in keep),
        missing=tuple(m for m in outcome.missing if m.client in keep),
        multiplicity=tuple(d for d, m in zip(outcome.multiplicity, mine) if m))


def weighted_average(models: list[Any], weights: list[float]) -> Any:
    """sum_i (weights_i / sum weights) models_i, tensor by tensor; a single model is
    returned as it is. Tensors that are not floating point (counters) come from the
    first model. Equal weights when they sum to zero."""
    if len(models) == 1:
        return models[0]
    total = float(sum(weights))
    shares = ([w / total for w in weights] if total > 0 else
              [1.0 / len(models)] * len(models))
    out = {}
    for name, first in models[0].items():
        if not first.is_floating_point():
            out[name] = first
            continue
        acc = first * shares[0]
        for model, share in zip(models[1:], shares[1:]):
            acc = acc + model[name] * share
        out[name] = acc
    return out


class EdgeTrainer:
    """``inner`` (a :class:`~simfl.experiment.training.ModelTrainer`) run once per edge
    server in each round, and the cloud's aggregation in cloud rounds: its model step
    (:class:`~simfl.experiment.model_step.ModelStep`) takes each edge's model and
    aggregator state in turn."""

    def __init__(self, inner: Any, n_edges: int) -> None:
        self.inner = inner
        self.models = [inner.params] * n_edges  # each edge's model
        self.states = [inner.step.agg_state] * n_edges  # each edge's aggregator state

    @property
    def params(self) -> Any:
        """The cloud's latest model."""
        return self.inner.params

    @property
    def accuracy(self) -> float | None:
        return self.inner.accuracy  # type: ignore[no-any-return]

    @property
    def device(self) -> Any:
        return self.inner.device

    def begin_round(self, round: int, t_s: float) -> None:
        self.inner.begin_round(round, t_s)

    def train(self, round: int, outcome: RoundOutcome,
              late_running: Mapping[int, int]) -> tuple[int, int]:
        """Each edge aggregates its clients' updates; the cloud aggregates in a cloud
        round. Returns (updates trained, updates aggregated) over all edges."""
        tier = outcome.tier
        assert isinstance(tier, TierRecord), "a hierarchical run's rounds carry a tier record"
        edge_of = dict(zip(outcome.selected, tier.edges))
        step = self.inner.step
        cloud, n_trained, n_aggregated = step.params, 0, 0
        for edge in sorted(set(tier.edges)):
            step.take(self.models[edge], self.states[edge])
            trained, aggregated = step.train(round, edge_outcome(outcome, edge_of, edge),
                                             late_running)
            self.models[edge], self.states[edge] = step.params, step.agg_state
            n_trained, n_aggregated = n_trained + trained, n_aggregated + aggregated
        if tier.cloud and tier.edges_up:
            cloud = weighted_average([self.models[e] for e in tier.edges_up],
                                     [float(tier.edge_samples[e]) for e in tier.edges_up])
            for edge in tier.edges_down:
                self.models[edge] = cloud
        step.take(cloud, step.agg_state)
        return n_trained, n_aggregated

    def apply(self, version: int, updates: Sequence[Update], staleness: Sequence[float],
              versions: Mapping[int, Any]) -> tuple[int, int]:
        raise NotImplementedError("edge servers aggregate in rounds (server.mode = sync)")

    def evaluate_due(self, recorder: RunRecorder, t_close_s: float, completed: int,
                     before_close: bool) -> None:
        self.inner.evaluate_due(recorder, t_close_s, completed, before_close)

    def evaluate_last(self, recorder: RunRecorder, t_s: float, completed: int) -> None:
        self.inner.evaluate_last(recorder, t_s, completed)

    def evaluate(self, recorder: RunRecorder, t_s: float, completed: int) -> None:
        self.inner.evaluate(recorder, t_s, completed)

    def client_losses(self, clients: np.ndarray) -> np.ndarray:
        return np.asarray(self.inner.client_losses(clients))

    def client_features(self, kind: str, clients: np.ndarray, noise_batch: int) -> np.ndarray:
        return np.asarray(self.inner.client_features(kind, clients, noise_batch))

    def warnings(self, n_arrived: int, n_rounds: int) -> list[str]:
        return list(self.inner.warnings(n_arrived, n_rounds))

    def save_models(self, out_dir: Path) -> None:
        self.inner.save_models(out_dir)  # the cloud's model

    def snapshot(self) -> dict[str, Any]:
        """The inner trainer's state (its ``params`` is the cloud's model) and every
        edge's model and aggregator state (a checkpoint inside a cloud period)."""
        return {**self.inner.snapshot(), "edge_models": list(self.models),
                "edge_states": list(self.states)}

    def restore(self, state: dict[str, Any]) -> None:
        self.inner.restore({k: v for k, v in state.items()
                            if k not in ("edge_models", "edge_states")})
        self.models, self.states = list(state["edge_models"]), list(state["edge_states"])
