"""A client's part of a query exchange: model down, some local work, a short answer up.

Samplers that ask clients something before inviting them (Power-of-Choice's loss
query, FedGS's graph-building round) use this process through
:meth:`simfl.sim.simulation.Simulation.run_query`. Like a training round it takes
simulated time on the links (the same ARQ, without the MAC, whose contention is the
round's) and the device; it never raises and returns the client's id when its answer
arrived, or None. Not modelled: energy, and availability changes during the exchange
(the caller asks only clients it believes reachable).
"""

from __future__ import annotations

from typing import Generator

import simpy

from simfl.sim.device import Devices


def device_query(devices: Devices, client: int, round: int, work_samples: float,
                 reply_bytes: int, stream: str) -> Generator:
    """SimPy process: download, process ``work_samples`` samples, upload ``reply_bytes``."""
    env, log = devices.env, devices.log
    try:
        if not (yield from devices.transfer("downlink", client, round, devices.model_bytes,
                                            stream=stream)):
            log(env.now, f"{stream}_lost", round, client, "downlink")
            return None
        yield env.timeout(work_samples / devices.samples_per_s[client])
        if not (yield from devices.transfer("uplink", client, round, reply_bytes,
                                            stream=stream)):
            log(env.now, f"{stream}_lost", round, client, "uplink")
            return None
        log(env.now, f"{stream}_answered", round, client, "")
        return client
    except simpy.Interrupt:
        log(env.now, f"{stream}_lost", round, client, "late")
        return None
