"""The common round in one loop: the devices' events in the clock's order, without the clock.

A round whose devices only download, compute, maybe contend for the uplink and upload
(links with one airtime per direction, infinite energy, a MAC that claims the
``off_clock`` engine, nobody leaving or kept late: :mod:`simfl.sim.rounds.engines`)
needs no process and no clock event per device. :class:`FastRound` runs its events from one heap keyed like
the clock's queue, (time, order of scheduling), so they happen in the same order as the
processes' (the same random draws, energy sums, records). The download and the start of
the local work are metered for the whole cohort at once; the MAC's slot ends and grants
are pushed onto the same heap (it is the MAC's :class:`~simfl.sim.mac.protocol.SlotDriver`;
a MAC without contention, ``slots`` None, grants access at once).
Slot ends still due when the round closes stay on the heap for the next round, as they
stay on the clock; before a round that runs on the clock they are handed to it. Over
links that give each client its own airtime (the shared radio) the round is
:class:`~simfl.sim.rounds.placed.PlacedRound`'s.
"""

from __future__ import annotations

import functools
import heapq
import itertools
from typing import cast

import numpy as np
import simpy

from simfl.core.records import Arrival, EventKind, Missing, MissingReason
from simfl.core.config.mac import OFF_CLOCK
from simfl.sim.mac.protocol import OffClockAccess, SlotContention
from simfl.sim.clock import call_at
from simfl.sim.links.channel import Link
from simfl.sim.rounds.cohort import run_cohort
from simfl.sim.rounds.device import Devices
from simfl.sim.rounds.placed import PlacedRound, airtimes_by_client
from simfl.sim.energy.infinite import InfiniteEnergy

# kinds of heap entries, (time, order, kind, client or slot)
_DOWNLOADED, _COMPUTED, _WAKE, _GRANTED, _REFUSED, _ARRIVED = range(6)

Outcome = Arrival | Missing


class _InLoop:
    """The work of a device whose round runs in the loop (infinite energy never stops it)."""

    is_alive = True

    def interrupt(self, cause: str) -> None:
        raise RuntimeError(f"a device of a fast round cannot be interrupted ({cause})")


_IN_LOOP = _InLoop()


def _end_of_slot(slots: SlotContention, slot: int, _event: simpy.Event) -> None:
    slots.end_of_slot(slot)


class FastRound:
    """Runs rounds of ``devices`` in one loop when they qualify (:meth:`covers`)."""

    def __init__(self, devices: Devices) -> None:
        self.devices = devices
        self.now_s = 0.0
        self._heap: list[tuple[float, int, int, int]] = []  # slot ends due, between rounds
        self._order = itertools.count()
        self._decided: list[tuple[int, bool]] = []  # decisions of the slot end being settled
        self._placed = PlacedRound(devices) if airtimes_by_client(devices.links) else None

    @property
    def mac(self) -> OffClockAccess:
        """The MAC, which claims this loop (:mod:`simfl.sim.rounds.engines`)."""
        mac = self.devices.mac
        assert OFF_CLOCK in self._claimed(), "the MAC claims the loop off the clock"
        return cast(OffClockAccess, mac)

    def _claimed(self) -> frozenset[str]:
        """The engines the MAC claims for these links (placed ones, or the others)."""
        capabilities = self.devices.mac.capabilities
        return capabilities.engines if self._placed is None else capabilities.placed_engines

    @property
    def ready(self) -> bool:
        """Whether the MAC claims this loop and its pending slot ends, if any, are this
        loop's (not the clock's)."""
        if OFF_CLOCK not in self._claimed():
            return False
        if self._placed is not None:  # no contention
            return True
        slots = self.mac.slots
        return slots is None or not slots.wake_due or bool(self._heap)

    def hand_over(self, env: simpy.Environment) -> None:
        """Put the slot ends still due on the clock (a round that runs there follows)."""
        if not self._heap:
            return
        slots = self.mac.slots
        assert slots is not None, "only a MAC with slotted contention schedules slot ends"
        while self._heap:
            t_s, _, _, slot = heapq.heappop(self._heap)
            call_at(env, t_s, functools.partial(_end_of_slot, slots, slot))

    def _now(self) -> float:
        return self.now_s

    # ---- the MAC's driver

    def wake(self, slot: int, t_s: float) -> None:
        heapq.heappush(self._heap, (max(t_s, self.now_s), next(self._order), _WAKE, slot))

    def decide(self, client: int, granted: bool) -> None:
        self._decided.append((client, granted))

    def _take_decisions(self) -> list[tuple[int, bool]]:
        """The decisions of the slot end just settled that run now, in order: all of them
        when nothing else is due now (they would be the next entries off the heap);
        otherwise they go onto the heap behind what is due, and none runs now."""
        decided, self._decided = self._decided, []
        heap, now_s = self._heap, self.now_s
        if heap and heap[0][0] <= now_s:
            for client, granted in decided:
                heapq.heappush(heap, (now_s, next(self._order),
                                      _GRANTED if granted else _REFUSED, client))
            return []
        return decided

    # ---- the round

    def run(self, round: int, started: np.ndarray, deadline_s: float
            ) -> tuple[list[Outcome], float]:
        """Run ``round``'s work of ``started`` (sorted ids) from now; returns each one's
        outcome (in the order of ``started``) and the time the round closes."""
        if self._placed is not None:  # each client's own airtimes, no contention
            outcomes, self.now_s = self._placed.run(round, started, deadline_s)
            return outcomes, self.now_s
        d = self.devices
        env, meter, log = d.env, d.energy, d.log
        slots = self.mac.slots  # contention the loop drives, if any
        assert isinstance(meter, InfiniteEnergy)
        if slots is not None and slots.by_cohort:
            outcomes, self.now_s = run_cohort(d, slots, [_IN_LOOP] * len(started), round,
                                              started, deadline_s)
            return outcomes, self.now_s
        t_invite = float(env.now)
        t_deadline = t_invite + deadline_s
        n_bits = 8 * d.model_bytes
        dl_s = d.links.downlink.transmit(t_invite, d.model_bytes, None).airtime_s
        ul_s = d.links.uplink.transmit(t_invite, d.upload_bytes, None).airtime_s
        idle_w = meter.power.state_w("idle")[0]
        tx_power_w, tx_lump_j = meter.power.state_w("tx", 8 * d.upload_bytes, ul_s)
        # an instantaneous upload is charged as a lump (by switch)
        tx_w = tx_power_w if tx_lump_j is None else None
        outcome: dict[int, Outcome] = {}
        heap, order = self._heap, self._order
        ids = started.tolist()
        meter.begin_all(started, [_IN_LOOP] * len(ids))
        meter.switch_all(started, "rx", n_bits, dl_s)
        heapq.heappush(heap, (t_invite + dl_s, next(order), _DOWNLOADED, -1))
        self.now_s = t_invite
        if slots is not None:
            slots.driver = self
        meter.time_source = self._now
        t_close = t_deadline
        try:
            while heap and heap[0][0] <= t_deadline:
                t_s, _, kind, who = heapq.heappop(heap)
                self.now_s = t_s
                if kind == _WAKE:
                    assert slots is not None
                    slots.end_of_slot(who)
                    for client, granted in self._take_decisions():
                        if granted:
                            self._upload(client, t_s, ul_s, tx_w)
                        elif self._refused(round, client, t_s, outcome, len(ids)):
                            t_close = t_s
                            break
                    else:
                        continue
                    break
                elif kind == _DOWNLOADED:
                    meter.switch_all(started, "compute")
                    compute_s = d.compute_s[started].tolist()
                    heap.extend((t_s + c_s, next(order), _COMPUTED, c)
                                for c, c_s in zip(ids, compute_s))
                    heapq.heapify(heap)
                elif kind == _COMPUTED:
                    log(t_s, EventKind.COMPUTED, round, who, "")
                    if slots is not None:
                        slots.request(who)
                        meter.move(who, t_s, idle_w)  # contending: awake; the MAC charges each try
                    else:
                        self._upload(who, t_s, ul_s, tx_w)
                elif kind == _GRANTED:
                    self._upload(who, t_s, ul_s, tx_w)
                elif kind == _REFUSED:
                    if self._refused(round, who, t_s, outcome, len(ids)):
                        t_close = t_s
                        break
                else:
                    log(t_s, EventKind.ARRIVED, round, who, "")
                    outcome[who] = Arrival(who, round, t_s, int(d.n_samples[who]))
                    meter.stop(who, t_s)
                    if len(outcome) == len(ids):
                        t_close = t_s
                        break
            self.now_s = t_close
            for client in ids:  # still at work at the deadline, in order: interrupted
                if client not in outcome:
                    reason = (MissingReason.COLLIDED if slots is not None and slots.leave(client)
                              else MissingReason.LATE)
                    log(t_close, reason, round, client, "deadline")
                    outcome[client] = Missing(client, reason, t_close)
                    meter.end(client)
        finally:
            meter.time_source = None
            if slots is not None:
                slots.driver = None
        self._heap = [entry for entry in heap if entry[2] == _WAKE]  # the clock keeps these
        heapq.heapify(self._heap)
        return [outcome[c] for c in ids], t_close

    def _refused(self, round: int, client: int, t_s: float, outcome: dict[int, Outcome],
                 n_started: int) -> bool:
        """``client`` gave up contending at ``t_s``; whether everyone is now done."""
        self.devices.log(t_s, MissingReason.COLLIDED, round, client, "mac retry limit")
        outcome[client] = Missing(client, MissingReason.COLLIDED, t_s)
        assert isinstance(self.devices.energy, InfiniteEnergy)
        self.devices.energy.stop(client, t_s)
        return len(outcome) == n_started

    def _upload(self, client: int, t_s: float, airtime_s: float, tx_w: float | None) -> None:
        d, meter = self.devices, self.devices.energy
        wall_s, bursts = self.mac.share(client, t_s, airtime_s)
        if tx_w is not None and wall_s == airtime_s:
            assert isinstance(meter, InfiniteEnergy)
            meter.move(client, t_s, tx_w)
        else:
            d.energy.switch(client, "tx", 8 * d.upload_bytes, airtime_s, bursts)
        heapq.heappush(self._heap, (t_s + wall_s, next(self._order), _ARRIVED, client))
