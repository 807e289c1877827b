"""Local optimisers on K clients stacked along axis 0 (``task.optimizer``).

:class:`StackedOptimizer` turns each step's gradient (weight decay and the local rule's
terms already in it) into the direction of ``p -= lr_k * d`` and gives each active
client's step size at the current step (``server.lr_schedule``'s round scale times
``task.optimizer.schedule``'s step scale). The arithmetic is that of ``torch.optim.SGD``,
``Adam`` and ``AdamW`` (single-tensor implementations), so one client matches a
hand-written torch loop; the inline and the batched executor run this same code.

A client's kept state (``state = "per_client"``) is a dict ``{"steps": int, "<slot>":
{name: tensor}}`` (slots ``b`` for SGD's momentum buffer, ``m`` and ``v`` for Adam's
moments), one per client, read before its job and written after it.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch

from simfl.core.config.local_optimizer import Adam, AdamW, LocalOptimizer, Sgd
from simfl.train.rules import column, per_client

Params = dict[str, torch.Tensor]
#: one client's kept optimiser state (see the module docstring); empty when it has none
ClientState = dict[str, Any]


class StackedOptimizer:
    """The optimiser state of a stack of K clients, and one step's direction and sizes.

    Parameters
    ----------
    config
        The ``task.optimizer`` node.
    start
        The stacked start models ``{name: [K, ...]}`` (shapes, dtype and device).
    step_sizes
        Each client's step size before the per-step schedule (``lr * lr_scale``).
    n_steps
        Each client's number of local steps (the schedule's horizon), stack order.
    saved
        Each client's kept state, or None / an empty dict for a fresh one.
    """

    def __init__(self, config: LocalOptimizer, start: Params, step_sizes: Sequence[float],
                 n_steps: Sequence[int], saved: Sequence[ClientState | None]) -> None:
        self.config, self.t = config, 0
        self.step_sizes, self.n_steps = list(step_sizes), list(n_steps)
        self.slots = self._slots(config)
        like = next(iter(start.values()))
        self.fresh = torch.tensor([not s for s in saved], device=like.device)
        self.steps = [int(s["steps"]) if s else 0 for s in saved]
        self.state: dict[str, Params] = {}
        for slot in self.slots:
            self.state[slot] = {name: torch.stack([
                s[slot][name].to(v) if s else torch.zeros_like(v[k])
                for k, s in enumerate(saved)]) for name, v in start.items()}

    @staticmethod
    def _slots(config: LocalOptimizer) -> tuple[str, ...]:
        if isinstance(config, Adam):
            return ("m", "v")
        if isinstance(config, Sgd) and config.momentum:
            return ("b",)
        return ()

    def sizes(self, k_t: int) -> list[float]:
        """The step size of each of the first ``k_t`` clients at the current step."""
        schedule = self.config.schedule
        return [self.step_sizes[k] * schedule.scale(self.t, self.n_steps[k]) for k in range(k_t)]

    def advance(self, k_t: int) -> None:
        """After a step of the first ``k_t`` clients."""
        self.t += 1
        for k in range(k_t):
            self.steps[k] += 1

    def descend(self, name: str, p: torch.Tensor, g: torch.Tensor) -> None:
        """``p -= lr_k * direction(g)`` in place for the active prefix ``p`` [K_t, ...]
        (``g``: the full gradient, overwritten). Call it under ``torch.no_grad()``."""
        k_t = len(p)
        sizes = self.sizes(k_t)
        shared = sizes[0] if len(set(sizes)) == 1 else None
        lr = None if shared is not None else per_client(column(sizes, p), p)
        config = self.config
        if isinstance(config, AdamW) and config.weight_decay:
            if lr is None:
                p.mul_(1 - shared * config.weight_decay)
            else:
                p.mul_(1 - lr * config.weight_decay)
        if isinstance(config, Adam):
            g = self._adam(name, k_t, g, config)
        elif self.slots:
            g = self._momentum(name, k_t, g, config)
        if lr is None:
            p.add_(g, alpha=-shared)
        else:
            p.sub_(g.mul_(lr))

    def _momentum(self, name: str, k_t: int, g: torch.Tensor, config: Any) -> torch.Tensor:
        b = self.state["b"][name][:k_t]
        b.mul_(config.momentum).add_(g, alpha=1 - config.dampening)
        if self.t == 0:  # a client without a kept buffer starts it at its first gradient
            fresh = self.fresh[:k_t]
            if bool(fresh.any()):
                b[fresh] = g[fresh]
        return g.add_(b, alpha=config.momentum) if config.nesterov else b.clone()

    def _adam(self, name: str, k_t: int, g: torch.Tensor, config: Adam) -> torch.Tensor:
        m, v = self.state["m"][name][:k_t], self.state["v"][name][:k_t]
        m.lerp_(g, 1 - config.beta1)
        v.mul_(config.beta2).addcmul_(g, g, value=1 - config.beta2)
        steps = [self.steps[k] + 1 for k in range(k_t)]
        bc1 = [1 - config.beta1 ** s for s in steps]
        bc2_sqrt = [(1 - config.beta2 ** s) ** 0.5 for s in steps]
        if len(set(steps)) == 1:
            denom = (v.sqrt() / bc2_sqrt[0]).add_(config.eps)
            return torch.div(m, denom, out=g).div_(bc1[0])
        denom = (v.sqrt() / per_client(column(bc2_sqrt, g), g)).add_(config.eps)
        return torch.div(m, denom, out=g).div_(per_client(column(bc1, g), g))

    def client_state(self, k: int) -> ClientState:
        """Client k's state after its job, to keep (tensors of its own)."""
        state: ClientState = {"steps": self.steps[k]}
        for slot, tensors in self.state.items():
            state[slot] = {name: t[k].clone() for name, t in tensors.items()}
        return state
