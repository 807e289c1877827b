"""A client device's part of one synchronous round: download, compute, upload.

Each step takes simulated time; transfers go through the device's links with up to
``arq_max_attempts`` back-to-back attempts. The process never raises: it returns an
:class:`Arrival` or a :class:`Missing` with its reason, so that a failure cannot
propagate through the server's wait condition (SimPy pitfall: failed events inside
``AnyOf`` crash the run).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generator

import simpy

from simfl.core.records import Arrival, Missing

#: interrupt causes that are the device's own fault rather than the server's deadline
DEVICE_FAULTS = ("battery", "offline")

if TYPE_CHECKING:
    from simfl.sim.simulation import Simulation


def device_round(sim: "Simulation", client: int, round: int) -> Generator:
    """SimPy process of ``client`` in ``round``; returns Arrival or Missing.

    An interrupt ends it: with cause ``"battery"`` or ``"offline"`` (the device died or
    left) that is the reason; any other cause (the server closed the round) is ``late``.
    """
    env = sim.env
    sim.battery.begin(client, env.active_process)
    try:
        if not (yield from _transfer(sim, "downlink", client, round)):
            return _missing(sim, client, round, "erased", "downlink")
        sim.battery.switch(client, "compute")
        yield env.timeout(sim.compute_s(client))
        sim.log(env.now, "computed", round, client)
        access = sim.mac.request(client)
        if access is not None:  # contending: awake (idle power); the MAC charges each try
            sim.battery.switch(client, "idle")
        if access is not None and not (yield access):
            return _missing(sim, client, round, "collided", "mac retry limit")
        if not (yield from _transfer(sim, "uplink", client, round)):
            return _missing(sim, client, round, "erased", "uplink")
        if not sim.mac.forwards(client):
            return _missing(sim, client, round, "collided", "relay")
        sim.log(env.now, "arrived", round, client)
        return Arrival(client, round, env.now, int(sim.n_samples[client]))
    except simpy.Interrupt as stop:
        reason = stop.cause if stop.cause in DEVICE_FAULTS else "late"
        if sim.mac.leave(client) and reason == "late":
            reason = "collided"  # still contending for the uplink when the round closed
        return _missing(sim, client, round, reason, str(stop.cause))
    finally:
        sim.battery.end(client)


def _transfer(sim: "Simulation", direction: str, client: int, round: int,
              n_bytes: int | None = None, stream: str = "round") -> Generator:
    """Send ``n_bytes`` (the model by default) with ARQ; True once an attempt gets through."""
    link = sim.links[direction]
    rng = sim.rngs.stream(f"channel/{direction}/{client}/{stream}/{round}") if link.draws else None
    n_bytes = sim.model_bytes if n_bytes is None else n_bytes
    for attempt in range(sim.arq_max_attempts):
        delivery = link.transmit(sim.env.now, n_bytes, rng, client=client)
        wall_s = radio_s = delivery.airtime_s
        if direction == "uplink" and stream == "round":  # MAC sharing rule (e.g. TDMA slots)
            wall_s = sim.mac.wall_time_s(client, sim.env.now, delivery.airtime_s)
            radio_s = sim.mac.radio_s(client, delivery.airtime_s, wall_s)
        sim.battery.switch(client, "tx" if direction == "uplink" else "rx", 8 * n_bytes,
                           radio_s, wall_s)
        yield sim.env.timeout(wall_s)
        if delivery.ok:
            return True
        sim.log(sim.env.now, "attempt_lost", round, client, f"{direction} {attempt + 1}")
        if attempt + 1 < sim.arq_max_attempts:
            sim.retries += 1
    return False


def _missing(sim: "Simulation", client: int, round: int, reason: str, detail: str) -> Missing:
    sim.log(sim.env.now, reason, round, client, detail)
    return Missing(client, reason, sim.env.now)
