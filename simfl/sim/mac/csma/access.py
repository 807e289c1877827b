"""IEEE 802.11 DCF as a MAC on the simulation clock: a device's request is its whole upload.

``transmit`` (through ``request(client)``) joins the client's update (split into MPDUs)
to the DCF (:mod:`simfl.sim.mac.csma.dcf`) and waits for an event that succeeds with
True when its last MPDU is acknowledged, or False when an MPDU reached the retry limit.
The MAC carries the upload itself: the device sends nothing more over its link. The
medium's busy periods are clock events (one at each start and one at each end), never
one per idle slot or per station.

Energy, when :meth:`CsmaCa.bind_upload` gave a meter: at the start of a busy period
the transmitters switch to ``tx`` and the other contenders to ``rx`` (they overhear); a
transmitter switches to ``rx`` when it has sent its frames (it waits for CTS and ACK);
at the end every contender goes back to ``idle`` (DIFS and idle slots). A transmitter's
RTS/CTS exchange is charged as its sending time (RTS and DATA) then its receiving time,
in that order: the same energy as the true interleaving. A station joining during a busy
period is charged ``idle`` until it ends.

With infinite energy the radio states are not switched at all: :mod:`~simfl.sim.mac.csma.airtime`
sums each station's sending and receiving time and charges it once, when it leaves the DCF
(the same energy, up to float rounding). The medium then runs ahead of the clock: busy periods
that end before the clock's next event are settled back to back in one call, their times
computed with the clock's own float steps, and only a busy period that ends an upload, or
reaches the next event, goes on the clock. A meter with batteries (a device's death time
depends on when its power changes) keeps the switch at every busy period, on the clock.
"""

from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np
import simpy

from simfl.core.config.csma import CsmaCaMac
from simfl.core.config.rate import FixedRate
from simfl.core.records import MacSlots
from simfl.core.registry import implements
from simfl.core.rng import RngTree
from simfl.sim.energy.infinite import InfiniteEnergy
from simfl.sim.energy.source import EnergyMeter
from simfl.sim.links.channel import Link
from simfl.sim.mac.access import MacBase
from simfl.sim.mac.protocol import GAVE_UP, OnTransmit, Transmission, Uplink
from simfl.sim.mac.csma.airtime import Airtime, Ongoing
from simfl.sim.mac.csma.dcf import Busy, Dcf, Ended
from simfl.sim.mac.csma.tally import DcfTally
from simfl.sim.mac.csma.timing import DcfTiming

#: ``switch(client, state, n_bits, airtime_s)``: an energy meter's change of radio state
Switch = Callable[[int, str, float, float], None]

#: the update sent by a request when no device told the MAC its size: one MPDU
_ONE_MPDU = -1


class CsmaCa(MacBase):
    """IEEE 802.11 DCF on the uplink (see :class:`~simfl.core.config.csma.CsmaCaMac`)."""

    cfg: CsmaCaMac

    def __init__(self, cfg: CsmaCaMac, env: simpy.Environment, rngs: RngTree, n_clients: int,
                 on_transmit: OnTransmit | None = None) -> None:
        super().__init__(cfg, env, rngs, n_clients, on_transmit)
        self.update_bytes = _ONE_MPDU
        self.switch: Switch | None = None
        self.airtime: Airtime | None = None  # sums of radio time (infinite energy)
        self.spend: Callable[[int, float], None] | None = None
        self._rate(cfg.phy_rate_bps or FixedRate().rate_bps)
        self._round = -1
        self._waiting: dict[int, simpy.Event] = {}
        self._wake_gen = 0  # the scheduled start of a busy period is valid for this only

    def _rate(self, rate_bps: float) -> None:
        self.timing = DcfTiming.of(self.cfg, rate_bps)
        self.dcf = Dcf(self.cfg, self.timing, self.rngs.stream("mac/csma/round/-1"))

    def bind_upload(self, energy: EnergyMeter, uplink: Link, update_bytes: int) -> None:
        """Bind the devices' energy meter, the uplink (its fixed rate when ``phy_rate_bps``
        is null) and the size of an update."""
        self.update_bytes, self.switch = update_bytes, energy.switch
        if self.cfg.phy_rate_bps is None:
            rate = uplink.cfg.rate
            assert isinstance(rate, FixedRate), "checked by the network's config"
            self._rate(rate.rate_bps)
        self.airtime = self.spend = None
        if isinstance(energy, InfiniteEnergy) and energy.power.energy.amplifier is None:
            # sums, charged once per station (an amplifier prices each client: switches)
            rate_bps, power = self.timing.rate_bps, energy.power
            self.airtime = Airtime(power.state_w("tx", rate_bps, 1.0)[0],
                                   power.state_w("rx", rate_bps, 1.0)[0], power.idle_w)
            self.switch, self.spend = None, energy.spend

    # ---- the round and the device's calls

    def open_round(self, round: int, started: np.ndarray) -> None:
        self._round = round
        self.dcf.rng = self.rngs.stream(f"mac/csma/round/{round}")
        self.dcf.tally = DcfTally(self.timing, self.dcf.idle_count)

    def close_round(self) -> tuple[MacSlots, ...]:
        dcf = self.dcf
        records = dcf.tally.take(self._round, dcf.slot_index(self.env.now))
        return records or (MacSlots(self._round, 0, 0, 0, idle_slots=0, collision_slots=0,
                                    channel_s=0.0, throughput=0.0),)

    def transmit(self, client: int, uplink: Uplink) -> Transmission:
        """The DCF sends the update's MPDUs itself: the device waits, awake, until the last
        one is acknowledged (None) or one is dropped at the retry limit."""
        sent = self.request(client)
        uplink.wait()
        if not (yield sent):
            return GAVE_UP
        return None

    def request(self, client: int) -> simpy.Event:
        """Start sending ``client``'s update: an event that succeeds with True when its
        last MPDU is acknowledged, False when one is dropped."""
        payload = 8 * self.cfg.mpdu_payload_bytes
        bits = payload if self.update_bytes == _ONE_MPDU else 8 * self.update_bytes
        n_mpdus = max(1, math.ceil(bits / payload))
        self.dcf.join(client, self.env.now, n_mpdus, bits - (n_mpdus - 1) * payload)
        if self.airtime is not None:
            self.airtime.join(client)
        event = self._waiting[client] = self.env.event()
        self._schedule()
        return event

    def leave(self, client: int) -> bool:
        """Take ``client`` out of the DCF; False all the same: its upload was under way, so
        an interrupted upload keeps the device's reason (``late`` at the deadline)."""
        self._waiting.pop(client, None)
        if self.dcf.leave(client, self.env.now):
            self._charge(client)
            self._schedule()
        return False

    def _charge(self, client: int) -> None:
        """Charge ``client``'s summed radio time (it leaves the DCF now)."""
        if self.airtime is not None and self.spend is not None:
            self.spend(client, self.airtime.extra_j(client, float(self.env.now)))

    # ---- the medium on the clock

    def _schedule(self) -> None:
        """(Re)schedule the start of the next busy period; a wake already set is void
        (when the last contenders left meanwhile, nothing is due)."""
        self._wake_gen += 1
        t_s = self.dcf.next_start_s()
        if t_s is None:
            return
        gen = self._wake_gen
        self.env.timeout(max(0.0, t_s - self.env.now)).callbacks.append(
            lambda _: self._start(gen))

    def _start(self, gen: int) -> None:
        if gen != self._wake_gen or self.dcf.busy is not None:
            return  # superseded by a later schedule
        if self.switch is None:
            self._run_ahead()
            return
        busy = self.dcf.start_busy()
        self._charge_start(busy)
        self.env.timeout(busy.busy_s).callbacks.append(lambda _: self._end())

    def _run_ahead(self) -> None:
        """Settle busy periods back to back while they end before the clock's next event.

        ``clock`` is what the clock would read at each step (the same float sums as the
        timeouts). The loop stops at a busy period that ends an upload, or at a time it
        cannot reach before the next event or in one exact step from now (``t`` with
        ``now + (t - now) == t``), and goes on from there on the clock."""
        env, dcf, airtime = self.env, self.dcf, self.airtime
        now, horizon = float(env.now), env.peek()
        clock = now
        while True:
            busy = dcf.start_busy()
            end = clock + busy.busy_s
            if airtime is not None:
                airtime.busy(busy.stations, busy.sent_s, busy.busy_s)
            if not (end < horizon and now + (end - now) == end):
                if airtime is not None:
                    airtime.ongoing = Ongoing(clock, end, dict(zip(busy.stations, busy.sent_s)))
                if clock == now:
                    self._end_after(busy.busy_s)
                else:
                    self._at(clock, functools.partial(self._end_after, busy.busy_s))
                return
            ended = dcf.end_busy()
            clock = end
            if ended.done or ended.dropped:
                self._at(clock, functools.partial(self._finish, ended))
                return
            t_s = dcf.next_start_s()
            assert t_s is not None, "stations still contend"
            start = clock + max(0.0, t_s - clock)
            if not (start < horizon and now + (start - now) == start):
                self._at(clock, lambda _: self._schedule())
                return
            clock = start

    def _end_after(self, busy_s: float, _event: simpy.Event | None = None) -> None:
        self.env.timeout(busy_s).callbacks.append(lambda _: self._end())

    def _at(self, t_s: float, callback: Callable[[simpy.Event], None]) -> None:
        """Call ``callback`` at clock time ``t_s`` (reached exactly in one step)."""
        delay = t_s - float(self.env.now)
        assert self.env.now + delay == t_s, "run ahead only to times one step reaches"
        self.env.timeout(delay).callbacks.append(callback)

    def _charge_start(self, busy: Busy) -> None:
        """Transmitters send, then receive; the other contenders overhear the period."""
        switch, busy_s = self.switch, busy.busy_s
        assert switch is not None
        sending = set(busy.stations)
        for client in self._waiting:
            if client not in sending:
                self._radio(switch, client, "rx", busy_s)
        for client, seconds in zip(busy.stations, busy.sent_s):
            self._radio(switch, client, "tx", seconds)
            self.env.timeout(seconds).callbacks.append(
                functools.partial(self._to_rx, client, busy_s - seconds))

    def _radio(self, switch: Switch, client: int, state: str, seconds: float) -> None:
        """Switch ``client``'s radio to ``state`` for ``seconds``: with energy per bit, the
        bits the channel carries in that time (``tx_j_per_bit * rate``, as a power)."""
        switch(client, state, seconds * self.timing.rate_bps, seconds)

    def _to_rx(self, client: int, seconds: float, _event: simpy.Event) -> None:
        if self.switch is not None and client in self._waiting:
            self._radio(self.switch, client, "rx", seconds)

    def _end(self) -> None:
        ended = self.dcf.end_busy()
        if self.airtime is not None:
            self.airtime.ongoing = None
        if self.switch is not None:
            for client in self._waiting:
                self.switch(client, "idle", 0.0, 0.0)
        self._finish(ended)

    def _finish(self, ended: Ended, _event: simpy.Event | None = None) -> None:
        """Stations done or dropped at the end of a busy period; schedule the next one."""
        for client in ended.done + ended.dropped:
            self._charge(client)
        for client in ended.done:
            self._waiting.pop(client).succeed(True)
        for client in ended.dropped:
            self._waiting.pop(client).succeed(False)
        self._schedule()


implements(CsmaCaMac, CsmaCa)  # the kind's access model (simfl.sim.mac.kinds builds it)
