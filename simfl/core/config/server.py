"""The server: aggregation rule, client sampler, round deadline, step-size schedule, mode
and optimiser (the rules, modes and optimisers are in their own modules)."""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.compression import Compression, NoCompression
from simfl.core.config.node import (MAX_CLIENTS, Choice, Node, at_most, non_negative, positive,
                                    require)
from simfl.core.config.hierarchy import Hierarchy
from simfl.core.config.papers import MIFA
from simfl.core.config.aggregator import (CVaR, Aggregator, FedAR, FedAvg, FedAvgIS, FedAvgS,
                                          FedAvgSWait, FedLaAvg, FedProx, FedVARP, Mifa,
                                          Scaffold)
from simfl.core.config.policy import NoPolicy, Policy
from simfl.core.config.sampler import Sampler, Uniform, WaitGroup
from simfl.core.config.aircomp import AirComp
from simfl.core.config.server_mode import AsyncMode, BufferedMode, ServerMode, SyncMode
from simfl.core.config.server_optimizer import (FedAdagrad, FedAdam, FedAvgM, FedYogi,
                                                NoServerOptimizer, ServerOptimizer, ServerSgd)

__all__ = ["Aggregator", "AirComp", "AsyncMode", "BufferedMode", "CVaR", "ConstantLr", "ExponentialLr",
           "FedAR", "FedAdagrad", "FedAdam", "FedAvg", "FedAvgIS", "FedAvgM", "FedAvgS",
           "FedAvgSWait", "FedLaAvg", "FedProx", "FedVARP", "FedYogi", "InverseRoundLr",
           "LrSchedule", "Mifa", "NoServerOptimizer", "PolynomialLr", "Scaffold", "Server",
           "ServerMode", "ServerOptimizer", "ServerSgd", "SyncMode"]


@dataclass(frozen=True)
class LrSchedule(Choice, point="lr_schedules"):
    """How the local step size changes over rounds: round t trains with ``task.lr * scale(t)``.

    t counts the simulator's rounds from 0, every round (also one in which nothing is
    trained or the model is held, e.g. MIFA's wait-for-all rounds or ``fedavg_s_wait``'s
    waiting rounds: the papers' codes count training rounds only there). The scale
    multiplies the model's step size of every local rule (CVaR's ``lr_t`` is not
    scaled) and, for the aggregators whose server step is eta_g * eta_l (docs/algorithms.md
    §0.1: MIFA, FedAR, FedVARP, FedLaAvg), the server step of round t too.
    """

    def scale(self, round: int) -> float:
        """The factor of ``task.lr`` in ``round`` (t = 0, 1, ...)."""
        raise NotImplementedError


@dataclass(frozen=True)
class ConstantLr(LrSchedule):
    """The same step size every round: scale(t) = 1."""

    kind = "constant"

    def scale(self, round: int) -> float:
        return 1.0


@dataclass(frozen=True)
class InverseRoundLr(LrSchedule):
    """Harmonic decay eta_t = eta_0 / (t + 1): scale(t) = 1 / (t + 1)."""

    kind = "inverse_round"
    paper = f"{MIFA}: official code's schedule, docs/algorithms.md §1.2"

    def scale(self, round: int) -> float:
        return 1.0 / (round + 1)


@dataclass(frozen=True)
class ExponentialLr(LrSchedule):
    """Geometric decay eta_t = eta_0 gamma^t: scale(t) = gamma^t."""

    kind = "exponential"
    paper = ("Wang et al., FedGS: Federated Graph-based Sampling with Arbitrary Client "
             "Availability, AAAI 2023: code default gamma = 0.998, docs/algorithms.md §4.4")
    gamma: float = 0.998

    def validate(self) -> None:
        require(0.0 < self.gamma <= 1.0, "gamma", self.gamma, "a decay factor in (0, 1]")

    def scale(self, round: int) -> float:
        return self.gamma ** round


@dataclass(frozen=True)
class PolynomialLr(LrSchedule):
    """Polynomial decay to a floor, restarted every ``period_rounds`` rounds.

    With r = t mod P (P = ``period_rounds``) and floor f = ``floor_ratio``:
    scale(t) = (1 - f) (1 - r/P)^``power`` + f, so each period opens at 1 and its last
    round trains just above f. Set P to ``population.sessions.rounds_per_session`` to
    restart the decay at every session.
    """

    kind = "polynomial"
    paper = ("Chang et al., arXiv 2410.05662 (dynamic arrival/departure): the authors' "
             "code restarts a power-0.9 decay every session, docs/algorithms.md §3")
    period_rounds: int = 100
    power: float = 0.9
    floor_ratio: float = 0.0

    def validate(self) -> None:
        positive(self, "period_rounds")
        non_negative(self, "power")
        require(0.0 <= self.floor_ratio <= 1.0, "floor_ratio", self.floor_ratio,
                "a fraction of task.lr in [0, 1]")

    def scale(self, round: int) -> float:
        left = 1.0 - (round % self.period_rounds) / self.period_rounds
        return (1.0 - self.floor_ratio) * float(left ** self.power) + self.floor_ratio


@dataclass(frozen=True)
class Server(Node):
    """Synchronous rounds: invite, wait for the deadline or for every invitee, aggregate.

    ``overcommit`` invites ``ceil(overcommit * clients_per_round)`` clients and closes
    the round as soon as ``clients_per_round`` updates are in. A round with fewer than
    ``min_updates`` received updates is abandoned: nothing is trained or aggregated.
    ``lr_schedule`` scales the local step size round by round (:class:`LrSchedule`).

    ``mode`` (:class:`ServerMode`): ``sync`` is the above; ``async`` and ``buffered`` keep
    ``concurrency`` clients at work and apply updates as they arrive (no rounds: each
    client has ``deadline_s`` from its invitation; the model's versions replace rounds,
    and ``lr_schedule`` is read at the version a client was sent).
    ``optimizer`` transforms the aggregator's move before the server applies it
    (:class:`ServerOptimizer`; default ``none``). ``hierarchy`` puts edge servers
    between the clients and the server, which becomes the cloud (:class:`Hierarchy`;
    null: none).
    ``compression`` is what each client's update becomes on the uplink
    (:class:`~simfl.core.config.compression.Compression`; synchronous rounds only).
    ``policy`` decides, when a round opens, which of the sampler's picks are invited and
    their band shares, transmit powers and CPU clocks (:class:`~simfl.core.config.policy.
    Policy`; default ``none``; synchronous rounds without edge servers).
    """

    algorithm: Aggregator = FedAvg()
    sampler: Sampler = Uniform()
    clients_per_round: int = 10
    deadline_s: float = 60.0
    overcommit: float = 1.0
    mode: ServerMode = SyncMode()
    min_updates: int = 0
    lr_schedule: LrSchedule = ConstantLr()
    optimizer: ServerOptimizer = NoServerOptimizer()
    hierarchy: Hierarchy | None = None
    compression: Compression = NoCompression()
    policy: Policy = NoPolicy()

    def validate(self) -> None:
        positive(self, "clients_per_round", "deadline_s")
        at_most(self, MAX_CLIENTS, "clients_per_round")
        non_negative(self, "min_updates")
        require(self.min_updates <= self.clients_per_round, "min_updates", self.min_updates,
                f"at most clients_per_round = {self.clients_per_round} (a round never receives "
                "more updates than that, so no round would train)")
        require(self.overcommit >= 1.0, "overcommit", self.overcommit, "a number >= 1")
        require(self.overcommit * self.clients_per_round <= MAX_CLIENTS, "overcommit",
                self.overcommit, f"at most {MAX_CLIENTS:g} / clients_per_round = "
                f"{MAX_CLIENTS / self.clients_per_round:g} (invitations per round)")
        if isinstance(self.algorithm, FedAvgSWait):
            require(isinstance(self.sampler, WaitGroup), "sampler.kind", self.sampler.kind,
                    "wait_group: fedavg_s_wait averages the group that sampler keeps")
            require(self.min_updates == 0, "min_updates", self.min_updates,
                    "0 with fedavg_s_wait (an abandoned round would lose group members)")
        require(self.policy.kind == "none" or (self.mode.synchronous and self.hierarchy is None),
                "policy.kind", self.policy.kind, "none with mode "
                f"{self.mode.kind}{' and edge servers' if self.hierarchy else ''} (a policy "
                "decides the rounds of a synchronous server without edge servers)")
        if not self.mode.synchronous:
            self._validate_continuous()

    def _validate_continuous(self) -> None:
        """What the ``async`` and ``buffered`` modes work with (they have no rounds)."""
        mode = self.mode.kind
        require(self.algorithm.kind in ("fedavg", "fedprox"), "algorithm.kind",
                self.algorithm.kind, f"fedavg or fedprox with mode {mode} (the mode's rule "
                "replaces the aggregator; fedprox keeps its proximal local rule)")
        require(getattr(self.algorithm, "server_lr", 1.0) == 1.0, "algorithm.server_lr",
                getattr(self.algorithm, "server_lr", 1.0), f"1 with mode {mode} (the "
                "mode's own alpha or server_lr sets the server step)")
        require(self.sampler.kind in ("uniform", "longest_absent"), "sampler.kind",
                self.sampler.kind, f"uniform or longest_absent with mode {mode} (samplers "
                "that query clients or keep groups work in rounds)")
        require(self.overcommit == 1.0, "overcommit", self.overcommit,
                f"1 with mode {mode} (concurrency sets how many clients work at once)")
        require(self.min_updates == 0, "min_updates", self.min_updates,
                f"0 with mode {mode} (every arrival is applied or buffered)")
        require(self.optimizer.kind == "none", "optimizer.kind", self.optimizer.kind,
                f"none with mode {mode} (the mode's own rule makes the server step)")
        require(self.compression.kind == "none", "compression.kind", self.compression.kind,
                f"none with mode {mode} (compressed updates need synchronous rounds)")
