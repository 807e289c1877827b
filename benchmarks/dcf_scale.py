"""Saturated IEEE 802.11 DCF at scale: N stations, each sending an S-byte update in one round.

A timing-only run of ``n`` synthetic clients, all invited, all computing equally long (so
they start contending together), each uploading ``update_bytes`` over ``csma_ca`` at
1 Mbit/s with a deadline that never binds. Prints wall and CPU seconds, peak memory, the
busy periods (successes + collisions from mac.csv) and transmissions per second.

Run pinned to one core::

    OMP_NUM_THREADS=1 taskset -c 1 python benchmarks/dcf_scale.py --stations 1000 \\
        --update-bytes 1000000 --retry-limit none

``--profile FILE`` writes a cProfile dump of the run (read with ``pstats``).
"""

from __future__ import annotations

import argparse
import csv
import cProfile
import json
import resource
import tempfile
import time
from pathlib import Path


def dcf_scenario(n: int, update_bytes: int, retry_limit: int | None, seed: int = 1,
                 energy: bool = True):
    """The saturated scenario: ``n`` clients invited at once, identical compute."""
    import simfl
    from simfl.core.config import apply_overrides, parse_override

    scenario = simfl.Scenario(
        name="dcf_scale", seed=seed,
        task=simfl.Task(dataset=simfl.Synthetic(), partition=simfl.Iid(), n_clients=n),
        server=simfl.Server(clients_per_round=n, deadline_s=1e7),
        run=simfl.Run(rounds=1, timing_only=True))
    limit = "null" if retry_limit is None else str(retry_limit)
    overrides = ["network.mac.kind=csma_ca", f"network.mac.retry_limit={limit}",
                 f"network.model_bytes={update_bytes}", "population.compute.sigma=0.0",
                 "task.partition.kind=iid"]
    if energy:
        overrides.append("population.energy.idle_w=0.1")
    return apply_overrides(scenario, [parse_override(s) for s in overrides])


def measure(n: int, update_bytes: int, retry_limit: int | None, profile: str | None = None,
            keep: str | None = None) -> dict:
    """Run the scenario once; its figures (``keep``: copy the run folder there)."""
    from simfl.experiment import run_scenario

    scenario = dcf_scenario(n, update_bytes, retry_limit)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(keep) if keep else Path(tmp) / "run"
        prof = cProfile.Profile() if profile else None
        start, cpu = time.perf_counter(), time.process_time()
        if prof:
            prof.enable()
        run_scenario(scenario, out)
        if prof:
            prof.disable()
            prof.dump_stats(profile)
        wall_s, cpu_s = time.perf_counter() - start, time.process_time() - cpu
        with open(out / "mac.csv") as f:
            rows = list(csv.DictReader(f))
        with open(out / "clients.csv") as f:
            clients = list(csv.DictReader(f))
        with open(out / "rounds.csv") as f:
            rounds = list(csv.DictReader(f))
    successes = sum(int(r["successes"]) for r in rows)
    collisions = sum(int(r.get("collision_slots") or 0) for r in rows)
    busy = successes + collisions
    return {"stations": n, "update_bytes": update_bytes, "retry_limit": retry_limit,
            "wall_s": round(wall_s, 3), "cpu_s": round(cpu_s, 3),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "busy_periods": busy, "successes": successes, "collisions": collisions,
            "busy_per_s": round(busy / wall_s),
            "busy_per_cpu_s": round(busy / cpu_s),
            "received": sum(int(r["n_received"]) for r in rounds),
            "collided": sum(int(r["n_collided"]) for r in rounds),
            "energy_j": sum(float(c.get("energy_j") or 0) for c in clients)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stations", type=int, default=100)
    parser.add_argument("--update-bytes", type=int, default=1_000_000)
    parser.add_argument("--retry-limit", default="none", help="an integer, or none")
    parser.add_argument("--profile", default=None, help="write a cProfile dump here")
    parser.add_argument("--keep", default=None, help="keep the run folder here")
    args = parser.parse_args()
    limit = None if args.retry_limit.lower() in ("none", "null") else int(args.retry_limit)
    print(json.dumps(measure(args.stations, args.update_bytes, limit, args.profile, args.keep)))


if __name__ == "__main__":
    main()
