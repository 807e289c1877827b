"""Immutable records of what happened in a simulated round."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Why an invited client's update did not reach the server in time.
#: ``offline``: not online when invited or went offline; ``erased``: every transfer
#: attempt was lost; ``late``: still in progress when the round closed; ``battery``:
#: the battery ran out; ``collided``: lost to MAC contention.
MISSING_REASONS = ("offline", "erased", "late", "battery", "collided")


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
    reason: str
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

    def n_missing(self, reason: str) -> int:
        return sum(1 for m in self.missing if m.reason == reason)

    def draws(self, client: int) -> int:
        """How many times ``client`` was drawn (1 unless the sampler drew it repeatedly)."""
        if not self.multiplicity:
            return 1
        return self.multiplicity[self.selected.index(client)]


@dataclass(frozen=True)
class TrainJob:
    """One client update to compute: train ``client`` from the model of ``base_round``."""

    client: int
    base_round: int
    round: int
    payload: Any = None


@dataclass(frozen=True)
class ClientUpdate:
    """The result of a TrainJob.

    ``delta`` maps parameter names to ``y_i - w_base`` (local model minus the model it
    started from); ``extra`` carries rule-specific results (e.g. control variates).
    """

    client: int
    base_round: int
    n_samples: int
    delta: Any
    train_loss: float = float("nan")
    extra: dict[str, Any] = field(default_factory=dict)
