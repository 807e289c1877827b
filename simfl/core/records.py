"""Immutable records of what happened in a simulated round.

The timing records of a round (:class:`RoundOutcome` and its arrivals and misses), the
event log's entries and the MAC's contention statistics live here. The local rules'
payloads and results (:mod:`simfl.core.payloads`) and the training jobs and client updates
(:mod:`simfl.core.jobs`) have their own modules and are importable from here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from simfl.core.air_slot import AirSlot
from simfl.core.jobs import ClientUpdate, SummedUpdates, TrainJob
from simfl.core.payloads import (CVaRPayload, CVaRResult, LocalPayload, LocalResult, ProxPayload,
                                 Record, ScaffoldPayload, ScaffoldResult, ScaledSgdPayload,
                                 SgdPayload, with_lr_scale)
from simfl.core.tiers import TierRecord

__all__ = [
    "MissingReason", "MISSING_REASONS", "EventKind", "MacSlots", "Event", "Arrival", "Missing",
    "RoundOutcome", "AirSlot",
    "Record", "LocalResult", "ScaffoldResult", "CVaRResult", "LocalPayload", "SgdPayload",
    "ScaledSgdPayload", "ProxPayload", "ScaffoldPayload", "CVaRPayload", "with_lr_scale",
    "TrainJob", "ClientUpdate", "SummedUpdates", "TierRecord",
]


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
    ``rounds.csv``, and ``n_truncated`` of ``aircomp.csv``; ``kind`` of ``events.csv``); a
    member compares equal to its value.
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
    #: sat out an analog slot (``aircomp``) in a deep fade, below the truncation threshold
    TRUNCATED = "truncated"


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
    BAND_REFUSED = "band_refused"
    BATTERY_DEAD = "battery_dead"
    ROUND_CLOSE = "round_close"


@dataclass(frozen=True)
class MacSlots:
    """Contention statistics of one round for one number of contenders (``mac.csv``).

    ``slots`` counts the slots of ``round`` during which exactly ``contenders`` devices
    were contending (whether or not any of them transmitted), ``successes`` the
    transmissions in those slots that got through (at most one per slot and data
    channel).

    Carrier-sense MACs (``csma_ca``) count Bianchi's slots instead: ``slots`` are idle
    slots plus busy periods (successes and collisions, DIFS included) that began while
    ``contenders`` stations contended, and they also fill the optional fields:
    ``idle_slots``, ``collision_slots``, ``channel_s`` (the slots' total duration) and
    ``throughput`` (the share of ``channel_s`` that carried MPDU payload). The other
    MACs leave them None (and ``mac.csv`` without their columns).
    """

    round: int
    contenders: int
    slots: int
    successes: int
    idle_slots: int | None = None
    collision_slots: int | None = None
    channel_s: float | None = None
    throughput: float | None = None

    def extra(self) -> tuple[int | float, ...]:
        """The optional fields' values for ``mac.csv`` (empty when they are None)."""
        if self.idle_slots is None:
            return ()
        return (self.idle_slots, self.collision_slots or 0, self.channel_s or 0.0,
                self.throughput or 0.0)


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
    with any other MAC. ``tier`` says what the edge and cloud tiers did in a round of
    hierarchical FL (None without edge servers). ``air`` is the round's analog slot
    (``aircomp``), else None.
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
    tier: TierRecord | None = None
    air: AirSlot | None = None

    def n_missing(self, reason: str) -> int:
        return sum(1 for m in self.missing if m.reason == reason)

    def draws(self, client: int) -> int:
        """How many times ``client`` was drawn (1 unless the sampler drew it repeatedly)."""
        if not self.multiplicity:
            return 1
        return self.multiplicity[self.selected.index(client)]
