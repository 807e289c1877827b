"""Immutable records of what happened in a simulated round."""

from __future__ import annotations

import dataclasses
from collections.abc import KeysView, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Iterator

from simfl.core.registry import Registry, registry


class _Named(str, Enum):
    """A string-valued enum whose members print as their value (``enum.StrEnum`` is
    Python 3.11+; simfl supports 3.10)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class MissingReason(_Named):
    """Why an invited client's update did not reach the server in time.

    The values are the strings written to the tables (``n_<reason>`` columns of
    ``rounds.csv``, ``kind`` of ``events.csv``); a member compares equal to its value.
    """

    #: not online when invited, or went offline during the round
    OFFLINE = "offline"
    #: every transfer attempt was lost
    ERASED = "erased"
    #: still in progress when the round closed
    LATE = "late"
    #: the battery ran out
    BATTERY = "battery"
    #: lost to MAC contention (retry limit, relay drop, or still contending at the close)
    COLLIDED = "collided"


#: the reasons' values, in table order
MISSING_REASONS = tuple(reason.value for reason in MissingReason)


class EventKind(_Named):
    """Kinds of the simulator's event records (``kind`` of ``events.csv``).

    Besides these, a failure is logged under its :class:`MissingReason`, and a
    sampler's query exchange under ``<stream>_open``, ``<stream>_answered``,
    ``<stream>_lost`` and ``<stream>_close`` (the stream names the exchange).
    """

    ROUND_OPEN = "round_open"
    INVITED = "invited"
    COMPUTED = "computed"
    ATTEMPT_LOST = "attempt_lost"
    ARRIVED = "arrived"
    LATE = "late"
    MAC_SLOTS = "mac_slots"
    BATTERY_DEAD = "battery_dead"
    ROUND_CLOSE = "round_close"


@dataclass(frozen=True)
class MacSlots:
    """Slotted-ALOHA statistics of one round for one number of contenders (``mac.csv``).

    ``slots`` counts the slots of ``round`` during which exactly ``contenders`` devices
    were contending (whether or not any of them transmitted), ``successes`` the
    transmissions in those slots that got through (at most one per slot and data
    channel).
    """

    round: int
    contenders: int
    slots: int
    successes: int


@dataclass(frozen=True)
class Event:
    """One entry of the event log (``events.csv``)."""

    t_s: float
    kind: str
    round: int
    client: int = -1
    detail: str = ""


@dataclass(frozen=True)
class Arrival:
    """An update that reached the server: before its round closed, or late (see
    ``RoundOutcome.late_received``).

    ``base_round`` is the round of the global model it was computed from.
    """

    client: int
    base_round: int
    t_s: float
    n_samples: int


@dataclass(frozen=True)
class Missing:
    """An invited client whose update was not received, and why."""

    client: int
    reason: MissingReason
    t_s: float


@dataclass(frozen=True)
class RoundOutcome:
    """The timing decision of one round: who was invited, who arrived, who was missed.

    ``multiplicity`` (aligned with ``selected``, empty meaning all 1) says how many
    times a sampler that draws with replacement (``md``) drew each invitee; every
    invitee is still invited once and ends in exactly one outcome.

    ``late_received`` holds the uploads that landed during this round (after the
    previous round closed, by this one's close) from devices that an earlier round
    recorded ``late``, each with the ``base_round`` it was invited in. It is empty unless
    the aggregator asked for late uploads (FedAR ``late_policy = "store"``); those
    uploads are never part of ``received``.

    ``mac_slots`` holds the round's contention statistics, one record per number of
    contenders (ascending), when the MAC resolves contention (slotted ALOHA); None
    with any other MAC.
    """

    round: int
    t_open_s: float
    t_deadline_s: float
    t_close_s: float
    n_available: int
    selected: tuple[int, ...]
    received: tuple[Arrival, ...]
    missing: tuple[Missing, ...]
    retries: int = 0
    energy_j: float = 0.0
    multiplicity: tuple[int, ...] = ()
    late_received: tuple[Arrival, ...] = ()
    mac_slots: tuple[MacSlots, ...] | None = None

    def n_missing(self, reason: str) -> int:
        return sum(1 for m in self.missing if m.reason == reason)

    def draws(self, client: int) -> int:
        """How many times ``client`` was drawn (1 unless the sampler drew it repeatedly)."""
        if not self.multiplicity:
            return 1
        return self.multiplicity[self.selected.index(client)]


class Record(Mapping[str, Any]):
    """A frozen record that also reads as a mapping of its fields that are set (not None).

    The mapping view keeps code written against plain dicts working (``update.extra["t"]``,
    ``{**payload}``); new code reads the attributes.
    """

    def keys(self) -> KeysView[str]:
        return {f.name: None for f in dataclasses.fields(self)  # type: ignore[arg-type]
                if getattr(self, f.name) is not None}.keys()

    def __getitem__(self, key: str) -> Any:
        if key not in self.keys():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def __eq__(self, other: object) -> bool:
        """Field by field with a record of the same class; as a mapping with a plain one."""
        if isinstance(other, Record):
            return type(other) is type(self) and all(
                getattr(self, f.name) == getattr(other, f.name)
                for f in dataclasses.fields(self))  # type: ignore[arg-type]
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


# ---------------------------------------------------------------------------------
# Local rules: what the server sends a client with its model, and what comes back.


@dataclass(frozen=True, eq=False, kw_only=True)
class LocalResult(Record):
    """What a local rule reports besides the model delta (``ClientUpdate.extra``).

    ``lr_scale`` is the factor of ``task.lr`` the job trained with, set only when the
    payload asked for one (the server's learning-rate schedule), so the server can
    normalise the update by the step size it was made with.
    """

    lr_scale: float | None = None


@dataclass(frozen=True, eq=False)
class ScaffoldResult(LocalResult):
    """SCAFFOLD's control-variate change c_i^+ - c_i, a dict like the parameters."""

    delta_c: Any = None


@dataclass(frozen=True, eq=False)
class CVaRResult(LocalResult):
    """The client's VaR level t after local training."""

    t: float = 0.0


@dataclass(frozen=True, eq=False, kw_only=True)
class LocalPayload(Record):
    """What an aggregator sends a client for its local rule (``client_payload``).

    Each local rule has one payload class, which registers the rule's name: a subclass
    with a ``kind`` class attribute (and ``result``, the class of what the rule reports)
    is listed by ``simfl list local_rules``. ``lr_scale`` (set by the server's
    learning-rate schedule, any rule) multiplies ``task.lr`` for the whole job.
    """

    kind: ClassVar[str]
    paper: ClassVar[str] = ""
    result: ClassVar[type[LocalResult]] = LocalResult
    _registry: ClassVar[Registry[Any]] = registry("local_rules")

    lr_scale: float | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
            cls._registry.add(cls.kind, cls, summary, cls.paper)


@dataclass(frozen=True, eq=False)
class SgdPayload(LocalPayload):
    """Plain minibatch SGD from the model the client was sent (no payload needed)."""

    kind = "sgd"


@dataclass(frozen=True, eq=False)
class ScaledSgdPayload(LocalPayload):
    """SGD on the loss multiplied by ``loss_scale`` (weight decay is not scaled)."""

    kind = "scaled_sgd"
    paper = ("Yan et al., FedLaAvg, INFORMS J. Computing (arXiv 2002.07399): loss scaled by "
             "N n_i / n")
    loss_scale: float = 1.0


@dataclass(frozen=True, eq=False)
class ProxPayload(LocalPayload):
    """SGD on the loss plus the proximal term (mu/2) ||w - w_t||^2, w_t the start model."""

    kind = "prox"
    paper = "Li et al., FedProx, MLSys 2020, eq. 2"
    mu: float = 0.0


@dataclass(frozen=True, eq=False)
class ScaffoldPayload(LocalPayload):
    """Corrected SGD y -= lr (g - c_i + c); reports delta_c = c_i^+ - c_i (option II)."""

    kind = "scaffold"
    paper = "Karimireddy et al., SCAFFOLD, ICML 2020, Algorithm 1 (option II)"
    result = ScaffoldResult
    c: Any = None
    c_i: Any = None


@dataclass(frozen=True, eq=False)
class CVaRPayload(LocalPayload):
    """SGD on (model, t) of lam f + (1 - lam)(t + (f - t)_+ / alpha); reports the final t."""

    kind = "cvar"
    paper = "Theodoropoulos et al., arXiv 2309.14176 (risk-aware CVaR objective)"
    result = CVaRResult
    t: float = 0.0
    alpha: float = 1.0
    lam: float = 1.0
    lr_t: float = 0.0


def with_lr_scale(payload: Any, scale: float) -> Any:
    """``payload`` (None meaning plain SGD) asking for ``scale`` times ``task.lr``."""
    if payload is None:
        return SgdPayload(lr_scale=scale)
    if isinstance(payload, LocalPayload):
        return dataclasses.replace(payload, lr_scale=scale)
    return {**payload, "lr_scale": scale}  # a plain-dict payload


@dataclass(frozen=True)
class TrainJob:
    """One client update to compute: train ``client`` from the model of ``base_round``.

    ``payload`` is the aggregator's :class:`LocalPayload` (None: plain SGD).
    """

    client: int
    base_round: int
    round: int
    payload: Any = None


@dataclass(frozen=True)
class ClientUpdate:
    """The result of a TrainJob.

    ``delta`` maps parameter names to ``y_i - w_base`` (local model minus the model it
    started from); ``extra`` is the local rule's :class:`LocalResult` (e.g. SCAFFOLD's
    control-variate change), or any mapping with the same keys.
    """

    client: int
    base_round: int
    n_samples: int
    delta: Any
    train_loss: float = float("nan")
    extra: Mapping[str, Any] = field(default_factory=LocalResult)


class SummedUpdates(list["ClientUpdate"]):
    """The updates of a submission whose deltas were summed as they were made.

    A list of :class:`ClientUpdate` in job order, each with its client, base round,
    sample count, loss and extras but an empty ``delta``, plus

    * ``weighted_sum``: ``{name: sum_k weights[k] * delta_k[name]}``, the deltas being
      the ones the executor would otherwise have returned;
    * ``weights``: each update's weight (from the aggregator's ``weigh``), in list order;
    * ``n_summed``: how many deltas went into the sum (the executor's own count).

    Summing as they are made saves writing K fresh delta tensors per round; an
    aggregator whose step reads only this sum (``needs = "sum"``, e.g. FedAvg) asks
    for it.
    """

    def __init__(self, updates: Sequence[ClientUpdate], weighted_sum: dict[str, Any],
                 weights: Sequence[float], n_summed: int | None = None) -> None:
        super().__init__(updates)
        self.weighted_sum = weighted_sum
        self.weights = [float(w) for w in weights]
        self.n_summed = len(self.weights) if n_summed is None else n_summed

    def __getitem__(self, item: Any) -> Any:
        """An update, or for a slice the records and weights it selects with the same sum
        and ``n_summed`` (taking records out does not take their deltas out of the sum)."""
        if isinstance(item, slice):
            return SummedUpdates(list.__getitem__(self, item), self.weighted_sum,
                                 self.weights[item], self.n_summed)
        return list.__getitem__(self, item)
