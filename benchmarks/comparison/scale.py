"""The scale workload (child side): a timing-only run of many registered synthetic clients,
slotted-ALOHA uplink access when that MAC is registered, optionally placed on the shared
radio."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from .reference import SEED


def scale_scenario(n_clients: int, contending: int, rounds: int, mac: str, radio: bool = False):
    import simfl
    from simfl.core.config import apply_overrides, parse_override
    from simfl.core.registry import registry

    scenario = simfl.Scenario(
        name="bench_scale", seed=SEED,
        task=simfl.Task(dataset=simfl.Synthetic(), partition=simfl.Iid(), n_clients=n_clients),
        server=simfl.Server(clients_per_round=contending, deadline_s=60.0),
        run=simfl.Run(rounds=rounds, timing_only=True))
    if mac.startswith("slotted_aloha") and "slotted_aloha" in registry("macs"):
        contention = "vectorised" if mac.endswith("_vectorised") else "per_event"
        scenario = apply_overrides(scenario, [parse_override(s) for s in (
            "network.mac.kind=slotted_aloha", f"network.mac.access_prob={1.0 / contending}",
            "network.mac.slot_s=0.001", "network.mac.channels=4",
            f"network.mac.contention={contention}")])
    if radio:
        scenario = apply_overrides(scenario, [parse_override(s) for s in (
            'population.placement={"kind": "disc", "radius_m": 500.0}',
            'network.radio={"shadowing_db": 8.0}', "network.uplink=ideal")])
    return scenario


def arm_scale(n_clients: int, contending: int, rounds: int, mac: str,
              radio: bool = False) -> dict:
    from simfl.experiment import run_scenario

    scenario = scale_scenario(n_clients, contending, rounds, mac, radio)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        summary = run_scenario(scenario, Path(tmp) / "run").summary
    wall_s = time.perf_counter() - start
    return {"wall_s": wall_s, "events": summary["events"], "mac": scenario.network.mac.kind,
            "rounds": summary["rounds"], "trained_updates": summary["trained_updates"],
            "aggregated_updates": summary["aggregated_updates"]}
