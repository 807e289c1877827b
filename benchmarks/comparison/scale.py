"""The scale workload (child side): a timing-only run of many registered synthetic clients,
slotted-ALOHA uplink access when that MAC is registered, an ideal or a lossy uplink,
optionally placed on the shared radio."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from .reference import SEED


def scale_scenario(n_clients: int, contending: int, rounds: int, mac: str, radio: bool = False,
                   access_prob: float | None = None, channels: int = 4, uplink: str = "ideal",
                   arq: int | None = None):
    """The scale scenario; slotted ALOHA with ``access_prob`` (default 1 / contending) on
    ``channels`` access channels (``access_prob * contending / channels``: the offered
    load per channel and slot when everyone contends). ``uplink``: ``ideal``,
    ``quickstart`` (the quickstart scenario's lossy uplink and its ARQ attempts) or a
    channel kind with its defaults; ``arq``: the ARQ attempts (default: quickstart's with
    its uplink, else one)."""
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
            "network.mac.kind=slotted_aloha", f"network.mac.access_prob={access_prob or 1.0 / contending}",
            "network.mac.slot_s=0.001", f"network.mac.channels={channels}",
            f"network.mac.contention={contention}")])
    if uplink != "ideal":
        scenario = apply_overrides(scenario, uplink_overrides(uplink, arq))
    if radio:
        scenario = apply_overrides(scenario, [parse_override(s) for s in (
            'population.placement={"kind": "disc", "radius_m": 500.0}',
            'network.radio={"shadowing_db": 8.0}', "network.uplink=ideal")])
    return scenario


def uplink_overrides(uplink: str, arq: int | None) -> list[tuple[str, object]]:
    """The overrides that put the scale scenario on ``uplink`` with ``arq`` attempts."""
    if uplink == "quickstart":
        from simfl.core.config.scripts import load_scenario

        network = load_scenario("quickstart").explicit_dict()["network"]
        arq = network["arq_max_attempts"] if arq is None else arq
        return [("network.uplink", network["uplink"]), ("network.arq_max_attempts", arq)]
    return [("network.uplink", uplink), ("network.arq_max_attempts", arq or 1)]


def arm_scale(n_clients: int, contending: int, rounds: int, mac: str,
              radio: bool = False, access_prob: float | None = None, channels: int = 4,
              uplink: str = "ideal", arq: int | None = None) -> dict:
    import simfl.experiment.build as build
    from simfl.experiment import run_scenario

    scenario = scale_scenario(n_clients, contending, rounds, mac, radio, access_prob, channels,
                              uplink, arq)
    macs = []  # the run's MAC, to count its contention transmissions afterwards
    plain_build = build.build_mac

    def build_and_keep(*args, **kwargs):
        macs.append(plain_build(*args, **kwargs))
        return macs[-1]

    build.build_mac = build_and_keep
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            summary = run_scenario(scenario, Path(tmp) / "run").summary
    finally:
        build.build_mac = plain_build
    wall_s, cpu_s = time.perf_counter() - start, time.process_time() - cpu_start
    tx = getattr(macs[-1], "tx_slots", None) if macs else None
    return {"wall_s": wall_s, "cpu_s": cpu_s, "events": summary["events"], "mac": scenario.network.mac.kind,
            "uplink": scenario.network.uplink.kind, "arq": scenario.network.arq_max_attempts,
            "transmissions": None if tx is None else int(tx.sum()),
            "rounds": summary["rounds"], "trained_updates": summary["trained_updates"],
            "aggregated_updates": summary["aggregated_updates"]}
