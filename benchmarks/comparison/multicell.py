"""The multi-cell workload (child side): a timing-only run of many clients in a 3GPP
urban-macro layout of 19 sites with 3 sectors each (57 cells, wrapped around), uplinks
sharing each cell's band under OFDMA with inter-cell interference, NR fractional power
control and the amplifier's energy.

Two variants, which the command line interleaves: ``interference = "average"`` (every
start or end of an upload recomputes the noise rise at each of the 57 access points) and
``"none"`` (the same layout and uploads, each cell on its own): the difference is what
the interference model costs per event.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from .reference import SEED

#: the variants, in the order they are interleaved
MULTICELL_VARIANTS = ("average", "none")
SITES_RINGS, SECTORS, ISD_M = 2, 3, 500.0  # 19 sites x 3 sectors


def multicell_scenario(n_clients: int, per_round: int, rounds: int, interference: str):
    """The workload's scenario: ``n_clients`` synthetic clients dropped in the 57 sectors,
    ``per_round`` invited each round, ``rounds`` rounds, timing only."""
    import simfl

    return simfl.Scenario(
        name="bench_multicell", seed=SEED,
        task=simfl.Task(dataset=simfl.Synthetic(), partition=simfl.Iid(), n_clients=n_clients),
        population=simfl.Population(
            placement=simfl.HexagonalPlacement(min_m=35.0),
            energy=simfl.Energy(amplifier=simfl.Amplifier())),
        network=simfl.Network(
            uplink=simfl.IdealChannel(), downlink=simfl.IdealChannel(),
            cells=simfl.Cells(hexagonal=simfl.Hexagonal(rings=SITES_RINGS, isd_m=ISD_M,
                                                        sectors=SECTORS)),
            radio=simfl.Radio(path_loss=simfl.Uma(), bandwidth_hz=10e6,
                              power_control=simfl.FractionalPower()),
            mac=simfl.OfdmaMac(scheduler="equal", downlink="private", interference=interference),
            model_bytes=250_000),
        server=simfl.Server(clients_per_round=per_round, deadline_s=60.0),
        run=simfl.Run(rounds=rounds, timing_only=True))


def arm_multicell(n_clients: int, per_round: int, rounds: int, interference: str) -> dict:
    """Wall and CPU seconds of the run (building included), its events and rounds."""
    from simfl.experiment import run_scenario

    scenario = multicell_scenario(n_clients, per_round, rounds, interference)
    start, cpu_start = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        summary = run_scenario(scenario, Path(tmp) / "run").summary
    wall_s, cpu_s = time.perf_counter() - start, time.process_time() - cpu_start
    return {"wall_s": wall_s, "cpu_s": cpu_s, "events": summary["events"],
            "rounds": summary["rounds"], "cells": len(scenario.network.cells.access_points),
            "interference": interference, "trained_updates": summary["trained_updates"],
            "aggregated_updates": summary["aggregated_updates"]}


def multicell_table(runs: dict[str, list[dict]], n_clients: int, per_round: int,
                    core: int) -> list[str]:
    """Events and rounds per CPU second of each variant: min / median / max over its
    repetitions."""
    import statistics

    lines = [f"multicell workload: timing only, {n_clients:,} clients in 19 UMa sites x 3 "
             f"sectors (57 cells, wraparound), {per_round:,} invited per round, OFDMA "
             f"(equal shares) with fractional power control; pinned to core {core}, one "
             "thread, variants interleaved; min / median / max over the repetitions",
             f"{'interference':<13} {'reps':>4} {'events':>8} {'rounds':>6} "
             f"{'CPU s':>20} {'events/CPU s':>24} {'rounds/CPU s':>20}"]

    def spread(values: list[float], form: str) -> str:
        return " / ".join(format(v, form) for v in (min(values), statistics.median(values),
                                                    max(values)))

    for variant, reps in runs.items():
        done = [r for r in reps if "cpu_s" in r]
        if not done:
            lines.append(f"{variant:<13} {reps[0].get('error') if reps else 'not run'}")
            continue
        cpu = [r["cpu_s"] for r in done]
        lines.append(f"{variant:<13} {len(done):>4} {done[0]['events']:>8,} "
                     f"{done[0]['rounds']:>6} {spread(cpu, '.2f'):>20} "
                     f"{spread([r['events'] / r['cpu_s'] for r in done], ',.0f'):>24} "
                     f"{spread([r['rounds'] / r['cpu_s'] for r in done], '.3f'):>20}")
    return lines
