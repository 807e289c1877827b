"""The DCF with a carrier-sense range: each station's own view of the medium, event by event.

Station k senses station j's frames only when ``senses(j, ...)`` says so (within the
carrier-sense range); every station hears the access point. So there is no single medium
and no shared idle-slot count: each station counts its backoff on its own
(:class:`~simfl.sim.mac.csma.station_view.StationView`).

The access point (it hears every station) receives a frame intact when no other frame,
and no answer of its own, overlaps it; overlapping frames are all lost (no capture). A
frame's first part is DATA (basic access) or RTS (``rts_cts``). An intact one is answered
from its end to the end of its exchange (ACK; with RTS/CTS the CTS, whose reservation
covers DATA and ACK), and every station senses that answer, so with RTS/CTS a hidden
station can only collide with the RTS. A station's own exchange lasts Bianchi's busy
times (T_s or T_c less DIFS, :class:`~simfl.sim.mac.csma.timing.DcfTiming`); stations in
range sense a lost frame for its length and one propagation delay.

A joining station senses DIFS (after any busy interval it senses), then backs off. The
statistics are the access point's: a busy period there is a run of overlapping frames and
answers (a success when one frame in it was intact), idle slots the whole slots between.
"""

from __future__ import annotations

import heapq
import math
from typing import Callable

import numpy as np

from simfl.core.config.csma import CsmaCaMac
from simfl.sim.mac.csma.ap_periods import ApPeriods
from simfl.sim.mac.csma.backoff import Backoffs, Draws, contention_windows
from simfl.sim.mac.csma.dcf import Ended, check_progress
from simfl.sim.mac.csma.station_view import Frame, StationView
from simfl.sim.mac.csma.tally import DcfTally
from simfl.sim.mac.csma.timing import DcfTiming

#: ``senses(sender, stations)``: which of ``stations`` (ids) sense ``sender``'s frames
Senses = Callable[[int, np.ndarray], np.ndarray]
#: ``radio(station, state)``: a station's radio enters ``tx``, ``rx`` or ``idle`` now
Radio = Callable[[int, str], None]

#: the order of events at one instant: exchanges end, frames end, frames start, radios
_END, _DECIDE, _SEND, _RADIO = 0, 1, 2, 3


class HiddenDcf:
    """The DCF of one uplink whose stations sense each other as ``senses`` says.

    The same calls as :class:`~simfl.sim.mac.csma.dcf.Dcf` for stations and statistics
    (``join``, ``leave``, ``slot_index``, ``tally``, ``rng``); the medium moves by
    :meth:`step`, one instant at a time (:meth:`next_event_s`). ``radio`` (optional) is
    told each station's radio state as it changes.
    """

    def __init__(self, cfg: CsmaCaMac, timing: DcfTiming, rng: Draws, senses: Senses,
                 radio: Radio | None = None) -> None:
        self.cfg, self.timing, self.senses, self.radio = cfg, timing, senses, radio
        self.rng = rng
        self.full_bits = 8 * cfg.mpdu_payload_bytes
        self.st: dict[int, StationView] = {}
        self.on_air: dict[int, Frame] = {}  # by join number, until the exchange ends
        self.answer_until_s = -math.inf  # the access point answers until then
        self.lost_frames = self.failed_in_a_row = 0
        self._heap: list[tuple[float, int, int, int]] = []  # (t, order, station, token)
        self._joins = 0
        self._windows = contention_windows(cfg.cw_min, cfg.cw_max)
        self.ap = ApPeriods(timing.slot_s, timing.difs_s, DcfTally(timing))

    @property
    def rng(self) -> Draws:
        return self._backoffs.rng

    @rng.setter
    def rng(self, rng: Draws) -> None:
        self._backoffs = Backoffs(rng)

    # ---- stations

    def join(self, station: int, now_s: float, n_mpdus: int, last_bits: int) -> None:
        """``station`` starts contending at ``now_s`` with ``n_mpdus`` to send."""
        self._joins += 1
        if not self.st:
            self.ap.wake(now_s)
        st = self.st[station] = StationView(self._joins, n_mpdus, last_bits)
        self.ap.contenders(now_s, +1)
        ends = [f.start_s + self.timing.collision_busy_s(f.bits) for f in self.on_air.values()
                if bool(self.senses(f.station, np.array([station]))[0])]
        st.busy_until_s = max([self.answer_until_s, *ends])
        self._backoff(station, st, now_s)
        self._radio_at(station, now_s)

    def leave(self, station: int, now_s: float) -> bool:
        """Take ``station`` out (its upload is abandoned); True if it was contending."""
        if self.st.pop(station, None) is None:
            return False
        self.ap.contenders(now_s, -1)
        return True

    @property
    def tally(self) -> DcfTally:
        """The round's statistics (the access point's busy periods and idle slots)."""
        return self.ap.tally

    @tally.setter
    def tally(self, tally: DcfTally) -> None:
        self.ap.tally = tally

    @property
    def idle_count(self) -> int:
        return self.ap.idle_count

    def slot_index(self, now_s: float) -> int:
        """The access point's idle index of the first slot boundary at or after ``now_s``."""
        return self.ap.slot_index(now_s)

    # ---- the medium

    def next_event_s(self) -> float | None:
        """When the next event happens (None: nothing left to happen)."""
        heap = self._heap
        while heap and heap[0][1] == _SEND and not self._due(heap[0][2], heap[0][3]):
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def step(self) -> tuple[float, Ended]:
        """Settle every event at the next instant; the stations done or dropped then."""
        t = self.next_event_s()
        assert t is not None, "nothing to step"
        done: list[int] = []
        dropped: list[int] = []
        heap = self._heap
        while heap and heap[0][0] == t:
            _, kind, station, token = heapq.heappop(heap)
            if kind == _END:
                self._end(t, station, token, done, dropped)
            elif kind == _DECIDE:
                self._decide(t, token)
            elif kind == _SEND:
                if self._due(station, token):
                    self._send(t, station)
            else:
                self._update_radio(t, station)
        return t, Ended(tuple(done), tuple(dropped))

    def _send(self, t: float, station: int) -> None:
        """``station`` starts its frame at ``t``: overlaps at the access point, then who senses it."""
        st, timing = self.st[station], self.timing
        bits = st.last_bits if st.left == 1 else self.full_bits
        frame_end = t + timing.collided_sent_s(bits)
        lost = self.answer_until_s > t
        for other in self.on_air.values():
            if other.end_s > t:
                other.lost = lost = True
        self.on_air[st.join] = Frame(station, st.join, t, frame_end, bits, lost)
        st.sending, st.tx_until_s = True, frame_end
        sensed_until = t + timing.collision_busy_s(bits)
        self.ap.busy(t, sensed_until)
        heapq.heappush(self._heap, (frame_end, _DECIDE, station, st.join))
        self._radio_at(station, t)
        self._radio_at(station, frame_end)
        others = np.array([k for k in self.st if k != station], dtype=np.int64)
        if others.size:
            for k in others[self.senses(station, others)].tolist():
                self._sense(k, t, sensed_until)

    def _decide(self, t: float, join: int) -> None:
        """A frame's first part has arrived: intact (answered, heard by all) or lost."""
        frame = self.on_air[join]
        st = self.st.get(frame.station)
        mine = st is not None and st.join == join
        if frame.lost:
            self.lost_frames += 1
            self.failed_in_a_row += 1
            check_progress(self.cfg, self.failed_in_a_row)
            end = frame.start_s + self.timing.collision_busy_s(frame.bits)
        else:
            end = frame.start_s + self.timing.success_busy_s(frame.bits)
            self.failed_in_a_row = 0
            self.answer_until_s = max(self.answer_until_s, end)
            self.ap.extend(end)
            self.ap.success(frame.bits)
            for k in list(self.st):
                if k != frame.station or not mine:
                    self._sense(k, t, end)
            if mine:
                assert st is not None
                st.tx_until_s = frame.start_s + self.timing.sent_s(frame.bits)
                self._radio_at(frame.station, st.tx_until_s)
        heapq.heappush(self._heap, (end, _END, frame.station, join))

    def _end(self, t: float, station: int, join: int, done: list[int],
             dropped: list[int]) -> None:
        """``station``'s exchange ends: its MPDU acknowledged, or a retry (maybe the last)."""
        frame = self.on_air.pop(join)
        st = self.st.get(station)
        if st is None or st.join != join:
            return  # it left during its exchange
        outcome = st.exchange_ends(not frame.lost, self.cfg.retry_limit)
        if outcome is not None:
            (done if outcome == "done" else dropped).append(station)
            del self.st[station]
            self.ap.contenders(t, -1)
            return
        self._backoff(station, st, t)
        self._radio_at(station, t)

    # ---- helpers

    def _sense(self, k: int, t: float, end_s: float) -> None:
        """Station ``k`` senses the medium busy from ``t`` to ``end_s``: it freezes."""
        st = self.st[k]
        if st.sense(t, end_s, self.timing.slot_s, self.timing.difs_s):
            self._schedule(k, st)
        self._radio_at(k, t)
        self._radio_at(k, st.busy_until_s)

    def _backoff(self, station: int, st: StationView, now_s: float) -> None:
        """Draw ``station``'s backoff; it counts from DIFS after what it senses."""
        st.count = self._backoffs.draw(self._windows[min(st.retries, 40)])
        st.resume_s = max(now_s, st.busy_until_s) + self.timing.difs_s
        self._schedule(station, st)

    def _schedule(self, station: int, st: StationView) -> None:
        st.gen += 1
        heapq.heappush(self._heap, (st.send_s(self.timing.slot_s), _SEND, station, st.gen))

    def _due(self, station: int, gen: int) -> bool:
        st = self.st.get(station)
        return st is not None and st.gen == gen and not st.sending

    def _radio_at(self, station: int, t: float) -> None:
        if self.radio is not None:
            heapq.heappush(self._heap, (t, _RADIO, station, 0))

    def _update_radio(self, t: float, station: int) -> None:
        st = self.st.get(station)
        if st is None or self.radio is None:
            return
        state = st.radio_state(t)
        if state != st.radio:
            st.radio = state
            self.radio(station, state)
