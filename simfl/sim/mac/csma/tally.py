"""DCF statistics of a round, by number of contenders: idle, successful and collision slots.

A slot here is Bianchi's: an idle slot, or a busy period (a success or a collision,
DIFS included). Each slot is counted under the number of stations contending when it
began; the channel time adds the idle slots' and the busy periods' durations, and the
throughput is the share of it that carried MPDU payload. Idle slots are counted in
bulk between the events that change the number of contenders.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from simfl.core.records import MacSlots
from simfl.sim.mac.csma.timing import DcfTiming


@dataclass
class _Counts:
    idle: int = 0
    successes: int = 0
    collisions: int = 0
    channel_s: float = 0.0
    payload_s: float = 0.0


class DcfTally:
    """Slots, by number of contenders, from idle index ``start`` on."""

    def __init__(self, timing: DcfTiming, start: int = 0) -> None:
        self.timing = timing
        self.counts: dict[int, _Counts] = {}
        self._changes: list[tuple[int, int]] = []  # heap of (idle index, change of n)
        self._counted = start  # idle slots before this index are counted
        self._n = 0  # contenders at idle index _counted (changes there not yet applied)

    def contenders(self, index: int, delta: int) -> None:
        """The number of contenders changes by ``delta`` from idle index ``index`` on."""
        heapq.heappush(self._changes, (max(index, self._counted), delta))

    def busy(self, index: int, success: bool, period_s: float, payload_bits: int) -> None:
        """A busy period of ``period_s`` (DIFS included) after the idle slots before ``index``."""
        self.count_to(index)
        self._apply(index)
        counts = self.counts.setdefault(self._n, _Counts())
        counts.channel_s += period_s
        if success:
            counts.successes += 1
            counts.payload_s += self.timing.payload_s(payload_bits)
        else:
            counts.collisions += 1

    def count_to(self, end: int) -> None:
        """Count the idle slots before idle index ``end``."""
        while self._counted < end:
            self._apply(self._counted)
            upto = min(end, self._changes[0][0]) if self._changes else end
            if self._n > 0:
                counts = self.counts.setdefault(self._n, _Counts())
                counts.idle += upto - self._counted
                counts.channel_s += (upto - self._counted) * self.timing.slot_s
            self._counted = upto

    def take(self, round: int, end: int) -> tuple[MacSlots, ...]:
        """The records of ``round`` up to idle index ``end``; starts afresh."""
        self.count_to(end)
        self._apply(end)
        counts, self.counts = self.counts, {}
        return tuple(
            MacSlots(round, n, c.idle + c.successes + c.collisions, c.successes,
                     idle_slots=c.idle, collision_slots=c.collisions, channel_s=c.channel_s,
                     throughput=c.payload_s / c.channel_s if c.channel_s > 0 else 0.0)
            for n, c in sorted(counts.items()) if n > 0)

    def _apply(self, index: int) -> None:
        while self._changes and self._changes[0][0] <= index:
            self._n += heapq.heappop(self._changes)[1]
