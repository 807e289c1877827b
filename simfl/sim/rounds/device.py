"""A client device's part of one synchronous round: download, compute, upload.

Devices work with the collaborators they are given (:class:`Devices`): the two links,
the uplink's MAC, the energy meter and the event log. Each step takes simulated time;
the upload is the MAC's (``transmit``, handed the device's :class:`DeviceUplink`);
transfers go through :func:`simfl.sim.links.channel.arq_transfer` with up to
``arq_max_attempts`` back-to-back attempts. The process never raises: it returns an
:class:`Arrival` or a :class:`Missing` with its reason, so that a failure cannot
propagate through the server's wait condition (SimPy pitfall: failed events inside
``AnyOf`` crash the run).
"""

from __future__ import annotations

from typing import Any, Callable, Generator

import numpy as np
import simpy

from simfl.core.config.compression import upload_bytes
from simfl.core.records import Arrival, EventKind, Missing, MissingReason
from simfl.core.rng import RngTree
from simfl.sim.links.channel import Bursts, Link, Links, Serve, Share, arq_transfer
from simfl.sim.energy.source import EnergyMeter
from simfl.sim.mac.protocol import MediumAccess

#: interrupt causes that are the device's own fault rather than the server's deadline
DEVICE_FAULTS = (MissingReason.BATTERY, MissingReason.OFFLINE)

#: ``log(t_s, kind, round, client, detail)``: keep an event record
Log = Callable[[float, str, int, int, str], None]


class ComputeTimes:
    """Each client's time for one round of local training, ``work_samples / samples_per_s``,
    computed when asked (the same numbers as the whole array, without keeping it)."""

    def __init__(self, work_samples: np.ndarray, samples_per_s: np.ndarray) -> None:
        self.work_samples, self.samples_per_s = work_samples, samples_per_s

    def __getitem__(self, clients: Any) -> Any:
        return self.work_samples[clients] / self.samples_per_s[clients]


class Devices:
    """What every client device works with in a round, and their shared tally.

    Parameters
    ----------
    links:
        The downlink and the uplink.
    mac:
        Medium access on the uplink.
    energy:
        The energy meter (a battery, or an infinite source) charged for round work.
    compute_s:
        Each client's time for one round of local training.
    samples_per_s:
        Each client's processing speed (for the work of query exchanges).
    """

    def __init__(self, env: simpy.Environment, rngs: RngTree, *, links: Links,
                 mac: MediumAccess, energy: EnergyMeter, model_bytes: int,
                 arq_max_attempts: int, compute_s: np.ndarray | ComputeTimes,
                 samples_per_s: np.ndarray,
                 n_samples: np.ndarray, log: Log, upload_bits: int | None = None) -> None:
        self.env, self.rngs = env, rngs
        self.links, self.mac, self.energy = links, mac, energy
        self.model_bytes = model_bytes
        #: one upload's payload bits (None: the model's bytes) and the bytes it takes
        self.upload_bits = upload_bits
        self.upload_bytes = model_bytes if upload_bits is None else upload_bytes(upload_bits)
        self.arq_max_attempts = arq_max_attempts
        self.compute_s = compute_s
        self.samples_per_s = samples_per_s
        self.n_samples = n_samples
        self.log = log
        self.retries = 0  # retransmissions so far (every round and exchange)
        #: with a broadcast downlink, this round's download time (else None: unicast)
        self.broadcast_s: float | None = None
        mac.bind_upload(energy, links.uplink, self.upload_bytes)

    def transfer(self, direction: str, client: int, round: int, n_bytes: int, *,
                 stream: str, share: Share | None = None, serve: Serve | None = None,
                 charge: bool = False) -> Generator[simpy.Event, object, bool]:
        """Send ``n_bytes`` of ``client`` on the link of ``direction`` (ARQ); True once
        through. Channel draws come from the stream tagged ``stream``; ``share`` is the
        MAC's sharing rule (round uploads), ``serve`` its shared band (if any); with
        ``charge`` each attempt costs energy."""
        link: Link = getattr(self.links, direction)
        rng = (self.rngs.stream(f"channel/{direction}/{client}/{stream}/{round}")
               if link.draws else None)
        state = "tx" if direction == "uplink" else "rx"

        def attempt(airtime_s: float, wall_s: float, bursts: Bursts | None) -> None:
            self.energy.switch(client, state, 8 * n_bytes, airtime_s, bursts)

        def lost(number: int, retrying: bool) -> None:
            self.log(self.env.now, EventKind.ATTEMPT_LOST, round, client, f"{direction} {number}")
            self.retries += retrying

        return (yield from arq_transfer(self.env, link, n_bytes, rng, client=client,
                                        max_attempts=self.arq_max_attempts, share=share,
                                        serve=serve,
                                        on_attempt=attempt if charge else None, on_lost=lost))


class DeviceUplink:
    """``client``'s upload in ``round`` as its MAC sees it (an
    :class:`~simfl.sim.mac.protocol.Uplink`): the devices' uplink with ARQ, each attempt
    charged and its losses recorded, and the radio's idle wait for access."""

    __slots__ = ("devices", "client", "round")

    def __init__(self, devices: Devices, client: int, round: int) -> None:
        self.devices, self.client, self.round = devices, client, round

    def send(self, share: Share | None = None, serve: Serve | None = None
             ) -> Generator[simpy.Event, object, bool]:
        d = self.devices
        return d.transfer("uplink", self.client, self.round, d.upload_bytes, stream="round",
                          share=share, serve=serve, charge=True)

    def wait(self) -> None:
        self.devices.energy.switch(self.client, "idle")


def device_round(devices: Devices, client: int,
                 round: int) -> Generator[simpy.Event, object, Arrival | Missing]:
    """SimPy process of ``client`` in ``round``; returns Arrival or Missing.

    An interrupt ends it: with cause ``"battery"`` or ``"offline"`` (the device died or
    left) that is the reason; any other cause (the server closed the round) is ``late``.
    """
    env, mac, energy, log = devices.env, devices.mac, devices.energy, devices.log
    process = env.active_process
    assert process is not None, "runs as a SimPy process"
    energy.begin(client, process)
    try:
        if devices.broadcast_s is not None:  # one transmission to all: never lost
            energy.switch(client, "rx", 8 * devices.model_bytes, devices.broadcast_s)
            yield env.timeout(devices.broadcast_s)
        elif not (yield from devices.transfer("downlink", client, round, devices.model_bytes,
                                              stream="round", serve=mac.serve_download,
                                              charge=True)):
            return _missing(devices, client, round, MissingReason.ERASED, "downlink")
        energy.switch(client, "compute")
        yield env.timeout(float(devices.compute_s[client]))
        log(env.now, EventKind.COMPUTED, round, client, "")
        refusal = yield from mac.transmit(client, DeviceUplink(devices, client, round))
        if refusal is not None:
            return _missing(devices, client, round, *refusal)
        log(env.now, EventKind.ARRIVED, round, client, "")
        return Arrival(client, round, env.now, int(devices.n_samples[client]))
    except simpy.Interrupt as stop:
        reason = MissingReason(stop.cause) if stop.cause in DEVICE_FAULTS else MissingReason.LATE
        if mac.leave(client) and reason == MissingReason.LATE:
            reason = MissingReason.COLLIDED  # still contending for the uplink at the close
        return _missing(devices, client, round, reason, str(stop.cause))
    finally:
        energy.end(client)


def _missing(devices: Devices, client: int, round: int, reason: MissingReason,
             detail: str) -> Missing:
    devices.log(devices.env.now, reason, round, client, detail)
    return Missing(client, reason, devices.env.now)
