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

import numpy as np
import simpy

from simfl.sim.clock import LateEvents
from simfl.sim.rounds.device import Devices


def device_query(devices: Devices, client: int, round: int, work_samples: float,
                 reply_bytes: int, stream: str) -> Generator[simpy.Event, object, int | None]:
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


def run_query(devices: Devices, late: LateEvents, round: int, clients: np.ndarray,
              work_samples: np.ndarray, reply_bytes: int, stream: str,
              deadline_s: float) -> np.ndarray:
    """Ask ``clients`` something and wait for their answers; return who answered (sorted).

    Each client gets the model on the downlink, processes ``work_samples[client]``
    samples at its speed and sends ``reply_bytes`` on the uplink (with ARQ, channel
    streams tagged ``stream``). The server waits until every answer is in or lost,
    at most ``deadline_s``; the clock advances by that wait. Assumes the asked
    clients are reachable (availability is the caller's choice); no energy is
    charged.
    """
    env = devices.env
    t_start = env.now
    procs = [env.process(device_query(devices, int(c), round, float(work_samples[c]),
                                      reply_bytes, stream)) for c in clients]
    devices.log(t_start, f"{stream}_open", round, -1, f"{len(procs)} asked")

    def wait() -> Generator[simpy.Event, object, None]:
        if procs:
            yield env.all_of(procs) | late.timeout(deadline_s)
        busy = [p for p in procs if p.is_alive]
        for proc in busy:
            proc.interrupt("deadline")
        if busy:
            yield env.all_of(busy)

    env.run(until=env.process(wait()))
    answered = np.array(sorted(p.value for p in procs if p.value is not None), dtype=np.int64)
    devices.log(env.now, f"{stream}_close", round, -1, f"{len(answered)} answered")
    return answered
