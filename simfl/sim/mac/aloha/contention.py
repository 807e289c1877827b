"""Slotted ALOHA on the uplink: contention for slots, simulated over occupied slots only.

Each contender carries the index of the next slot it transmits in (Bernoulli access
makes the gap Geometric(p), memoryless and exact; backoff makes it uniform over the
window), so idle slots cost nothing and a busy slot costs one step over its
transmitters, not one event per client per slot. Who transmits next is
:mod:`simfl.sim.mac.aloha.queue`'s business (a heap, replaced by a numpy scan once a slot
has ``DENSE_TX`` or more transmitters); the outcome of a busy slot and the retries'
draws are :mod:`simfl.sim.mac.aloha.slot`'s, the slots' statistics
:mod:`simfl.sim.mac.aloha.tally`'s, the serialised data phase :mod:`simfl.sim.mac.aloha.data_phase`'s.

The ends of busy slots and the grants are events on the simulation clock; a
:class:`SlotDriver` may take them over instead (a caller that runs a round's events in
its own loop, in the clock's order), with the same draws and records.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import simpy

from simfl.core.config.mac import OFF_CLOCK
from simfl.core.config.network import SlottedAlohaMac
from simfl.core.records import MacSlots
from simfl.core.registry import implements
from simfl.core.rng import RngTree
from simfl.sim.clock import call_at
from simfl.sim.links.channel import Bursts
from simfl.sim.mac.access import (GRID_EPS, MacBase, first_slot, last_slot_by, per_client,
                                  radio_at_end, slot_end_s)
from simfl.sim.mac.protocol import (GAVE_UP, LOST_ON_LINK, OnTransmit, SlotDriver, Transmission,
                                    Uplink)
from simfl.sim.mac.aloha.cohort import CohortContention, contend
from simfl.sim.mac.aloha.data_phase import DataChannels
from simfl.sim.mac.aloha.queue import NEVER, NextSlots
from simfl.sim.mac.aloha.slot import SlotOutcomes
from simfl.sim.mac.aloha.tally import SlotTally
from simfl.sim.radio.capture import Air, Capture

#: transmitters in one slot from which slotted ALOHA scans its contenders (numpy)
#: rather than keeping a heap entry per transmission (Python)
DENSE_TX = 16


class SlottedAloha(MacBase):
    """Slotted ALOHA contention for the uplink (see :class:`SlottedAlohaMac`).

    ``tx_slots[i]`` counts client i's transmissions (of ``slot_s`` airtime each, told to
    ``on_transmit(clients, airtime_s)`` when their slot ends, sorted ids, to charge them).
    Its busy slots are settled by :class:`~simfl.sim.mac.aloha.slot.SlotOutcomes`.
    """

    cfg: SlottedAlohaMac

    def __init__(self, cfg: SlottedAlohaMac, env: simpy.Environment, rngs: RngTree,
                 n_clients: int, on_transmit: OnTransmit | None = None) -> None:
        super().__init__(cfg, env, rngs, n_clients, on_transmit)
        self.p = per_client(cfg.access_prob, n_clients, "network.mac.access_prob")
        self.next = NextSlots(n_clients)
        self.next_slot = self.next.slot  # the slot each client next transmits in
        self.join_slot = np.zeros(n_clients, dtype=np.int64)
        self.tally = SlotTally()
        self.outcomes = SlotOutcomes(cfg, self.p, self.next, self.tally,
                                     rngs.stream("mac/aloha/round/-1"), on_transmit)
        self.collisions = self.outcomes.collisions
        self.tx_slots = self.outcomes.tx_slots
        self.data = DataChannels(cfg.channels)
        self.driver: SlotDriver | None = None  # None: the simulation clock runs the events
        self._waiting: dict[int, simpy.Event | None] = {}
        self._pending: set[int] = set()  # slots whose end is scheduled
        self._round = -1
        if cfg.data_phase != "parallel":  # the loop off the clock has no data channels
            self.capabilities = replace(self.capabilities,
                                        engines=self.capabilities.engines - {OFF_CLOCK})

    @property
    def slots(self) -> SlottedAloha:
        """The contention the loop off the clock drives: this MAC's own."""
        return self

    @property
    def slot_s(self) -> float:
        return self.cfg.slot_s

    @property
    def slot_stats(self) -> dict[int, list[int]]:
        """Number of contenders n -> [slots with n contenders, successes], this round."""
        return self.tally.slot_stats

    @property
    def wake_due(self) -> bool:
        """Whether the end of a slot is scheduled (by the clock or the driver)."""
        return bool(self._pending)

    def now_s(self) -> float:
        return float(self.env.now) if self.driver is None else self.driver.now_s

    # ---- the round and the device's calls

    def attach(self, air: Air) -> None:
        """With an SINR threshold, the strongest of a busy slot may capture it (such rounds
        contend per event: the cohort model has no capture)."""
        if air.sinr_threshold_db is None:
            return
        self.outcomes.capture = Capture(air, self.n_clients)

    @property
    def by_cohort(self) -> bool:
        """Whether a round's contention may be resolved for the whole cohort at once."""
        return self.cfg.contention == "vectorised" and self.outcomes.capture is None

    def open_round(self, round: int, started: np.ndarray) -> None:
        self.outcomes.rng = self.rngs.stream(f"mac/aloha/round/{round}")
        self._round = round
        self.tally.slot_stats = {}
        self.next.sparse()  # nobody contends between rounds

    def close_round(self) -> tuple[MacSlots, ...]:
        return self.tally.take(self._round, last_slot_by(self.now_s(), self.cfg.slot_s) + 1)

    def transmit(self, client: int, uplink: Uplink) -> Transmission:
        """Contend for access, then upload with ARQ (in parallel, or on a data channel)."""
        access = self.request(client)
        assert access is not None, "a driven MAC's uploads run off the clock"
        uplink.wait()  # contending: awake (idle power); each try is charged
        if not (yield access):
            return GAVE_UP
        if not (yield from uplink.send(self.share)):
            return LOST_ON_LINK
        return None

    def share(self, client: int, t_s: float, airtime_s: float) -> tuple[float, Bursts]:
        """Wall seconds of an attempt of ``airtime_s`` from ``t_s`` (:meth:`wall_time_s`),
        the radio on for its airtime at the end."""
        wall_s = self.wall_time_s(client, t_s, airtime_s)
        return wall_s, radio_at_end(wall_s, airtime_s)

    def request(self, client: int) -> simpy.Event | None:
        """Start contending now: an event that succeeds with True once access is granted,
        False after the retry limit; with a driver the decision goes to it instead and
        this returns None."""
        start = first_slot(self.now_s(), self.cfg.slot_s)
        self.join_slot[client] = start
        self.collisions[client] = 0
        self.tally.change(start, +1)
        first = self.outcomes.first_gap(client, start)
        self.next.transmit_in(client, min(start + first, NEVER))
        event = self._waiting[client] = None if self.driver is not None else self.env.event()
        self._schedule(start + first)
        return event

    def settle_cohort(self, clients: np.ndarray, ready_s: np.ndarray, close_s: float
                      ) -> CohortContention:
        """Resolve at once the contention of ``clients`` ready at ``ready_s``, this round's
        only contenders, up to ``close_s`` (see :mod:`simfl.sim.mac.aloha.cohort`)."""
        race = contend(self.cfg, self.p[clients], ready_s, close_s, self.outcomes.rng)
        self.tx_slots[clients] += race.n_tx
        self.collisions[clients] = race.n_collided
        self.tally.slot_stats = race.slot_stats
        return race

    def wall_time_s(self, client: int, t_s: float, airtime_s: float) -> float:
        """Parallel data phase: the airtime. Serialised: the wait for the data channel
        that is free first (in order of request) plus the airtime on it."""
        if self.cfg.data_phase == "parallel":
            return airtime_s
        return self.data.wall_time_s(client, t_s, airtime_s)

    def leave(self, client: int) -> bool:
        if self.cfg.data_phase == "serialised":
            self.data.release(client, self.now_s())
        if client not in self._waiting:
            return False
        del self._waiting[client]
        self.next_slot[client] = NEVER
        self.tally.change(max(self._slot_at(self.now_s()), int(self.join_slot[client])), -1)
        return True

    # ---- contention

    def _slot_at(self, t_s: float) -> int:
        return math.floor(t_s / self.cfg.slot_s + GRID_EPS)

    def _schedule(self, slot: int) -> None:
        """Make sure the end of ``slot`` is processed if it is the earliest busy slot."""
        if slot == NEVER or slot in self._pending:
            return
        if self._pending and slot > min(self._pending):
            return  # an earlier wake-up will reschedule
        self._pending.add(slot)
        t_s = slot_end_s(slot, self.cfg.slot_s)  # exactly: the tie rule compares it
        if self.driver is not None:
            self.driver.wake(slot, t_s)
            return
        call_at(self.env, t_s, lambda _: self.end_of_slot(slot))

    def end_of_slot(self, slot: int) -> None:
        """Settle ``slot``, the earliest busy one, and wake up for the next."""
        self._pending.discard(slot)
        if not self.next.dense:
            tx = self.next.popped(slot)
            if len(tx) < DENSE_TX:
                if tx:
                    self._grant(*self.outcomes.settle_few(slot, tx))
                self._schedule(self.next.first_busy())
                return
            self.next.go_dense(np.fromiter(self._waiting, dtype=np.int64))
        scanned = self.next.scanned(slot)
        if scanned.size:
            self._grant(*self.outcomes.settle_many(slot, scanned))
        self._schedule(self.next.first_busy())

    def _grant(self, done: list[int], granted: set[int]) -> None:
        """End the contention of ``done`` (sorted): access for ``granted``, else given up."""
        self.tally.done(len(done))
        for client in done:
            self.next_slot[client] = NEVER
            event = self._waiting.pop(client)
            if event is not None:
                event.succeed(client in granted)
            else:
                assert self.driver is not None
                self.driver.decide(client, client in granted)


implements(SlottedAlohaMac, SlottedAloha)  # the kind's access model (simfl.sim.mac.kinds builds it)
