"""Local optimisers (``task.optimizer``) and their per-step learning-rate schedules.

A client's local step is ``p -= lr_t * d``: ``d`` the optimiser's direction from the
gradient (weight decay and the local rule's terms included) and ``lr_t`` the step size
``task.lr`` times the round's scale (``server.lr_schedule``) times the step's scale
(``task.optimizer.schedule``). The arithmetic follows ``torch.optim.SGD``, ``Adam`` and
``AdamW`` (docs/local-training.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simfl.core.config.node import Choice, non_negative, positive, require

#: what happens to an optimiser's state (momentum, moments) between a client's rounds
STATE_POLICIES = ("reset", "per_client")


@dataclass(frozen=True)
class StepSchedule(Choice, point="step_schedules"):
    """How the step size changes over the local steps of one job: step t (from 0, every
    round afresh) trains with scale(t, total), ``total`` the job's number of steps.

    Every kind starts with a linear warm-up over ``warmup_steps`` steps (scale (t + 1) / w),
    then follows its own curve over the remaining steps.
    """

    warmup_steps: int = 0

    def validate(self) -> None:
        non_negative(self, "warmup_steps")

    def scale(self, t: int, total: int) -> float:
        """The factor of the step size at local step ``t`` of ``total``."""
        w = self.warmup_steps
        if t < w:
            return (t + 1) / w
        return self.decay(t - w, max(total - w, 1))

    def decay(self, t: int, total: int) -> float:
        """The curve after the warm-up: step t of ``total``."""
        return 1.0


@dataclass(frozen=True)
class ConstantStep(StepSchedule):
    """The same step size at every local step (after the warm-up, if any)."""

    kind = "constant"


@dataclass(frozen=True)
class WarmupStep(StepSchedule):
    """Linear warm-up over ``warmup_steps`` local steps, then constant."""

    kind = "warmup"
    warmup_steps: int = 10


@dataclass(frozen=True)
class StepDecay(StepSchedule):
    """Multiply the step size by ``gamma`` every ``every_steps`` local steps."""

    kind = "step"
    every_steps: int = 10
    gamma: float = 0.1

    def validate(self) -> None:
        super().validate()
        positive(self, "every_steps")
        require(0.0 < self.gamma <= 1.0, "gamma", self.gamma, "a decay factor in (0, 1]")

    def decay(self, t: int, total: int) -> float:
        return float(self.gamma ** (t // self.every_steps))


@dataclass(frozen=True)
class CosineStep(StepSchedule):
    """Cosine from 1 down to ``min_scale`` over the job's steps (after the warm-up)."""

    kind = "cosine"
    paper = ("Loshchilov, Hutter, SGDR: Stochastic Gradient Descent with Warm Restarts, "
             "ICLR 2017")
    min_scale: float = 0.0

    def validate(self) -> None:
        super().validate()
        require(0.0 <= self.min_scale <= 1.0, "min_scale", self.min_scale, "a number in [0, 1]")

    def decay(self, t: int, total: int) -> float:
        return self.min_scale + (1 - self.min_scale) * 0.5 * (1 + math.cos(math.pi * t / total))


def _beta(node: Choice, *names: str) -> None:
    for name in names:
        value = getattr(node, name)
        require(0.0 <= value < 1.0, name, value, "a number in [0, 1)")


@dataclass(frozen=True)
class LocalOptimizer(Choice, point="local_optimizers"):
    """The optimiser of every client's local steps.

    ``state = "reset"`` (the convention of federated learning) starts each job from a
    fresh state; ``"per_client"`` keeps each client's state from its last trained round
    (and puts it into checkpoints). ``schedule`` scales the step size step by step.
    """

    state: str = "reset"
    schedule: StepSchedule = ConstantStep()

    def validate(self) -> None:
        require(self.state in STATE_POLICIES, "state", self.state,
                " or ".join(STATE_POLICIES))

    @property
    def plain(self) -> bool:
        """True for plain SGD at a constant step: the step is ``p -= lr * g``."""
        return False


@dataclass(frozen=True)
class Sgd(LocalOptimizer):
    """SGD as torch.optim.SGD, with momentum, dampening and Nesterov (default: plain SGD).

    Momentum buffer b <- momentum b + (1 - dampening) g (b = g at a fresh state's first
    step); the direction is g + momentum b with ``nesterov``, else b.
    """

    kind = "sgd"
    momentum: float = 0.0
    dampening: float = 0.0
    nesterov: bool = False

    def validate(self) -> None:
        super().validate()
        _beta(self, "momentum")
        require(0.0 <= self.dampening <= 1.0, "dampening", self.dampening, "a number in [0, 1]")
        require(not self.nesterov or (self.momentum > 0 and self.dampening == 0), "nesterov",
                self.nesterov, "false unless momentum > 0 and dampening = 0")

    @property
    def plain(self) -> bool:
        return self.momentum == 0.0 and type(self.schedule) is ConstantStep and \
            self.schedule.warmup_steps == 0


@dataclass(frozen=True)
class Adam(LocalOptimizer):
    """Adam as torch.optim.Adam (task.weight_decay is added to the gradient)."""

    kind = "adam"
    paper = "Kingma, Ba, Adam: A Method for Stochastic Optimization, ICLR 2015"
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8

    def validate(self) -> None:
        super().validate()
        _beta(self, "beta1", "beta2")
        positive(self, "eps")


@dataclass(frozen=True)
class AdamW(Adam):
    """AdamW as torch.optim.AdamW: decoupled decay p <- p (1 - lr weight_decay) each step."""

    kind = "adamw"
    paper = "Loshchilov, Hutter, Decoupled Weight Decay Regularization, ICLR 2019"
    weight_decay: float = 0.01

    def validate(self) -> None:
        super().validate()
        require(0.0 <= self.weight_decay <= 1e3, "weight_decay", self.weight_decay,
                "a number in [0, 1000]")
