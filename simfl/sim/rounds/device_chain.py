"""A device's round as a chain of event callbacks: the same steps as a SimPy process, lighter.

:func:`simfl.sim.rounds.device.device_round` runs one generator process per invited client;
each step costs the process machinery (an initialise event, a resume per yield, an end
event, an interruption event). :class:`ChainedDevice` takes the same steps, in the same
order and at the same simulated instants, as callbacks on the same timeouts and MAC
events, so the clock sees the events that change state in the same order, the random
streams are drawn in the same order and the records are the same, bit for bit. The
upload is the MAC's ``transmit`` generator, resumed from the callbacks of the events it
waits on (as a process resumes it, without the process's own events).

When every invitee starts with the same download (an ideal downlink: no draws, one
airtime), :func:`start_devices` starts them together: the energy of the download is
metered for the whole cohort at once, one timeout ends every download, and each
client's compute timeout is made in client order, as the processes would make them.

The simulation picks this form (the ``callbacks`` engine) for a round whenever the round
needs nothing that only a process gives: no battery (whose depletion timers interrupt
processes), no late device that keeps working after its round, no availability change
inside the round, a unicast downlink, and a MAC and links that claim the engine
(:mod:`simfl.sim.rounds.engines`).
"""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np
import simpy

from simfl.core.records import Arrival, EventKind, Missing, MissingReason
from simfl.sim.links.channel import Link
from simfl.sim.mac.protocol import Refusal, Transmission
from simfl.sim.rounds.device import DEVICE_FAULTS, DeviceUplink, Devices
from simfl.sim.energy.infinite import InfiniteEnergy

#: ``ended(device)``: a chained device has its outcome (``device.value``)
Ended = Callable[["ChainedDevice"], None]


class ChainedDevice:
    """``client``'s work in ``round``, step by step on event callbacks.

    Like a process it has ``is_alive``, its outcome ``value`` (an :class:`Arrival` or a
    :class:`Missing`) once it ended, and :meth:`interrupt`. ``ended`` is called with it
    when it ends; with ``as_event`` that happens when an event scheduled at its end is
    processed, as a process's own end event would be.
    """

    __slots__ = ("devices", "client", "round", "is_alive", "value", "ended", "as_event")

    def __init__(self, devices: Devices, client: int, round: int, ended: Ended,
                 as_event: bool) -> None:
        self.devices, self.client, self.round = devices, client, round
        self.is_alive = True
        self.value: Arrival | Missing | None = None
        self.ended, self.as_event = ended, as_event

    # ---- the steps

    def start(self) -> None:
        """Begin the round's work now: the download."""
        self.devices.energy.begin(self.client, self)
        self._transfer("downlink", self._downloaded)

    def _downloaded(self, ok: bool) -> None:
        if not ok:
            self._miss(MissingReason.ERASED, "downlink")
            return
        devices = self.devices
        devices.energy.switch(self.client, "compute")
        devices.env.timeout(float(devices.compute_s[self.client])).callbacks.append(self.computed)

    def computed(self, _event: object = None) -> None:
        """The local work is done: the upload is the MAC's (its ``transmit``)."""
        if not self.is_alive:
            return
        devices, client = self.devices, self.client
        devices.log(devices.env.now, EventKind.COMPUTED, self.round, client, "")
        self._step(devices.mac.transmit(client, DeviceUplink(devices, client, self.round)))

    def _step(self, transmission: Transmission, value: object = None) -> None:
        """Run the MAC's ``transmission`` on until it waits for an event that has not been
        processed yet, then resume it from that event's callback, as a process would."""
        while True:
            try:
                event = transmission.send(value)
            except StopIteration as stop:
                self._uploaded(stop.value)
                return
            if event.callbacks is not None:
                event.callbacks.append(functools.partial(self._resume, transmission))
                return
            value = event.value  # already processed: go on at once

    def _resume(self, transmission: Transmission, event: simpy.Event) -> None:
        if self.is_alive:
            self._step(transmission, event.value)

    def _uploaded(self, refusal: Refusal | None) -> None:
        devices, client = self.devices, self.client
        if refusal is not None:
            self._miss(*refusal)
        else:
            now = devices.env.now
            devices.log(now, EventKind.ARRIVED, self.round, client, "")
            self._end(Arrival(client, self.round, now, int(devices.n_samples[client])))

    def _transfer(self, direction: str, then: Callable[[bool], None]) -> None:
        """:meth:`Devices.transfer` (ARQ, each attempt charged) with its result to ``then``
        (the download; the upload goes through the MAC)."""
        devices, client = self.devices, self.client
        env = devices.env
        n_bytes = devices.upload_bytes if direction == "uplink" else devices.model_bytes
        link: Link = getattr(devices.links, direction)
        rng = (devices.rngs.stream(f"channel/{direction}/{client}/round/{self.round}")
               if link.draws else None)
        state = "tx" if direction == "uplink" else "rx"
        attempt = 0

        def send() -> None:
            nonlocal attempt
            attempt += 1
            delivery = link.transmit(env.now, n_bytes, rng, client=client)
            wall_s = delivery.airtime_s
            devices.energy.switch(client, state, 8 * n_bytes, delivery.airtime_s, None)

            def done(_event: object) -> None:
                if not self.is_alive:
                    return
                if delivery.ok:
                    then(True)
                    return
                retrying = attempt < devices.arq_max_attempts
                devices.log(env.now, EventKind.ATTEMPT_LOST, self.round, client,
                            f"{direction} {attempt}")
                devices.retries += retrying
                send() if retrying else then(False)

            env.timeout(wall_s).callbacks.append(done)

        send()

    # ---- the end

    def interrupt(self, cause: str) -> None:
        """Stop now, as a process's interrupt would (``battery``/``offline``: that reason;
        anything else: ``late``, or ``collided`` when still contending for the uplink)."""
        if not self.is_alive:
            return
        reason = MissingReason(cause) if cause in DEVICE_FAULTS else MissingReason.LATE
        if self.devices.mac.leave(self.client) and reason == MissingReason.LATE:
            reason = MissingReason.COLLIDED
        self._miss(reason, str(cause))

    def _miss(self, reason: MissingReason, detail: str) -> None:
        devices = self.devices
        devices.log(devices.env.now, reason, self.round, self.client, detail)
        self._end(Missing(self.client, reason, devices.env.now))

    def _end(self, value: Arrival | Missing) -> None:
        self.devices.energy.end(self.client)
        self.is_alive, self.value = False, value
        if self.as_event:
            event = self.devices.env.event()
            event.callbacks.append(lambda _event: self.ended(self))
            event.succeed()
        else:
            self.ended(self)


def start_devices(devices: Devices, clients: list[int], round: int, ended: Ended,
                  as_event: bool) -> list[ChainedDevice]:
    """Start ``clients`` (sorted ids) on their round's work now, as chained devices."""
    chain = [ChainedDevice(devices, client, round, ended, as_event) for client in clients]
    link = devices.links.downlink
    if not chain or link.draws or link.cfg.distance is not None:
        for device in chain:
            device.start()
        return chain
    # one ideal download for all: the same energy, metered for the cohort at once
    env, energy = devices.env, devices.energy
    assert isinstance(energy, InfiniteEnergy), "the callbacks engine needs infinite energy"
    ids = np.asarray(clients, dtype=np.int64)
    airtime_s = link.transmit(env.now, devices.model_bytes, None, client=clients[0]).airtime_s
    energy.begin_all(ids, chain)
    energy.switch_all(ids, "rx", 8 * devices.model_bytes, airtime_s)

    def downloaded(_event: object) -> None:
        alive = [device for device in chain if device.is_alive]
        if not alive:
            return
        energy.switch_all(np.array([d.client for d in alive], dtype=np.int64), "compute")
        compute_s = devices.compute_s
        for device in alive:
            env.timeout(float(compute_s[device.client])).callbacks.append(device.computed)

    env.timeout(airtime_s).callbacks.append(downloaded)
    return chain
