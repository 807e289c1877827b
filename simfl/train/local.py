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

The arithmetic of one step lives in :class:`StepRule`, on tensors with a leading client
axis, so the inline executor (one client, axis of length 1) and the batched executor
(all clients) run the very same code; only the inline executor's plain-SGD jobs take
:func:`plain_sgd_step`, the same arithmetic without the client axis.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from simfl.core.config import Dataset, Task
from simfl.core.errors import ConfigError
from simfl.core.records import (CVaRPayload, LocalPayload, LocalResult, ProxPayload,
                                ScaffoldPayload, ScaledSgdPayload, SgdPayload, TrainJob)
from simfl.core.rng import RngTree
from simfl.train.models import DenseNet, Params
from simfl.train.rules import RULES, LocalRule, column, per_client


def minibatch_plan(n_samples: int, task: Task, rng: np.random.Generator) -> list[np.ndarray]:
    """Indices (into the client's samples) of each local step's minibatch.

    Epochs: each epoch is a fresh permutation cut into batches of ``batch_size`` (the
    last may be smaller). Steps: ``local_steps`` batches of ``min(batch_size, n)`` taken
    from back-to-back permutations. The plan depends only on the client's stream, so
    every executor follows the same one. It is :func:`plan_order` cut at
    :func:`plan_sizes`.
    """
    order = plan_order(n_samples, task, rng)
    return np.split(order, np.cumsum(plan_sizes(n_samples, task))[:-1]) if len(order) else []


def plan_sizes(n_samples: int, task: Task) -> np.ndarray:
    """The batch size of each local step of a client with ``n_samples`` samples (int64,
    read-only): it depends on the sample count and the task only, not on the client's
    stream."""
    return _plan_sizes(int(n_samples), task.batch_size, task.local_epochs, task.local_steps)


@functools.lru_cache(maxsize=4096)
def _plan_sizes(n_samples: int, b: int, epochs: int, steps: int | None) -> np.ndarray:
    if n_samples == 0:
        sizes = np.zeros(0, dtype=np.int64)
    elif steps is None:
        epoch = [b] * (n_samples // b) + ([n_samples % b] if n_samples % b else [])
        sizes = np.tile(np.array(epoch, dtype=np.int64), epochs)
    else:
        sizes = np.full(steps, min(b, n_samples), dtype=np.int64)
    sizes.flags.writeable = False  # shared between calls
    return sizes


def plan_order(n_samples: int, task: Task, rng: np.random.Generator) -> np.ndarray:
    """The minibatches of a client's plan back to back: positions into its samples,
    ``plan_sizes(n_samples, task).sum()`` of them, in step order (one permutation per
    epoch, or as many back-to-back permutations as ``local_steps`` batches need)."""
    if n_samples == 0:
        return np.zeros(0, dtype=np.int64)
    if task.local_steps is None:
        n_perms = task.local_epochs
        used = n_perms * n_samples
    else:
        used = task.local_steps * min(task.batch_size, n_samples)
        n_perms = -(-used // n_samples)
    if n_perms == 1:
        return rng.permutation(n_samples)[:used]
    return np.concatenate([rng.permutation(n_samples) for _ in range(n_perms)])[:used]


def job_plan(job: TrainJob, n_samples: int, task: Task, rngs: RngTree) -> list[np.ndarray]:
    """The minibatch plan of ``job``, from the stream ``train/client/C/round/R``."""
    return minibatch_plan(n_samples, task, job_stream(job, rngs))


def job_stream(job: TrainJob, rngs: RngTree) -> np.random.Generator:
    """The stream a job's minibatch plan is drawn from: ``train/client/C/round/R``."""
    return rngs.stream(f"train/client/{job.client}/round/{job.round}")


def job_plans(jobs: Sequence[TrainJob], client_indices: Sequence[np.ndarray], task: Task,
              rngs: RngTree) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every job's plan at once, as global sample indices: ``(samples, sizes, n_steps)``.

    ``samples`` holds job 0's minibatches back to back, then job 1's, ...; ``sizes`` the
    batch sizes in the same order and ``n_steps[j]`` job j's number of steps. Job j's
    plan is ``client_indices[client][job_plan(...)]`` exactly (the same stream and draws,
    :func:`plan_order`); the gathers and the cutting are done once for all jobs.
    """
    orders, sizes = [], []
    for job in jobs:
        idx = client_indices[job.client]
        orders.append(idx[plan_order(len(idx), task, job_stream(job, rngs))])
        sizes.append(plan_sizes(len(idx), task))
    n_steps = np.array([len(s) for s in sizes], dtype=np.int64)
    if not orders:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), n_steps
    return (np.concatenate(orders).astype(np.int64, copy=False), np.concatenate(sizes),
            n_steps)


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
    try:
        return RULES[kind]
    except KeyError:
        raise ConfigError("server.algorithm.local_rule", getattr(kind, "kind", kind.__name__),
                          "a local rule with an implementation: register one with "
                          f"simfl.register({kind.__name__}, rule)") from None


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

    Attributes
    ----------
    lr
        The step size shared by every client (``lr`` times their common ``lr_scale``), or
        None when the payloads ask for different scales (then ``lr_k`` is used per client).
    """

    def __init__(self, payloads: Sequence[Any], start: Params, lr: float,
                 weight_decay: float) -> None:
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
        order = list(RULES)
        self.rules: list[tuple[type, LocalRule, Any]] = []
        for kind in sorted(kinds, key=lambda k: order.index(k) if k in order else len(order)):
            rule = local_rule(kind)
            state = rule.init([p if type(p) is kind else None for p in payloads], start)
            if state is not None:
                self.rules.append((kind, rule, state))
        self.terms = [(rule, state) for _, rule, state in self.rules if rule.adds_term]

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
        return not self.weight_decay and not self.terms and self.lr is not None

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
        if self.lr is None:
            p.sub_(g.mul_(per_client(self.lr_k[:k_t], p)))
        else:
            p.sub_(g, alpha=self.lr)

    def advance(self, losses: torch.Tensor) -> None:
        """The rules' own state after a step (CVaR's t) of the clients with ``losses``."""
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


#: an extra term of the local objective: (model outputs, minibatch inputs) -> scalar
Penalty = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def sgd(net: DenseNet, start: Params, x: torch.Tensor, y: torch.Tensor,
        plan: list[np.ndarray], lr: float, weight_decay: float, payload: Any = None,
        loss: LossFn | None = None, penalty: Penalty | None = None,
        ) -> tuple[Params, float, LocalResult]:
    """The local rule ``payload`` asks for (plain SGD without one), one client, from ``start``.

    ``penalty``, if given, is added to each minibatch's mean loss (e.g. distillation,
    :mod:`simfl.train.distill`). Returns the local model, the mean (unscaled) minibatch
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
    mean_loss = F.cross_entropy if loss is cross_entropy else lambda out, y: loss(out, y).mean()
    names = list(start)
    tensors = [start[k].detach().clone().requires_grad_(True) for k in names]
    params = dict(zip(names, tensors))
    payload = as_payload(payload)
    plain = payload is None or (type(payload) is SgdPayload and payload.lr_scale is None)
    rule = None if plain else StepRule(
        [payload], {k: v.detach().unsqueeze(0) for k, v in start.items()}, lr, weight_decay)
    total = 0.0
    if plan:
        idx = torch.from_numpy(np.concatenate(plan)).to(x.device)
        xs, ys = x[idx], y[idx]
    end = 0
    for batch in plan:
        begin, end = end, end + len(batch)
        xb = xs[begin:end]
        out = net.forward(params, xb)
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
