"""The kernel workload (child side): how fast simfl's event loop turns over, against a bare
SimPy loop that processes the same number of events.

simfl's side is a timing-only run of the quickstart scenario's population (its devices,
availability, lossy links and deadline) grown to ``n_clients`` on the synthetic data set;
its events are the records it writes (each selection, arrival, loss, late upload, ...),
and the SimPy events its environment scheduled are counted from the environment itself
(fewer: a round's device chains run off the clock where the outcome is the same). The
bare loop is one process per invited client waiting on exponential timeouts, one per
simfl record, on a plain ``simpy.Environment``: what a SimPy model pays just to turn over
as many events.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from .reference import SEED


def _simfl_run(n_clients: int, per_round: int, rounds: int) -> tuple[float, float, int, int]:
    """(wall s, CPU s, SimPy events scheduled, events recorded) of the timing-only run."""
    import simpy

    from simfl.core.config import apply_overrides, parse_override
    from simfl.experiment import run_scenario
    from simfl.scenarios.quickstart import scenario as quickstart

    scenario = apply_overrides(quickstart(), [parse_override(s) for s in (
        'task.dataset={"kind": "synthetic"}', f"task.n_clients={n_clients}",
        f"server.clients_per_round={per_round}", f"run.rounds={rounds}", "run.timing_only=true",
        f"seed={SEED}")])
    envs: list[simpy.Environment] = []
    plain_init = simpy.Environment.__init__

    def init_and_keep(self, *args, **kwargs):
        plain_init(self, *args, **kwargs)
        envs.append(self)

    simpy.Environment.__init__ = init_and_keep
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            summary = run_scenario(scenario, Path(tmp) / "run").summary
    finally:
        simpy.Environment.__init__ = plain_init
    wall_s, cpu_s = time.perf_counter() - start, time.process_time() - cpu_start
    scheduled = sum(next(env._eid) for env in envs)  # the environment's event counter
    return wall_s, cpu_s, scheduled, summary["events"]


def _bare_simpy(n_processes: int, n_events: int) -> tuple[float, float, int]:
    """(wall s, CPU s, SimPy events scheduled) of ``n_events`` timeouts shared by
    ``n_processes`` processes (each process adds its start and its end)."""
    import numpy as np
    import simpy

    env = simpy.Environment()
    waits = np.random.default_rng(SEED).exponential(1.0, n_events).tolist()
    share = -(-n_events // n_processes)

    def proc(mine: list[float]):
        for wait in mine:
            yield env.timeout(wait)

    start, cpu_start = time.perf_counter(), time.process_time()
    for i in range(n_processes):
        mine = waits[i * share:(i + 1) * share]
        if mine:
            env.process(proc(mine))
    env.run()
    return time.perf_counter() - start, time.process_time() - cpu_start, next(env._eid)


def arm_kernel(n_clients: int, per_round: int, rounds: int) -> dict:
    wall_s, cpu_s, scheduled, recorded = _simfl_run(n_clients, per_round, rounds)
    bare_wall_s, bare_cpu_s, bare_events = _bare_simpy(per_round, recorded)
    return {"wall_s": wall_s, "cpu_s": cpu_s, "simpy_events": scheduled, "records": recorded,
            "bare_wall_s": bare_wall_s, "bare_cpu_s": bare_cpu_s, "bare_events": bare_events}
