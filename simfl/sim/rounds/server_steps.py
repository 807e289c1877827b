"""What the asynchronous server modes report: the updates applied at a step, and the
step itself (what happened between two server versions; one row of ``rounds.csv``).

Every invitation has a number, its *job*: the device process gets it in place of a
round (so its channel draws, ``channel/<direction>/<client>/round/<job>``, and its
event records' ``round`` column are the job's), and the training side names the job's
minibatch stream with it. Per-round availability models are asked with the number of
the look (each look at the pool draws afresh).

The server's model has versions 0, 1, 2, ...; a job is sent the version current when
it is invited. Every ``buffer_size``-th arrival is a *step* (``buffer_size`` 1: every
arrival, FedAsync; K: FedBuff) that makes the next version. Versions are counted here
because they depend on arrivals alone, never on the model: the timing is decided
first, and the training side computes each step's arrivals from the versions they
were sent (:meth:`~simfl.sim.continuous.ContinuousServer.needed_versions` says which it must keep).

The MAC is one that claims the asynchronous modes (``async_modes`` in its capabilities:
the ideal one, or slotted ALOHA, whose contention is open for the whole run: one random
stream, ``mac/aloha/round/0``, and the per-event model whatever ``contention`` says:
the cohort model needs rounds). Each step reports the slots that
ended in its interval (``mac.csv``, with the step's version in the ``round`` column).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simfl.core.config.mac import kinds_that
from simfl.core.records import MacSlots, Missing
from simfl.sim.mac.protocol import MediumAccess

__all__ = ["Step", "Update", "merged_slots", "open_contention", "slots_since"]


@dataclass(frozen=True)
class Update:
    """An arrival, applied at a step: ``client``'s ``job``, trained from ``base_version``,
    landed at ``t_s`` while ``applied_version`` was the server's model."""

    client: int
    job: int
    base_version: int
    applied_version: int
    t_s: float
    n_samples: int

    @property
    def staleness(self) -> int:
        """tau: versions made between the one the client was sent and the one it meets."""
        return self.applied_version - self.base_version


@dataclass(frozen=True)
class Step:
    """What happened between two server versions (one row of ``rounds.csv``).

    ``version`` is the version the step's updates were applied to (the step makes
    ``version + 1``); ``stepped`` is False for the last row of a run that ended between
    steps (horizon, stall or the end of the run), whose ``updates`` are empty.
    ``invited`` lists the invitations sent in the interval (a client twice if invited
    twice), ``missing`` the jobs that failed in it, ``n_available`` the clients free and
    online at the interval's last look, ``mac_slots`` the contention statistics of the
    slots that ended in the interval (None: the MAC resolves no contention).
    """

    version: int
    t_open_s: float
    t_close_s: float
    n_available: int
    invited: tuple[int, ...]
    updates: tuple[Update, ...]
    missing: tuple[Missing, ...]
    retries: int
    energy_j: float
    stepped: bool = True
    mac_slots: tuple[MacSlots, ...] | None = None

    def with_tail(self, tail: "Step") -> "Step":
        """This step with ``tail``'s failures, retries and energy (the run ends at its close)."""
        return Step(self.version, self.t_open_s, max(self.t_close_s, tail.t_close_s),
                    self.n_available, self.invited + tail.invited, self.updates,
                    self.missing + tail.missing, self.retries + tail.retries,
                    self.energy_j + tail.energy_j, self.stepped,
                    merged_slots(self.version, self.mac_slots, tail.mac_slots))


def merged_slots(version: int, *parts: tuple[MacSlots, ...] | None
                 ) -> tuple[MacSlots, ...] | None:
    """The slot statistics of ``parts`` added up per number of contenders, as ``version``'s
    (None when every part is None)."""
    if all(part is None for part in parts):
        return None
    totals: dict[int, list[int]] = {}
    for record in (r for part in parts for r in part or ()):
        total = totals.setdefault(record.contenders, [0, 0])
        total[0] += record.slots
        total[1] += record.successes
    return tuple(MacSlots(version, n, slots, successes)
                 for n, (slots, successes) in sorted(totals.items()))


def open_contention(mac: MediumAccess) -> None:
    """Open ``mac``'s contention for the whole run (a MAC that claims the asynchronous
    modes)."""
    if not mac.capabilities.async_modes:
        raise ValueError(f"the asynchronous modes need the {kinds_that('async_modes')} MAC")
    mac.open_round(0, np.empty(0, dtype=np.int64))


def slots_since(mac: MediumAccess, version: int) -> tuple[MacSlots, ...] | None:
    """``mac``'s slot statistics since the last call, as ``version``'s."""
    return merged_slots(version, mac.close_round())
