"""The slot-level IEEE 802.11 DCF, one busy period at a time, off any clock.

Idle slots are never stepped through. The medium keeps a count of idle slots; a
station's backoff is kept as the idle-slot index at which it transmits (``target``), so
a counter that freezes while the medium is busy needs no update: only idle slots move
the count. The next transmission comes at the smallest target (a heap), after
``target - count`` idle slots; every station whose target it is transmits then. So the
cost is one heap step per transmission, whatever the number of idle slots or stations.

A busy period is settled in two steps: :meth:`Dcf.start_busy` when its frames start
(who transmits, success or collision, how long) and :meth:`Dcf.end_busy` when the
exchange ends (the winner's MPDU acknowledged; new backoffs drawn; stations done or
dropped). The SimPy MAC (:mod:`simfl.sim.mac.csma.access`) calls them on the clock; a
saturation test may call them back to back.
"""

from __future__ import annotations

import heapq
import math
from typing import NamedTuple

from simfl.core.config.csma import CsmaCaMac
from simfl.core.errors import SimflError
from simfl.sim.mac.csma.backoff import Backoffs, Draws, contention_windows
from simfl.sim.mac.csma.tally import DcfTally
from simfl.sim.mac.csma.timing import DcfTiming

#: tolerance (in slots) when mapping a time onto the idle-slot grid
GRID_EPS = 1e-9
#: frame exchanges in a row that may fail (collide, or be lost to a hidden station)
#: before the contention is taken for one that cannot end: the run stops with one line
MAX_FAILED_IN_A_ROW = 100_000


def check_progress(cfg: CsmaCaMac, failed_in_a_row: int) -> None:
    """Stop a contention that has failed :data:`MAX_FAILED_IN_A_ROW` times in a row
    without a retry limit (with one, every MPDU is sent or dropped after a few tries)."""
    if failed_in_a_row >= MAX_FAILED_IN_A_ROW and cfg.retry_limit is None:
        raise SimflError(f"network.mac: {failed_in_a_row} frame exchanges in a row failed "
                         "without one success: the contention cannot end (widen cw_max, "
                         "set retry_limit, or let more stations sense each other)")


class Busy(NamedTuple):
    """One busy period: its start, transmitters (sorted), outcome and durations."""

    t_s: float
    stations: tuple[int, ...]
    success: bool
    busy_s: float  # frames until the exchange ends (the ACK is in); DIFS follows
    sent_s: tuple[float, ...]  # each transmitter's seconds of sending
    joins: tuple[int, ...]  # each transmitter's join number (a station may leave and rejoin)


class Ended(NamedTuple):
    """What the end of a busy period settled: stations whose upload is done or dropped."""

    done: tuple[int, ...]
    dropped: tuple[int, ...]


class Dcf:
    """The DCF of one uplink: contending stations, their backoff and MPDUs.

    ``rng`` draws the backoffs; ``timing`` gives the frames' durations. A station joins
    with its number of MPDUs and the payload bits of its last one (the others carry
    ``cfg.mpdu_payload_bytes``).
    """

    def __init__(self, cfg: CsmaCaMac, timing: DcfTiming, rng: Draws) -> None:
        self.cfg, self.timing, self.rng = cfg, timing, rng
        self.full_bits = 8 * cfg.mpdu_payload_bytes
        self.tally = DcfTally(timing)
        self.idle_count = 0  # idle slots elapsed up to t0_s
        self.t0_s = -math.inf  # when idle slots resume (after a busy period's DIFS)
        self.target: dict[int, int] = {}  # contending station -> idle index it sends at
        self.left: dict[int, int] = {}  # MPDUs left (the one being sent included)
        self.last_bits: dict[int, int] = {}
        self.retries: dict[int, int] = {}  # collisions of the current MPDU
        self.joined: dict[int, int] = {}  # station -> its join number
        self._joins = 0
        self._heap: list[tuple[int, int]] = []  # (target, station); stale entries skipped
        self.busy: Busy | None = None
        self.failed_in_a_row = 0  # collisions since the last success (a livelock guard)
        #: contention window by collisions of the MPDU (the last one for all beyond)
        self._windows = contention_windows(cfg.cw_min, cfg.cw_max)
        self._frames: dict[int, tuple[float, float, float, float]] = {}  # by payload bits

    @property
    def rng(self) -> Draws:
        """The generator of the backoffs (a new one starts a fresh block of draws)."""
        return self._backoffs.rng

    @rng.setter
    def rng(self, rng: Draws) -> None:
        self._backoffs = Backoffs(rng)

    # ---- stations

    def join(self, station: int, now_s: float, n_mpdus: int, last_bits: int) -> None:
        """``station`` starts contending at ``now_s`` with ``n_mpdus`` to send."""
        if now_s >= self.t0_s and not self.target and self.busy is None:
            self.t0_s = now_s + self.cfg.difs_s  # an idle, empty medium: sense DIFS
        start = self.slot_index(now_s)
        self.tally.contenders(start, +1)
        self.left[station], self.last_bits[station] = n_mpdus, last_bits
        self.retries[station] = 0
        self._joins += 1
        self.joined[station] = self._joins
        self._backoff(station, start)

    def leave(self, station: int, now_s: float) -> bool:
        """Take ``station`` out (its upload is abandoned); True if it was contending."""
        if station not in self.left:
            return False
        self._forget(station)
        self.tally.contenders(self.slot_index(now_s), -1)
        return True

    def counter(self, station: int, now_s: float) -> int:
        """Backoff slots ``station`` still has to count at ``now_s``."""
        return self.target[station] - self.slot_index(now_s)

    def slot_index(self, now_s: float) -> int:
        """The idle index of the first slot boundary at or after ``now_s``."""
        if now_s <= self.t0_s or self.busy is not None or self.t0_s == -math.inf:
            return self.idle_count  # busy, or no station has contended yet
        return self.idle_count + math.ceil((now_s - self.t0_s) / self.timing.slot_s - GRID_EPS)

    # ---- the medium

    def next_start_s(self) -> float | None:
        """When the next busy period starts (None: nobody contends)."""
        heap = self._heap
        while heap and self.target.get(heap[0][1]) != heap[0][0]:
            heapq.heappop(heap)
        if not heap or self.busy is not None:
            return None
        return self.t0_s + (heap[0][0] - self.idle_count) * self.timing.slot_s

    def start_busy(self) -> Busy:
        """Start the next busy period (:meth:`next_start_s` must be due)."""
        t_s = self.next_start_s()
        assert t_s is not None, "a busy period needs a contender"
        heap, target = self._heap, self.target
        first = heap[0][0]
        stations = []
        while heap and heap[0][0] == first:
            station = heapq.heappop(heap)[1]
            if target.get(station) == first:
                stations.append(station)
                del target[station]  # transmitting: no backoff until the exchange ends
        stations.sort()
        left, last_bits, full = self.left, self.last_bits, self.full_bits
        bits = [last_bits[s] if left[s] == 1 else full for s in stations]
        sent: tuple[float, ...]
        success = len(stations) == 1
        if success:
            busy_s, sent_s, _, _ = self._frame(bits[0])
            sent = (sent_s,)
        else:
            busy_s = self._frame(max(bits))[3]
            sent = tuple([self._frame(b)[2] for b in bits])
        difs_s = self.timing.difs_s
        self.tally.busy(first, success, busy_s + difs_s, bits[0] if success else 0)
        self.idle_count, self.t0_s = first, t_s + busy_s + difs_s
        joined = self.joined
        self.busy = Busy(t_s, tuple(stations), success, busy_s, sent,
                         tuple([joined[s] for s in stations]))
        return self.busy

    def _frame(self, bits: int) -> tuple[float, float, float, float]:
        """Durations of an MPDU of ``bits``: success busy, sent, collided sent, collision
        busy (the same numbers as :class:`DcfTiming`'s, kept by size)."""
        frame = self._frames.get(bits)
        if frame is None:
            timing = self.timing
            frame = self._frames[bits] = (timing.success_busy_s(bits), timing.sent_s(bits),
                                          timing.collided_sent_s(bits),
                                          timing.collision_busy_s(bits))
        return frame

    def end_busy(self) -> Ended:
        """End the busy period: the winner's MPDU is acknowledged, colliders back off."""
        busy, cfg = self.busy, self.cfg
        assert busy is not None, "no busy period to end"
        self.busy = None
        self.failed_in_a_row = 0 if busy.success else self.failed_in_a_row + 1
        check_progress(cfg, self.failed_in_a_row)
        done, dropped = [], []
        joined, left, retries, limit = self.joined, self.left, self.retries, cfg.retry_limit
        for station, join in zip(busy.stations, busy.joins):
            if joined.get(station) != join:
                continue  # left during its transmission (and maybe joined again)
            if busy.success:
                left[station] -= 1
                retries[station] = 0
                if left[station] == 0:
                    done.append(station)
                    continue
            else:
                retries[station] += 1
                if limit is not None and retries[station] >= limit:
                    dropped.append(station)
                    continue
            self._backoff(station, self.idle_count)
        for station in done + dropped:
            self._forget(station)
            self.tally.contenders(self.idle_count, -1)
        return Ended(tuple(done), tuple(dropped))

    # ---- helpers

    def _backoff(self, station: int, start: int) -> None:
        """Draw ``station``'s backoff for its current MPDU, counted from idle index ``start``."""
        target = start + self._backoffs.draw(self._windows[min(self.retries[station], 40)])
        self.target[station] = target
        heapq.heappush(self._heap, (target, station))

    def _forget(self, station: int) -> None:
        for table in (self.target, self.left, self.last_bits, self.retries, self.joined):
            table.pop(station, None)
