"""Slotted ALOHA's statistics: how many slots a round had with n contenders, and their successes.

The number of contenders changes when a client joins (from its first slot on) and when
one leaves (granted, given up, or taken out at the close); :class:`SlotTally` keeps
those changes by slot and accounts every slot once, the busy ones as they are settled
and the idle ones in between in bulk, so idle slots cost nothing.
"""

from __future__ import annotations

import heapq

from simfl.core.records import MacSlots


class SlotTally:
    """Slots with n contenders and their successes, of the round open now."""

    def __init__(self) -> None:
        #: number of contenders n -> [slots with n contenders, successes in them]
        self.slot_stats: dict[int, list[int]] = {}
        self._changes: dict[int, int] = {}  # slot -> change of the number of contenders
        self._change_slots: list[int] = []  # heap of the keys of _changes
        self._counted = 0  # slots before this one are accounted in slot_stats
        self._n = 0  # contenders from slot _counted on (before its changes)

    def change(self, slot: int, delta: int) -> None:
        """The number of contenders changes by ``delta`` from ``slot`` on."""
        if slot not in self._changes:
            self._changes[slot] = 0
            heapq.heappush(self._change_slots, slot)
        self._changes[slot] += delta

    def done(self, n_clients: int) -> None:
        """``n_clients`` stopped contending at the slot being settled (no slot change)."""
        self._n -= n_clients

    def busy(self, slot: int, wins: int) -> None:
        """Account the idle slots before ``slot``, then ``slot`` with its ``wins``."""
        self.count_to(slot)
        self._apply_changes(slot)
        stats = self.slot_stats.setdefault(self._n, [0, 0])
        stats[0] += 1
        stats[1] += wins
        self._counted = slot + 1

    def count_to(self, end: int) -> None:
        """Account the slots [counted, end) as slots in which nobody transmitted."""
        while self._counted < end:
            self._apply_changes(self._counted)
            upto = min(end, self._change_slots[0]) if self._change_slots else end
            if self._n:
                self.slot_stats.setdefault(self._n, [0, 0])[0] += upto - self._counted
            self._counted = upto

    def take(self, round: int, end: int) -> tuple[MacSlots, ...]:
        """The records of ``round``, whose slots end before ``end``; starts afresh."""
        self.count_to(end)
        stats, self.slot_stats = self.slot_stats, {}
        return tuple(MacSlots(round, n, slots, wins) for n, (slots, wins) in sorted(stats.items()))

    def _apply_changes(self, slot: int) -> None:
        while self._change_slots and self._change_slots[0] <= slot:
            self._n += self._changes.pop(heapq.heappop(self._change_slots))
