"""Slotted ALOHA's transmitters: each contender's next slot, and who transmits in the earliest.

A heap of (slot, client) entries finds the transmitters of the earliest busy slot
without scanning the population (stale entries, of clients that left or moved on, are
skipped). Under heavy contention a numpy scan over the round's contenders (or over every
client's next slot, contiguous in memory, while the contenders are a large share of the
population) replaces the heap. Both give the same transmitters.
"""

from __future__ import annotations

import heapq

import numpy as np

#: slot index of a client that is not contending
NEVER = np.iinfo(np.int64).max
#: under heavy contention, every client's next slot is scanned (contiguous memory) while
#: this many times the contenders outnumber the population, else only the contenders'
SCAN_ALL_RATIO = 4


def after(slot: int, gaps: np.ndarray) -> np.ndarray:
    """``slot + gaps``, saturating at NEVER (a gap beyond the int64 slot grid)."""
    slots: np.ndarray = slot + np.minimum(gaps, NEVER - slot)
    return slots


class NextSlots:
    """``slot[i]``: the slot client i next transmits in (NEVER: not contending)."""

    def __init__(self, n_clients: int) -> None:
        self.slot = np.full(n_clients, NEVER, dtype=np.int64)
        self._queue: list[tuple[int, int]] = []  # (next slot, client), stale ones included
        self._dense: np.ndarray | None = None  # under heavy contention: the contenders' ids
        self._joined: list[int] = []  # ... and those that joined since the last scan

    @property
    def dense(self) -> bool:
        return self._dense is not None

    def sparse(self) -> None:
        """Back to the heap (nobody contends between rounds)."""
        self._dense, self._joined = None, []

    def go_dense(self, contenders: np.ndarray) -> None:
        """Scan ``contenders`` (every client contending now) from now on."""
        self._dense, self._queue = contenders, []

    def transmit_in(self, client: int, slot: int) -> None:
        """``client`` (contending) next transmits in ``slot``; NEVER if it never does."""
        self.slot[client] = slot
        if slot == NEVER:
            return
        if self._dense is None:
            heapq.heappush(self._queue, (slot, client))
        else:
            self._joined.append(client)

    def first_busy(self) -> int:
        """The earliest slot a contender transmits in."""
        if self._dense is not None:  # and drop the contenders that are done
            dense = self._add_joined()
            if self._scan_all(dense):
                return int(self.slot.min())
            slots = self.slot[dense]
            self._dense = dense[slots != NEVER]
            return int(slots.min()) if slots.size else NEVER
        queue = self._queue
        while queue and self.slot[queue[0][1]] != queue[0][0]:
            heapq.heappop(queue)  # stale: that client has left or moved on
        return queue[0][0] if queue else NEVER

    def popped(self, slot: int) -> list[int]:
        """Sorted ids of the clients that transmit in ``slot``, taken off the heap."""
        queue, next_slot, tx = self._queue, self.slot, []
        while queue and queue[0][0] <= slot:  # entries of earlier slots are stale
            entry_slot, client = heapq.heappop(queue)
            if entry_slot == slot and next_slot[client] == slot:
                tx.append(client)
        return sorted(set(tx)) if len(tx) > 1 else tx

    def scanned(self, slot: int) -> np.ndarray:
        """Sorted ids of the clients that transmit in ``slot``, by a scan of the contenders."""
        dense = self._add_joined()
        if self._scan_all(dense):
            return np.flatnonzero(self.slot == slot)
        return np.sort(dense[self.slot[dense] == slot])

    def _scan_all(self, dense: np.ndarray) -> bool:
        """Whether a contiguous scan of every client beats indexing the contenders."""
        return dense.size * SCAN_ALL_RATIO >= len(self.slot)

    def _add_joined(self) -> np.ndarray:
        """The dense contender set, with the clients that joined since added."""
        assert self._dense is not None
        if self._joined:
            self._dense = np.concatenate([self._dense, np.array(self._joined, dtype=np.int64)])
            self._joined = []
        return self._dense
