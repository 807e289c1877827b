"""Local training: the minibatch plan, the losses, and one step of every local rule.

A job trains minibatch SGD from the model the client was sent, changed by the local rule
its payload names (:class:`simfl.core.records.LocalPayload`, from the aggregator's
``client_payload``); a job without a payload trains with plain ``sgd``. The built-in
rules (:mod:`simfl.train.rules`, docs/algorithms.md):

``scaled_sgd``  :class:`ScaledSgdPayload`: the loss is multiplied by ``loss_scale``
                (FedLaAvg's N n_i / n, §5 step 2); weight decay is not scaled.
``prox``        :class:`ProxPayload`: FedProx's proximal term (mu/2) ||w - w_t||^2 is added
                to the loss (Li et al., MLSys 2020, eq. 2), w_t being the start model.
``scaffold``    :class:`ScaffoldPayload` (``c``, ``c_i``: parameter dicts): each step uses
                the corrected gradient g - c_i + c; the result's ``delta_c`` is
                c_i^+ - c_i = -c + (w_t - y) / (K lr), K the number of steps taken
                (Karimireddy et al., ICML 2020, Algorithm 1, option II; §1.6). A client
                that takes no step sends delta_c = 0.
``cvar``        :class:`CVaRPayload` (``t``, ``alpha``, ``lam``, ``lr_t``): SGD on the pair
                (theta, t) for F(theta, t) = lam f + (1 - lam)(t + (f - t)_+ / alpha), f the
                minibatch-mean loss, with separate step sizes lr (theta) and lr_t (t); the
                subgradient at f = t takes the branch f <= t (§2). The result's ``t`` is the
                final t.

Any payload may also set ``lr_scale`` (the server's learning-rate schedule,
``server.lr_schedule``): the job then trains with step size ``lr * lr_scale`` throughout
(every term of the step, SCAFFOLD's K lr included), and its result reports the same
``lr_scale``, so the server can normalise the update by the step size it was made with.

The minibatch plan lives in :mod:`simfl.train.minibatch` and the arithmetic of one step
in :class:`StepRule` (:mod:`simfl.train.step_rule`), both re-exported here; the step
works on tensors with a leading client axis, so the inline executor (one client, axis of length 1) and the batched executor
(all clients) run the very same code; only the inline executor's plain-SGD jobs take
:func:`plain_sgd_step`, the same arithmetic without the client axis.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from simfl.core.config import Dataset
from simfl.core.records import LocalResult, SgdPayload
from simfl.train.minibatch import (job_plan, job_plans, job_stream, minibatch_plan, plan_order,
                                   plan_sizes)
from simfl.train.models import DenseNet, Params
from simfl.train.step_rule import StepRule, as_payload, local_rule

__all__ = ["LossFn", "Penalty", "StepRule", "as_payload", "cross_entropy", "job_plan",
           "job_plans", "job_stream", "local_rule", "minibatch_plan", "plain_sgd_step",
           "plan_order", "plan_sizes", "sample_loss", "sgd"]


#: per-sample losses: (outputs [..., C], targets [...] or [..., C]) -> [...]
LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def sample_loss(dataset: Dataset) -> LossFn:
    """The per-sample loss of ``dataset``: softmax cross-entropy for classification,
    (curvature / 2) ||out - y||^2 for the ``quadratic`` toy objectives."""
    if dataset.loss == "squared":
        curvature = dataset.curvature  # type: ignore[attr-defined]
        return lambda out, y: 0.5 * curvature * ((out - y) ** 2).sum(dim=-1)
    return cross_entropy


def cross_entropy(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Softmax cross-entropy of every sample (any leading axes)."""
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1),
                           reduction="none").view(out.shape[:-1])


#: an extra term of the local objective: (model outputs, minibatch inputs) -> scalar
Penalty = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def sgd(net: DenseNet, start: Params, x: torch.Tensor, y: torch.Tensor,
        plan: list[np.ndarray], lr: float, weight_decay: float, payload: Any = None,
        loss: LossFn | None = None, penalty: Penalty | None = None,
        optimizer: Any = None, opt_state: dict | None = None,
        augment: Callable[[torch.Tensor], torch.Tensor] | None = None,
        ) -> tuple[Params, float, LocalResult]:
    """The local rule ``payload`` asks for (plain SGD without one), one client, from ``start``.

    ``penalty``, if given, is added to each minibatch's mean loss (e.g. distillation,
    :mod:`simfl.train.distill`). ``optimizer`` is ``task.optimizer`` (None: plain SGD);
    ``opt_state``, if given, is the client's kept optimiser state, read before training
    and replaced in place after it (``state = "per_client"``). ``augment``, if given,
    transforms the plan's samples (in plan order) before training. Returns the local model, the mean (unscaled) minibatch
    objective and the update's extras.

    The whole plan's samples are gathered once (one index per job; the minibatches are
    slices of it), cross-entropy's minibatch mean is one op, and a job without a payload
    skips :class:`StepRule` for :func:`plain_sgd_step`, the same arithmetic without the
    client axis. Together these took a client's training from 0.52 to 0.42 ms (MLP
    784-100-10, 40 samples in steps of 32 and 8, one thread; ``torch.optim.SGD`` on an
    ``nn.Module``: 0.55 ms).
    """
    loss = loss or cross_entropy
    # the same mean in one op (and one backward node) for the common case
    mean_loss = F.cross_entropy if loss is cross_entropy else (
        loss if getattr(loss, "per_sample", True) is False else lambda out, y: loss(out, y).mean())
    params = {k: v.detach().clone() for k, v in start.items()}
    trainable = getattr(net, "trainable", None)  # a module's buffers get no gradient
    names = list(start) if trainable is None else [k for k in trainable if k in start]
    tensors = [params[k].requires_grad_(True) for k in names]
    forward = getattr(net, "train_forward", net.forward)
    payload = as_payload(payload)
    plain = (payload is None or (type(payload) is SgdPayload and payload.lr_scale is None)) \
        and (optimizer is None or optimizer.plain)
    rule = None if plain else StepRule(
        [payload], {k: v.detach().unsqueeze(0) for k, v in start.items()}, lr, weight_decay,
        optimizer, [len(plan)], [opt_state])
    total = 0.0
    if plan:
        idx = torch.from_numpy(np.concatenate(plan)).to(x.device)
        xs, ys = x[idx], y[idx]
        if augment is not None:
            xs = augment(xs)
    end = 0
    for batch in plan:
        begin, end = end, end + len(batch)
        xb = xs[begin:end]
        out = forward(params, xb)
        value = mean_loss(out, ys[begin:end])
        if penalty is not None:
            value = value + penalty(out, xb)
        grads = torch.autograd.grad(value, tensors)
        if rule is None:
            plain_sgd_step(tensors, list(grads), lr, weight_decay)
        else:
            named = [(k, p.unsqueeze(0), g.unsqueeze(0)) for k, p, g in zip(names, tensors, grads)]
            rule.step(named, value.detach().view(1))
        total += value.item()
    local = {k: v.detach() for k, v in params.items()}
    if opt_state is not None and plan and rule is not None and rule.optimizer is not None:
        opt_state.clear()
        opt_state.update(rule.optimizer.client_state(0))
    extra = LocalResult() if rule is None else rule.extras(
        {k: v.unsqueeze(0) for k, v in local.items()}, [len(plan)])[0]
    return local, total / max(len(plan), 1), extra


def plain_sgd_step(params: list[torch.Tensor], grads: list[torch.Tensor], lr: float,
                   weight_decay: float) -> None:
    """One step of plain SGD in place: ``g += weight_decay * p; p -= lr * g``.

    This is ``torch.optim.SGD``'s step without momentum, dampening or Nesterov (and what
    :meth:`StepRule.descend` does for a job without a payload), on all tensors at once
    with foreach ops; ``grads`` are overwritten.
    """
    with torch.no_grad():
        if weight_decay:
            torch._foreach_add_(grads, params, alpha=weight_decay)
        torch._foreach_add_(params, grads, alpha=-lr)
