"""Over-the-air computation: every participant of a round transmits in one analog slot.

The medium access of ``server.algorithm.kind = "aircomp"`` (the uplink's MAC; it carries
the upload). A round's invitees download and compute as usual; each one that finishes
asks for the slot. The slot begins when every invitee still at work has asked, or at
``deadline - slot_s`` at the latest (then it ends exactly at the deadline; an invitee
still computing is late). At its start each client in it reads its channel power gain
|h_k|^2 = gbar_k * X_k, X_k ~ Exp(1) (Rayleigh block fading, one block per slot,
drawn from the stream ``aircomp/gains/<round>`` for every invitee in id order), with
gbar_k = 1 without a radio map, else the client's mean uplink SNR (linear). A client
with |h_k|^2 < ``gain_threshold`` sits out: its request fails at once, recorded
``truncated``. The others invert their channels to the common scale
eta = ``power`` * min_k |h_k|^2 (the weakest participant transmits at the power limit)
and transmit together for ``slot_s`` = d / ``symbol_rate_hz`` seconds, d = ceil(model
bytes / 4) analog symbols (one per 32-bit parameter); each is charged ``tx`` for the
slot. All of them arrive when the slot ends. The round's :class:`AirSlot` carries the
participants, eta, the sum's error variance ``noise_var`` / eta and the seed of the
receiver noise (stream ``aircomp/noise/<round>``) that the aggregator adds.

Not modelled: imperfect channel estimates, timing and phase misalignment among the
transmitters, slots shorter than a model (one slot carries the whole update).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Generator

import numpy as np
import simpy

from simfl.core.air_slot import AirSlot
from simfl.core.config.aircomp import DEFAULT_SYMBOL_RATE_HZ, AirComp
from simfl.core.config.mac import MacCapabilities
from simfl.core.config.network import IdealMac
from simfl.core.records import MissingReason
from simfl.core.rng import RngTree
from simfl.sim.clock import delays_to
from simfl.sim.mac.access import MacBase
from simfl.sim.mac.protocol import Transmission, Uplink
from simfl.sim.radio.radio_map import RadioMap

if TYPE_CHECKING:
    from simfl.sim.energy.source import EnergyMeter
    from simfl.sim.links.channel import Link


class AirCompAccess(MacBase):
    """The analog slot of each round (see the module docstring).

    Parameters
    ----------
    air:
        The aggregator's config: power limit, noise, truncation threshold.
    symbol_rate_hz:
        Analog symbols per second (the resolved ``air.symbol_rate_hz``).
    deadline_s:
        The rounds' deadline (s after a round opens).
    radio_map:
        Mean uplink SNRs, read when a round opens; None: unit mean gains.
    """

    def __init__(self, air: AirComp, env: simpy.Environment, rngs: RngTree, n_clients: int, *,
                 symbol_rate_hz: float, deadline_s: float,
                 radio_map: RadioMap | None = None) -> None:
        super().__init__(IdealMac(), env, rngs, n_clients)
        self.capabilities = MacCapabilities()  # its slot follows the clock: processes only
        self.deadline_s = deadline_s  # bound again each round (:meth:`bind`)
        self.air, self.symbol_rate_hz, self.radio_map = air, symbol_rate_hz, radio_map
        self.update_bytes = 0
        self.energy: EnergyMeter | None = None
        self._round = -1
        self._gain: dict[int, float] = {}
        self._waiting: set[int] = set()  # invitees still at work that have not asked yet
        self._asked: dict[int, simpy.Event] = {}  # who asked, and their grant
        self._ready = env.event()
        self._started = False
        self._record: AirSlot | None = None

    @property
    def slot_s(self) -> float:
        """The slot's duration: d = ceil(update bytes / 4) symbols at the symbol rate."""
        return math.ceil(self.update_bytes / 4) / self.symbol_rate_hz

    def bind_upload(self, energy: EnergyMeter, uplink: Link, update_bytes: int) -> None:
        self.energy, self.update_bytes = energy, update_bytes

    def open_round(self, round: int, started: np.ndarray) -> None:
        self._round, self._started, self._record = round, False, None
        mean = (np.ones(len(started)) if self.radio_map is None
                else 10.0 ** (self.radio_map.mean_snr_db(started) / 10.0))
        draws = self.rngs.stream(f"aircomp/gains/{round}").exponential(size=len(started))
        self._gain = dict(zip(started.tolist(), (mean * draws).tolist()))
        self._waiting, self._asked = set(self._gain), {}
        self._ready = self.env.event()
        self.env.process(self._slot(round, self.env.now + self.deadline_s))
        self._check_ready()

    def transmit(self, client: int, uplink: Uplink) -> Transmission:
        """Ask for the round's slot and wait, awake: the slot carries the update itself
        (None when it ends), or the client sits out in a deep fade."""
        grant = self.request(client)
        uplink.wait()
        if not (yield grant):
            return self.refusal(client)
        return None

    def request(self, client: int) -> simpy.Event:
        grant = self.env.event()
        if not self._started:  # asked in time: waits for the slot
            self._waiting.discard(client)
            self._asked[client] = grant
            self._check_ready()
        return grant  # asked after the slot began: never granted (late at the close)

    def leave(self, client: int) -> bool:
        self._waiting.discard(client)
        self._asked.pop(client, None)
        self._check_ready()
        return False  # never contending: an interrupted device is late, offline or flat

    def refusal(self, client: int) -> tuple[MissingReason, str]:
        """Why ``client``'s request failed: it sat out (below the gain threshold)."""
        return MissingReason.TRUNCATED, "deep fade"

    def air_slot(self) -> AirSlot | None:
        return self._record

    def _check_ready(self) -> None:
        if not self._waiting and not self._ready.triggered:
            self._ready.succeed()

    def _slot(self, round: int, t_deadline: float) -> Generator[simpy.Event, object, None]:
        env, air, asked = self.env, self.air, self._asked  # this round's requests
        t_open, forced_s = env.now, t_deadline - self.slot_s
        yield self._ready | env.timeout(max(forced_s - t_open, 0.0))
        self._started = True
        ready = sorted(asked)
        in_slot = [c for c in ready if self._gain[c] >= air.gain_threshold]
        truncated = [c for c in ready if self._gain[c] < air.gain_threshold]
        for client in truncated:
            asked.pop(client).succeed(False)
        eta = air.power * min(self._gain[c] for c in in_slot) if in_slot else 0.0
        t_start = env.now
        self._record = AirSlot(
            round, t_start, self.slot_s, tuple(in_slot), tuple(truncated), eta,
            air.noise_var / eta if eta > 0 else math.nan,
            self.rngs.int_seed(f"aircomp/noise/{round}"))
        if not in_slot:
            return
        if self.energy is not None:
            for client in in_slot:
                self.energy.switch(client, "tx", 8.0 * self.update_bytes, self.slot_s)
        # a slot begun at deadline - slot_s ends exactly at the deadline (on time); one
        # longer than the whole round (deadline < slot_s) ends after it: everyone is late
        t_end = t_deadline if t_open <= forced_s <= t_start else t_start + self.slot_s
        for delay_s in delays_to(env.now, t_end):
            yield env.timeout(delay_s)
        for client in in_slot:
            grant = asked.pop(client, None)
            if grant is not None:  # not interrupted meanwhile (late, battery, offline)
                grant.succeed(True)


def build_aircomp_access(air: AirComp, env: simpy.Environment, rngs: RngTree, n_clients: int,
                         deadline_s: float, bandwidth_hz: float | None,
                         radio_map: RadioMap | None) -> AirCompAccess:
    """The analog slot for ``air``; its symbol rate is ``air.symbol_rate_hz``, else the
    radio's ``bandwidth_hz``, else :data:`~simfl.core.config.aircomp.DEFAULT_SYMBOL_RATE_HZ`."""
    rate_hz = air.symbol_rate_hz or bandwidth_hz or DEFAULT_SYMBOL_RATE_HZ
    return AirCompAccess(air, env, rngs, n_clients, symbol_rate_hz=rate_hz,
                         deadline_s=deadline_s, radio_map=radio_map)
