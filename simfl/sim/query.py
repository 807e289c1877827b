"""A client's part of a query exchange: model down, some local work, a short answer up.

Samplers that ask clients something before inviting them (Power-of-Choice's loss
query, FedGS's graph-building round) use this process through
:meth:`simfl.sim.simulation.Simulation.run_query`. Like a training round it takes
simulated time on the links and the device; it never raises and returns the client's
id when its answer arrived, or None. Not modelled: energy, and availability changes
during the exchange (the caller asks only clients it believes reachable).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generator

import simpy

from simfl.sim.device import _transfer

if TYPE_CHECKING:
    from simfl.sim.simulation import Simulation


def device_query(sim: "Simulation", client: int, round: int, work_samples: float,
                 reply_bytes: int, stream: str) -> Generator:
    """SimPy process: download, process ``work_samples`` samples, upload ``reply_bytes``."""
    env = sim.env
    try:
        if not (yield from _transfer(sim, "downlink", client, round, stream=stream)):
            sim.log(env.now, f"{stream}_lost", round, client, "downlink")
            return None
        yield env.timeout(work_samples / sim.samples_per_s[client])
        if not (yield from _transfer(sim, "uplink", client, round, reply_bytes, stream)):
            sim.log(env.now, f"{stream}_lost", round, client, "uplink")
            return None
        sim.log(env.now, f"{stream}_answered", round, client)
        return client
    except simpy.Interrupt:
        sim.log(env.now, f"{stream}_lost", round, client, "late")
        return None
