"""One local step of every local rule, on K clients stacked along axis 0 (:class:`StepRule`),
and the payload records that choose the rule (:func:`as_payload`, :func:`local_rule`).

See :mod:`simfl.train.local` for the rules themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Sequence

import torch

from simfl.core.registry import implementation_of, registry
from simfl.core.records import (CVaRPayload, LocalPayload, LocalResult, ProxPayload,
                                ScaffoldPayload, ScaledSgdPayload, SgdPayload)
from simfl.train.models import Params
from simfl.train.optimizers import ClientState, StackedOptimizer
from simfl.train.rules import LocalRule, column, per_client


def as_payload(payload: Any) -> LocalPayload | None:
    """``payload`` as a typed record: records pass through, None stays None (plain SGD),
    and a plain dict in the keys of the built-in rules (``loss_scale``, ``mu``, ``c`` and
    ``c_i``, ``cvar``, each with an optional ``lr_scale``) becomes its record."""
    if payload is None or isinstance(payload, LocalPayload):
        return payload
    if not isinstance(payload, Mapping):
        raise TypeError(f"a local rule's payload must be a LocalPayload, not {payload!r}")
    common = {"lr_scale": float(payload["lr_scale"])} if "lr_scale" in payload else {}
    rules = [key for key in ("loss_scale", "mu", "c", "cvar") if key in payload]
    if len(rules) > 1:
        raise ValueError(f"a payload asks for one local rule, not {rules}")
    if not rules:
        return SgdPayload(**common) if common else None
    if rules == ["loss_scale"]:
        return ScaledSgdPayload(float(payload["loss_scale"]), **common)
    if rules == ["mu"]:
        return ProxPayload(float(payload["mu"]), **common)
    if rules == ["c"]:
        return ScaffoldPayload(payload["c"], payload["c_i"], **common)
    return CVaRPayload(**{k: float(v) for k, v in payload["cvar"].items()}, **common)


def local_rule(kind: type[LocalPayload]) -> LocalRule:
    """The implementation of the rule whose payload class is ``kind``."""
    rule = implementation_of(kind, "server.algorithm.local_rule")
    return rule() if isinstance(rule, type) else rule  # type: ignore[no-any-return]


class StepRule:
    """One local step of every rule, for K clients stacked along axis 0.

    Composes the local rules (:mod:`simfl.train.rules`) that the stack's payloads name,
    in their registration order, with what every rule shares: weight decay and the step
    size ``lr * lr_scale``.

    Parameters
    ----------
    payloads
        The jobs' payloads (:class:`~simfl.core.records.LocalPayload`, None for plain SGD,
        or a plain dict, see :func:`as_payload`), in stack order.
    start
        The stacked start models ``{name: [K, ...]}`` (the prox anchor and SCAFFOLD's x).
    lr, weight_decay
        Step size of the model and L2 weight decay (``task.lr``, ``task.weight_decay``).
    optimizer, n_steps, saved
        The local optimiser (``task.optimizer``; None or plain SGD: ``p -= lr * g``), each
        client's number of steps and kept optimiser state
        (:class:`simfl.train.optimizers.StackedOptimizer`).

    Attributes
    ----------
    lr
        The step size shared by every client (``lr`` times their common ``lr_scale``), or
        None when the payloads ask for different scales (then ``lr_k`` is used per client).
    """

    def __init__(self, payloads: Sequence[Any], start: Params, lr: float,
                 weight_decay: float, optimizer: Any = None, n_steps: Sequence[int] = (),
                 saved: Sequence[ClientState | None] | None = None) -> None:
        payloads = self.payloads = [as_payload(p) for p in payloads]
        like = next(iter(start.values()))
        self.start, self.weight_decay = start, weight_decay
        self.lr_scale = [1.0 if p is None or p.lr_scale is None else float(p.lr_scale)
                         for p in payloads]
        self.step_sizes = [lr * s for s in self.lr_scale]
        shared = set(self.step_sizes) or {lr}
        self.lr = shared.pop() if len(shared) == 1 else None
        self.lr_k = column(self.step_sizes, like)
        kinds = {type(p) for p in payloads if p is not None}
        order = [entry.obj for entry in registry("local_rules")]
        self.rules: list[tuple[type, LocalRule, Any]] = []
        for kind in sorted(kinds, key=lambda k: order.index(k) if k in order else len(order)):
            rule = local_rule(kind)
            state = rule.init([p if type(p) is kind else None for p in payloads], start)
            if state is not None:
                self.rules.append((kind, rule, state))
        self.terms = [(rule, state) for _, rule, state in self.rules if rule.adds_term]
        self.optimizer = None if optimizer is None or optimizer.plain else StackedOptimizer(
            optimizer, start, self.step_sizes, n_steps, saved or [None] * len(payloads))

    def coefficients(self, losses: torch.Tensor) -> torch.Tensor | None:
        """Multiplier of each active client's loss gradient (``losses``: its K_t losses),
        or None when every multiplier is 1."""
        coef = None
        for _, rule, state in self.rules:
            factor = rule.coefficient(state, losses)
            if factor is not None:
                coef = factor if coef is None else coef * factor
        return coef

    @property
    def gradient_only(self) -> bool:
        """True when a step is ``p -= lr * g`` (no weight decay, proximal term or
        correction), so a caller may fuse it into the matmul that makes g."""
        return (not self.weight_decay and not self.terms and self.lr is not None
                and self.optimizer is None)

    def step(self, named: Sequence[tuple[str, torch.Tensor, torch.Tensor]],
             losses: torch.Tensor) -> None:
        """Apply one step in place to the active prefix ``[:K_t]`` of the stack.

        ``named`` holds (name, parameters [K_t, ...], gradient of the unscaled loss); the
        gradients are overwritten.
        """
        coef = self.coefficients(losses)
        with torch.no_grad():
            for name, p, g in named:
                if coef is not None:
                    g.mul_(per_client(coef, p))
                self.descend(name, p, g)
        self.advance(losses)

    def descend(self, name: str, p: torch.Tensor, g: torch.Tensor) -> None:
        """``p -= lr * (g + the rules' terms)`` in place, ``g`` being the gradient of the
        scaled loss for the active prefix ``p = stack[:K_t]``; ``g`` is overwritten.

        Every term is added in place: at 100 clients a stacked weight is 32 MB, and a fresh
        tensor per term cost more than the matmuls (measured). Call it under
        ``torch.no_grad()``.
        """
        k_t = len(p)
        if self.weight_decay:
            g.add_(p, alpha=self.weight_decay)
        for rule, state in self.terms:
            rule.term(state, name, p, g)
        if self.optimizer is not None:
            self.optimizer.descend(name, p, g)
        elif self.lr is None:
            p.sub_(g.mul_(per_client(self.lr_k[:k_t], p)))
        else:
            p.sub_(g, alpha=self.lr)

    def advance(self, losses: torch.Tensor) -> None:
        """The rules' own state after a step (CVaR's t) of the clients with ``losses``."""
        if self.optimizer is not None:
            self.optimizer.advance(len(losses))
        self.rules = [(kind, rule, rule.advance(state, losses))
                      for kind, rule, state in self.rules]

    def extras(self, local: Params, n_steps: Sequence[int]) -> list[LocalResult]:
        """Each client's result record (``ClientUpdate.extra``) after training
        (``local``: stacked results)."""
        states = {kind: (rule, state) for kind, rule, state in self.rules}
        out: list[LocalResult] = []
        for k, (payload, steps) in enumerate(zip(self.payloads, n_steps)):
            if payload is None:
                out.append(LocalResult())
                continue
            fields: dict[str, Any] = {}
            if type(payload) in states:
                rule, state = states[type(payload)]
                fields = rule.result(state, k, self.start, local, steps, self.step_sizes[k])
            lr_scale = None if payload.lr_scale is None else self.lr_scale[k]
            out.append(payload.result(lr_scale=lr_scale, **fields))
        return out
