"""Local training rules and the minibatch plan they follow.

Every local rule here is minibatch SGD from the model the client was sent, changed in
one of four ways, chosen by what the aggregator put in the job's payload
(``client_payload``); a job without a payload trains with plain ``sgd``:

``scaled_sgd``  ``{"loss_scale": s}``: the loss is multiplied by s (FedLaAvg's N n_i / n,
                ALGORITHMS.md §5 step 2); weight decay is not scaled.
``prox``        ``{"mu": mu}``: FedProx's proximal term (mu/2) ||w - w_t||^2 is added to
                the loss (Li et al., MLSys 2020, eq. 2), w_t being the start model.
``scaffold``    ``{"c": c, "c_i": c_i}`` (parameter dicts): each step uses the corrected
                gradient g - c_i + c; the update's ``extra["delta_c"]`` is
                c_i^+ - c_i = -c + (w_t - y) / (K lr), K the number of steps taken
                (Karimireddy et al., ICML 2020, Algorithm 1, option II; ALGORITHMS.md §1.6).
                A client that takes no step sends delta_c = 0.
``cvar``        ``{"cvar": {"t", "alpha", "lam", "lr_t"}}``: SGD on the pair (theta, t) for
                F(theta, t) = lam f + (1 - lam)(t + (f - t)_+ / alpha), f the minibatch-mean
                loss, with separate step sizes lr (theta) and lr_t (t); the subgradient at
                f = t takes the branch f <= t (ALGORITHMS.md §2). ``extra["t"]`` is the final t.

Any payload may also hold ``"lr_scale": s`` (the server's learning-rate schedule,
``server.lr_schedule``): the job then trains with step size ``lr * s`` throughout (every
term of the step, SCAFFOLD's K lr included), and its ``extra["lr_scale"]`` reports s, so
the server can normalise the update by the step size it was actually made with.

The arithmetic of one step lives in :class:`StepRule`, on tensors with a leading client
axis, so the inline executor (one client, axis of length 1) and the batched executor
(all clients) run the very same code; only the inline executor's jobs without a payload
take :func:`plain_sgd_step`, the same arithmetic without the client axis.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from simfl.core.config import Dataset, Task
from simfl.core.records import TrainJob
from simfl.core.rng import RngTree
from simfl.train.models import DenseNet, Params


def minibatch_plan(n_samples: int, task: Task, rng: np.random.Generator) -> list[np.ndarray]:
    """Indices (into the client's samples) of each local step's minibatch.

    Epochs: each epoch is a fresh permutation cut into batches of ``batch_size`` (the
    last may be smaller). Steps: ``local_steps`` batches of ``min(batch_size, n)`` taken
    from back-to-back permutations. The plan depends only on the client's stream, so
    every executor follows the same one.
    """
    if n_samples == 0:
        return []
    b = task.batch_size
    if task.local_steps is None:
        return [perm[i:i + b] for _ in range(task.local_epochs)
                for perm in [rng.permutation(n_samples)] for i in range(0, n_samples, b)]
    b = min(b, n_samples)
    n_perms = -(-task.local_steps * b // n_samples)
    stream = np.concatenate([rng.permutation(n_samples) for _ in range(n_perms)])
    return [stream[i * b:(i + 1) * b] for i in range(task.local_steps)]


def job_plan(job: TrainJob, n_samples: int, task: Task, rngs: RngTree) -> list[np.ndarray]:
    """The minibatch plan of ``job``, from the stream ``train/client/C/round/R``."""
    return minibatch_plan(n_samples, task, rngs.stream(f"train/client/{job.client}/round/{job.round}"))


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


def _column(values: Sequence[float], like: torch.Tensor) -> torch.Tensor:
    return torch.tensor(values, dtype=like.dtype, device=like.device)


class StepRule:
    """One local step of every rule, for K clients stacked along axis 0.

    Parameters
    ----------
    payloads
        The jobs' payloads, in stack order (see the module docstring for the keys).
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
        payloads = self.payloads = [p or {} for p in payloads]
        like = next(iter(start.values()))
        self.start, self.weight_decay = start, weight_decay
        self.lr_scale = [float(p.get("lr_scale", 1.0)) for p in payloads]
        self.step_sizes = [lr * s for s in self.lr_scale]
        shared = set(self.step_sizes) or {lr}
        self.lr = shared.pop() if len(shared) == 1 else None
        self.lr_k = _column(self.step_sizes, like)
        scale = [p.get("loss_scale", 1.0) for p in payloads]
        self.scale = _column(scale, like)
        self.unit_scale = all(s == 1.0 for s in scale)
        mu = [p.get("mu", 0.0) for p in payloads]
        self.mu = _column(mu, like) if any(mu) else None
        self.correction = self.control = None
        if any("c" in p for p in payloads):
            self.control = {name: torch.stack([p["c"][name].to(like) for p in payloads])
                            for name in start}
            self.correction = {name: self.control[name]
                               - torch.stack([p["c_i"][name].to(like) for p in payloads])
                               for name in start}
        self.cvar = None
        if any("cvar" in p for p in payloads):
            c = [p["cvar"] for p in payloads]
            self.cvar = {key: _column([float(v[key]) for v in c], like)
                         for key in ("t", "alpha", "lam", "lr_t")}

    def coefficients(self, losses: torch.Tensor) -> torch.Tensor | None:
        """Multiplier of each active client's loss gradient (``losses``: its K_t losses),
        or None when every multiplier is 1."""
        k_t = len(losses)
        if self.unit_scale and self.cvar is None:
            return None
        coef = self.scale[:k_t]
        if self.cvar is not None:
            lam, alpha, t = (self.cvar[key][:k_t] for key in ("lam", "alpha", "t"))
            coef = coef * torch.where(losses.detach() > t, lam + (1 - lam) / alpha, lam)
        return coef

    @property
    def gradient_only(self) -> bool:
        """True when a step is ``p -= lr * g`` (no weight decay, proximal term or
        correction), so a caller may fuse it into the matmul that makes g."""
        return (not self.weight_decay and self.mu is None and self.correction is None
                and self.lr is not None)

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
                    g.mul_(coef.view((len(coef),) + (1,) * (p.dim() - 1)))
                self.descend(name, p, g)
        self.advance(losses)

    def descend(self, name: str, p: torch.Tensor, g: torch.Tensor) -> None:
        """``p -= lr * (g + the rule's terms)`` in place, ``g`` being the gradient of the
        scaled loss for the active prefix ``p = stack[:K_t]``; ``g`` is overwritten.

        Every term is added in place: at 100 clients a stacked weight is 32 MB, and a fresh
        tensor per term cost more than the matmuls (measured). Call it under
        ``torch.no_grad()``.
        """
        k_t = len(p)
        if self.weight_decay:
            g.add_(p, alpha=self.weight_decay)
        if self.mu is not None:
            shape = (k_t,) + (1,) * (p.dim() - 1)
            g.addcmul_(self.mu[:k_t].view(shape), p - self.start[name][:k_t])
        if self.correction is not None:
            g.add_(self.correction[name][:k_t])
        if self.lr is None:
            p.sub_(g.mul_(self.lr_k[:k_t].view((k_t,) + (1,) * (p.dim() - 1))))
        else:
            p.sub_(g, alpha=self.lr)

    def advance(self, losses: torch.Tensor) -> None:
        """The rule's own state after a step (CVaR's t) of the clients with ``losses``."""
        if self.cvar is None:
            return
        k_t = len(losses)
        with torch.no_grad():
            lam, alpha, t, lr_t = (self.cvar[key][:k_t] for key in ("lam", "alpha", "t", "lr_t"))
            d_t = torch.where(losses.detach() > t, (1 - lam) * (1 - 1 / alpha), 1 - lam)
            self.cvar["t"][:k_t] = t - lr_t * d_t

    def extras(self, local: Params, n_steps: Sequence[int]) -> list[dict[str, Any]]:
        """Each client's ``ClientUpdate.extra`` after training (``local``: stacked results)."""
        out: list[dict[str, Any]] = [{} for _ in n_steps]
        if self.correction is not None:
            for k, steps in enumerate(n_steps):
                out[k]["delta_c"] = {
                    name: (torch.zeros_like(self.start[name][k]) if steps == 0 else
                           (self.start[name][k] - local[name][k]) / (steps * self.step_sizes[k])
                           - self.control[name][k])
                    for name in self.start}
        if self.cvar is not None:
            for k, value in enumerate(self.cvar["t"].tolist()):
                out[k]["t"] = value
        for k, (payload, scale) in enumerate(zip(self.payloads, self.lr_scale)):
            if "lr_scale" in payload:
                out[k]["lr_scale"] = scale
        return out


#: an extra term of the local objective: (model outputs, minibatch inputs) -> scalar
Penalty = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def sgd(net: DenseNet, start: Params, x: torch.Tensor, y: torch.Tensor,
        plan: list[np.ndarray], lr: float, weight_decay: float, payload: Any = None,
        loss: LossFn | None = None, penalty: Penalty | None = None,
        ) -> tuple[Params, float, dict[str, Any]]:
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
    rule = None if not payload else StepRule(
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
    extra = {} if rule is None else rule.extras({k: v.unsqueeze(0) for k, v in local.items()},
                                                [len(plan)])[0]
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
