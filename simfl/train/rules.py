"""The local rules: the per-client terms of one local SGD step, one small object per rule.

A rule is named by its payload class (:class:`simfl.core.records.LocalPayload`, whose
``kind`` is the rule's name) and implemented by a :class:`LocalRule` (an instance), named
with :func:`simfl.core.registry.implements`.
Every method works on K clients stacked along axis 0; :class:`simfl.train.local.StepRule`
composes the rules of a stack into one step:

1. ``coefficient(state, losses)``: multiplier of each active client's loss gradient;
2. ``g += weight_decay * p`` (every rule), then ``term(state, name, p, g)`` of each rule;
3. ``p -= lr_k * g`` (every rule), then ``advance(state, losses)``;
4. after the last step, ``result(state, k, start, local, steps, step_size)``: the fields of
   client k's :class:`~simfl.core.records.LocalResult` (its payload's ``result`` class).

``init`` sees the payloads of the whole stack, in stack order, with ``None`` for clients
that follow another rule (their terms must be neutral) and returns the rule's state, or
None when the rule changes nothing for any client (then no other hook is called).
Only the active prefix ``[:K_t]`` of a stack still trains at a given step (plans of
different lengths); ``losses`` and ``p`` have K_t rows.
"""

from __future__ import annotations

from typing import Any, ClassVar, Sequence

import torch

from simfl.core.records import (CVaRPayload, LocalPayload, ProxPayload, ScaffoldPayload,
                                ScaledSgdPayload, SgdPayload)
from simfl.core.registry import implements

Params = dict[str, torch.Tensor]


def column(values: Sequence[float], like: torch.Tensor) -> torch.Tensor:
    """One number per client, as a tensor of ``like``'s dtype and device."""
    return torch.tensor(values, dtype=like.dtype, device=like.device)


def per_client(values: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """``values`` [K_t] shaped to broadcast over the stacked tensor ``p`` [K_t, ...]."""
    return values.view((len(values),) + (1,) * (p.dim() - 1))


class LocalRule:
    """A local rule's hooks; the defaults change nothing (plain SGD)."""

    #: True when :meth:`term` adds to the gradient (the step is then not ``p -= lr * g``)
    adds_term: ClassVar[bool] = False

    def init(self, payloads: Sequence[Any], start: Params) -> Any:
        return None

    def coefficient(self, state: Any, losses: torch.Tensor) -> torch.Tensor | None:
        return None

    def term(self, state: Any, name: str, p: torch.Tensor, g: torch.Tensor) -> None:
        """Add the rule's term of parameter ``name`` to ``g`` in place."""

    def advance(self, state: Any, losses: torch.Tensor) -> Any:
        return state

    def result(self, state: Any, k: int, start: Params, local: Params, steps: int,
               step_size: float) -> dict[str, Any]:
        return {}


def _like(start: Params) -> torch.Tensor:
    return next(iter(start.values()))


class Sgd(LocalRule):
    """Plain SGD: the step every rule shares, nothing added."""


class ScaledSgd(LocalRule):
    """The loss times ``loss_scale`` (FedLaAvg's N n_i / n); weight decay is not scaled."""

    def init(self, payloads, start):
        scale = [p.loss_scale if p is not None else 1.0 for p in payloads]
        return None if all(s == 1.0 for s in scale) else column(scale, _like(start))

    def coefficient(self, state, losses):
        return state[:len(losses)]


class Prox(LocalRule):
    """FedProx's term mu (w - w_t) of the gradient, w_t the start model."""

    adds_term = True

    def init(self, payloads, start):
        mu = [p.mu if p is not None else 0.0 for p in payloads]
        return {"mu": column(mu, _like(start)), "start": start} if any(mu) else None

    def term(self, state, name, p, g):
        k_t = len(p)
        g.addcmul_(per_client(state["mu"][:k_t], p), p - state["start"][name][:k_t])


class Scaffold(LocalRule):
    """SCAFFOLD's corrected gradient g - c_i + c; reports c_i^+ - c_i (option II)."""

    adds_term = True

    def init(self, payloads, start):
        if any(p is None for p in payloads):
            raise ValueError("scaffold: every client of a stack needs the c and c_i payload")
        like = _like(start)
        control = {name: torch.stack([p.c[name].to(like) for p in payloads]) for name in start}
        correction = {name: control[name] - torch.stack([p.c_i[name].to(like) for p in payloads])
                      for name in start}
        return {"control": control, "correction": correction}

    def term(self, state, name, p, g):
        g.add_(state["correction"][name][:len(p)])

    def result(self, state, k, start, local, steps, step_size):
        # c_i^+ - c_i = -c + (x - y) / (K lr); a client that took no step sends 0
        return {"delta_c": {
            name: (torch.zeros_like(start[name][k]) if steps == 0 else
                   (start[name][k] - local[name][k]) / (steps * step_size)
                   - state["control"][name][k])
            for name in start}}


class CVaR(LocalRule):
    """SGD on (theta, t): the loss gradient times lam + (1 - lam)/alpha where f > t, else
    lam; t -= lr_t * d/dt (the branch f <= t at f = t)."""

    def init(self, payloads, start):
        if any(p is None for p in payloads):
            raise ValueError("cvar: every client of a stack needs the cvar payload")
        like = _like(start)
        return {key: column([float(getattr(p, key)) for p in payloads], like)
                for key in ("t", "alpha", "lam", "lr_t")}

    def coefficient(self, state, losses):
        k_t = len(losses)
        lam, alpha, t = (state[key][:k_t] for key in ("lam", "alpha", "t"))
        return torch.where(losses.detach() > t, lam + (1 - lam) / alpha, lam)

    def advance(self, state, losses):
        k_t = len(losses)
        with torch.no_grad():
            lam, alpha, t, lr_t = (state[key][:k_t] for key in ("lam", "alpha", "t", "lr_t"))
            d_t = torch.where(losses.detach() > t, (1 - lam) * (1 - 1 / alpha), 1 - lam)
            state["t"][:k_t] = t - lr_t * d_t
        return state

    def result(self, state, k, start, local, steps, step_size):
        return {"t": state["t"][k].item()}


# each local rule's implementation, by its payload class (``simfl.register`` adds more)
for _payload, _rule in ((SgdPayload, Sgd()), (ScaledSgdPayload, ScaledSgd()), (ProxPayload, Prox()),
                        (ScaffoldPayload, Scaffold()), (CVaRPayload, CVaR())):
    implements(_payload, _rule)
