"""Server optimisers: what the server does with the aggregator's step (FedOpt).

Reddi et al., "Adaptive Federated Optimization", ICLR 2021, Algorithm 2, and Hsu et al.,
"Measuring the Effects of Non-Identical Data Distribution for Federated Visual
Classification", arXiv 1909.06335, 2019 (server momentum). docs/algorithms.md §11.

**Sign convention.** The aggregator turns the round's updates into new parameters
w_agg; the *pseudo-gradient* handed to a transform is

    Delta = w_agg - w_old

(a descent direction: FedAvg's mean client delta times its ``server_lr``), and the
transform returns a *step*; the server's new model is w_old + step. The identity
transform returns Delta itself, so the model is w_agg, as without an optimiser.

**Transforms** are pairs of pure functions over explicit state, in the manner of Optax:
``init(params) -> state`` and ``update(delta, state, params) -> (step, state)``.
``params``, ``delta`` and ``step`` are dicts of tensors with the model's names; a state
is a NamedTuple of such dicts (or of nothing), never mutated: ``update`` returns a new
one, so a state can be saved, restored or shared between loops (synchronous rounds, or
a server that steps on each buffer of arrivals). :func:`chain` composes transforms,
each feeding its output to the next. The building blocks:

* :func:`scale` (lr): step = lr * g.
* :func:`trace` (beta): m <- beta m + g, output m (heavy-ball momentum).
* :func:`scale_by_adam`, :func:`scale_by_yogi`, :func:`scale_by_adagrad`: the first
  moment m <- beta1 m + (1 - beta1) g and the second moment v (Adam: beta2 v +
  (1 - beta2) g^2; Yogi: v - (1 - beta2) g^2 sign(v - g^2); Adagrad: v + g^2), output
  m / (sqrt(v) + tau). m starts at 0, v at tau^2 (Algorithm 2's v_{-1} >= tau^2, at its
  smallest). No bias correction (Algorithm 2 has none).

and the named optimisers of ``server.optimizer``: :func:`sgd` = scale(lr), :func:`fedavgm`
= chain(trace(beta), scale(lr)), :func:`fedadam` = chain(scale_by_adam(...), scale(lr)),
likewise :func:`fedyogi` and :func:`fedadagrad`; :func:`identity` = chain().

Torch is imported by the functions that compute, not by this module, so importing it
(and building a transform) costs a timing-only run nothing.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

from simfl.core.config import server as cfg
from simfl.core.registry import implementation_of, implements

#: model parameters, a pseudo-gradient or a step: tensors by parameter name
Tensors = Mapping[str, Any]


class Transform(NamedTuple):
    """A server-side transform: ``init(params) -> state`` and
    ``update(delta, state, params) -> (step, state)``, both pure."""

    init: Callable[[Tensors], Any]
    update: Callable[[Tensors, Any, Tensors], tuple[dict[str, Any], Any]]


class EmptyState(NamedTuple):
    """The state of a stateless transform."""


class TraceState(NamedTuple):
    """Momentum buffer m of :func:`trace`."""

    m: dict[str, Any]


class MomentState(NamedTuple):
    """First moment m and second moment v of the adaptive transforms."""

    m: dict[str, Any]
    v: dict[str, Any]


def _zeros(params: Tensors) -> dict[str, Any]:
    import torch

    return {name: torch.zeros_like(value) for name, value in params.items()}


def _full(params: Tensors, value: float) -> dict[str, Any]:
    import torch

    return {name: torch.full_like(p, value) for name, p in params.items()}


def identity() -> Transform:
    """The step is the pseudo-gradient itself: the server keeps the aggregator's model."""
    return chain()


def scale(lr: float) -> Transform:
    """step = lr * g (stateless)."""

    def init(params: Tensors) -> EmptyState:
        return EmptyState()

    def update(g: Tensors, state: EmptyState, params: Tensors) -> tuple[dict[str, Any], Any]:
        return {name: value * lr for name, value in g.items()}, state

    return Transform(init, update)


def trace(beta: float) -> Transform:
    """Heavy-ball momentum: m <- beta m + g; the output is m."""

    def init(params: Tensors) -> TraceState:
        return TraceState(_zeros(params))

    def update(g: Tensors, state: TraceState, params: Tensors) -> tuple[dict[str, Any], Any]:
        m = {name: state.m[name] * beta + value for name, value in g.items()}
        return dict(m), TraceState(m)

    return Transform(init, update)


def _adaptive(beta1: float, tau: float,
              second: Callable[[Any, Any], Any]) -> Transform:
    """m <- beta1 m + (1 - beta1) g, v <- second(v, g), output m / (sqrt(v) + tau)."""

    def init(params: Tensors) -> MomentState:
        return MomentState(_zeros(params), _full(params, tau * tau))

    def update(g: Tensors, state: MomentState, params: Tensors) -> tuple[dict[str, Any], Any]:
        m = {name: state.m[name] * beta1 + value * (1.0 - beta1) for name, value in g.items()}
        v = {name: second(state.v[name], value) for name, value in g.items()}
        out = {name: m[name] / (v[name].sqrt() + tau) for name in g}
        return out, MomentState(m, v)

    return Transform(init, update)


def scale_by_adam(beta1: float, beta2: float, tau: float) -> Transform:
    """Adam's moments without bias correction: v <- beta2 v + (1 - beta2) g^2."""
    return _adaptive(beta1, tau, lambda v, g: v * beta2 + g * g * (1.0 - beta2))


def scale_by_yogi(beta1: float, beta2: float, tau: float) -> Transform:
    """Yogi's additive second moment: v <- v - (1 - beta2) g^2 sign(v - g^2)."""

    def second(v: Any, g: Any) -> Any:
        g2 = g * g
        return v - g2 * (v - g2).sign() * (1.0 - beta2)

    return _adaptive(beta1, tau, second)


def scale_by_adagrad(beta1: float, tau: float) -> Transform:
    """Adagrad's accumulated second moment: v <- v + g^2."""
    return _adaptive(beta1, tau, lambda v, g: v + g * g)


def chain(*transforms: Transform) -> Transform:
    """The transforms applied in turn, each to the previous one's output; the state is
    the tuple of their states. ``chain()`` is the identity."""

    def init(params: Tensors) -> tuple[Any, ...]:
        return tuple(t.init(params) for t in transforms)

    def update(g: Tensors, state: tuple[Any, ...],
               params: Tensors) -> tuple[dict[str, Any], Any]:
        if len(state) != len(transforms):
            raise ValueError(f"a chain of {len(transforms)} transforms got {len(state)} states")
        out, states = dict(g), []
        for t, s in zip(transforms, state):
            out, s = t.update(out, s, params)
            states.append(s)
        return out, tuple(states)

    return Transform(init, update)


def sgd(lr: float = 1.0) -> Transform:
    """Plain server step size: w <- w + lr * Delta."""
    return scale(lr)


def fedavgm(lr: float = 1.0, beta: float = 0.9) -> Transform:
    """Server momentum (Hsu et al. 2019): m <- beta m + Delta, w <- w + lr * m."""
    return chain(trace(beta), scale(lr))


def fedadam(lr: float, beta1: float, beta2: float, tau: float) -> Transform:
    """FedAdam (Reddi et al. 2021, Algorithm 2)."""
    return chain(scale_by_adam(beta1, beta2, tau), scale(lr))


def fedyogi(lr: float, beta1: float, beta2: float, tau: float) -> Transform:
    """FedYogi (Reddi et al. 2021, Algorithm 2)."""
    return chain(scale_by_yogi(beta1, beta2, tau), scale(lr))


def fedadagrad(lr: float, beta1: float, tau: float) -> Transform:
    """FedAdagrad (Reddi et al. 2021, Algorithm 2)."""
    return chain(scale_by_adagrad(beta1, tau), scale(lr))


def pseudo_gradient(old: Tensors, new: Tensors) -> dict[str, Any]:
    """Delta = new - old, by parameter name."""
    return {name: new[name] - value for name, value in old.items()}


def apply_step(params: Tensors, step: Tensors) -> dict[str, Any]:
    """params + step, by parameter name (new tensors; the inputs are left as they are)."""
    return {name: value + step[name] for name, value in params.items()}


def server_step(transform: Transform, state: Any, old: Tensors,
                new: Tensors) -> tuple[dict[str, Any], Any]:
    """The server's model after ``transform`` acts on the aggregator's move old -> new,
    and the transform's next state."""
    step, state = transform.update(pseudo_gradient(old, new), state, old)
    return apply_step(old, step), state


# each server optimiser config's transform, built as ``build(config)`` (None: the identity,
# nothing to apply); plug-ins add theirs with ``simfl.register(Config, build)``
for _config, _build in ((cfg.NoServerOptimizer, lambda c: None),
                        (cfg.ServerSgd, lambda c: None if c.lr == 1.0 else sgd(c.lr)),
                        (cfg.FedAvgM, lambda c: fedavgm(c.lr, c.beta)),
                        (cfg.FedAdam, lambda c: fedadam(c.lr, c.beta1, c.beta2, c.tau)),
                        (cfg.FedYogi, lambda c: fedyogi(c.lr, c.beta1, c.beta2, c.tau)),
                        (cfg.FedAdagrad, lambda c: fedadagrad(c.lr, c.beta1, c.tau))):
    implements(_config, _build)


def build_server_optimizer(config: cfg.ServerOptimizer) -> Transform | None:
    """The transform of ``server.optimizer``, or None when it is the identity (``none``,
    or ``sgd`` with lr = 1): the server then keeps the aggregator's model exactly."""
    transform: Transform | None = implementation_of(config, "server.optimizer.kind")(config)
    return transform
