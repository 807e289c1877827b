"""The access point's view of a DCF whose stations do not all hear each other.

With hidden terminals there is no one medium that every station sees; the round's
statistics (mac.csv) are the access point's. A busy period there is a run of frames and
answers that overlap (it starts when a frame starts at an idle access point and ends
when the last of them does); it is a success when one frame in it arrived intact. The
idle slots are the whole slots between the end of a busy period's DIFS and the next
frame; each busy period is counted with its DIFS, as in Bianchi's model.
"""

from __future__ import annotations

import math

from simfl.sim.mac.csma.dcf import GRID_EPS
from simfl.sim.mac.csma.tally import DcfTally


class ApPeriods:
    """Busy periods and idle slots at the access point, told to a :class:`DcfTally`."""

    def __init__(self, slot_s: float, difs_s: float, tally: DcfTally) -> None:
        self.slot_s, self.difs_s, self.tally = slot_s, difs_s, tally
        self.idle_count = 0  # idle slots before the period under way (or the last one)
        self.until_s = -math.inf  # the busy period under way ends then
        self._period: tuple[int, float] | None = None  # (idle index, start)
        self._payload_bits: int | None = None  # a success's payload, else None
        self._changes: list[tuple[int, int]] = []  # contenders' changes during the period

    def slot_index(self, now_s: float) -> int:
        """The idle index of the first slot boundary at or after ``now_s``."""
        resume_s = self.until_s + self.difs_s
        if now_s <= resume_s or resume_s == -math.inf:  # busy, or nobody has joined yet
            return self.idle_count
        return self.idle_count + math.ceil((now_s - resume_s) / self.slot_s - GRID_EPS)

    def contenders(self, now_s: float, delta: int) -> None:
        """The number of contenders changes by ``delta`` at ``now_s`` (during a busy period:
        after it, which is counted with the contenders it began with)."""
        if self._period is not None and now_s < self.until_s + self.difs_s:
            self._changes.append((self._period[0], delta))
        else:
            self.tally.contenders(self.slot_index(now_s), delta)

    def wake(self, now_s: float) -> None:
        """A station joins at ``now_s`` with nobody contending: past an idle access point,
        idle slots start after DIFS from now."""
        if now_s >= self.until_s + self.difs_s:
            self.flush()
            self.until_s = now_s

    def busy(self, t: float, until_s: float) -> None:
        """A frame starts at ``t``; the access point is busy with it until ``until_s``."""
        if t >= self.until_s:
            self.flush()
            resume_s = self.until_s + self.difs_s
            if t > resume_s:
                self.idle_count += math.floor((t - resume_s) / self.slot_s + GRID_EPS)
            self._period = (self.idle_count, t)
        self.extend(until_s)

    def extend(self, until_s: float) -> None:
        """The period under way lasts at least until ``until_s`` (an answer)."""
        self.until_s = max(self.until_s, until_s)

    def success(self, payload_bits: int) -> None:
        """A frame of the period under way arrived intact."""
        self._payload_bits = payload_bits

    def flush(self) -> None:
        """Count the period under way (it has ended, or the round's statistics close)."""
        period, self._period = self._period, None
        if period is not None:
            bits, self._payload_bits = self._payload_bits, None
            self.tally.busy(period[0], bits is not None,
                            self.until_s + self.difs_s - period[1], bits or 0)
        for index, delta in self._changes:
            self.tally.contenders(index, delta)
        self._changes.clear()
