"""MAC what-if study on ``scenarios/mac_whatif.py``: contention, then time to accuracy.

1. Timing-only sweep of the slotted-ALOHA access probability p and the number N of
   contending phones (every phone computes for the same time, so all N start
   contending in the same slot). Each run logs, per round, how many slots had n
   contenders and how many successes they carried (``mac_slots`` events in
   ``events.csv``); pooled over rounds, that is the simulated per-slot success rate with
   n contenders, plotted against N p (1-p)^(N-1).
2. Training runs of the scenario under three access schemes (ideal, TDMA, slotted
   ALOHA): accuracy against simulated time.

The runs are made through ``simfl.run`` (as ``simfl run mac_whatif --set ...`` would)
into ``--out``; a run directory that is already complete there is reused, and every
number and curve is read back from the run directories. Takes a few minutes::

    python analysis/mac_whatif.py [--out runs/mac_whatif_study] [--png mac_whatif.png]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from simfl import apply_overrides, load_scenario, run  # noqa: E402
from simfl.core.config import parse_override  # noqa: E402
from simfl.metrics.rundir import read_csv  # noqa: E402

SWEEP_N = (10, 40)
SWEEP_P = (0.01, 0.02, 0.05, 0.1, 0.2, 0.4)
SCHEMES = {
    "ideal": ["network.mac.kind=ideal"],
    "tdma (25 ms slots)": ["network.mac.kind=tdma", "network.mac.slot_s=0.025"],
    "slotted ALOHA (p = 0.1, 50 ms)": [],
}


def ensure_run(out: Path, name: str, sets: list[str]) -> Path:
    """The run directory ``out/name`` of mac_whatif with ``sets``, made if missing."""
    run_dir = out / name
    if not (run_dir / "summary.json").is_file():
        scenario = apply_overrides(load_scenario("mac_whatif"), [parse_override(s) for s in sets])
        run(scenario, run_dir)
    return run_dir


def slot_table(run_dir: Path) -> dict[int, list[int]]:
    """n contenders -> [slots, successes], pooled over the run's rounds."""
    table: dict[int, list[int]] = {}
    for row in read_csv(run_dir / "events.csv"):
        if row["kind"] != "mac_slots":
            continue
        for item in row["detail"].split():
            n, slots, wins = (int(v) for v in item.split(":"))
            entry = table.setdefault(n, [0, 0])
            entry[0] += slots
            entry[1] += wins
    return table


def aloha(n: int, p: float) -> float:
    return n * p * (1 - p) ** (n - 1)


def sweep(out: Path) -> dict[tuple[int, float], dict[int, list[int]]]:
    tables = {}
    for n in SWEEP_N:
        for p in SWEEP_P:
            run_dir = ensure_run(out, f"sweep_N{n}_p{p}", [
                "run.timing_only=true", "run.events=true", "run.rounds=200",
                f"task.n_clients={n}", f"server.clients_per_round={n}",
                f"network.mac.access_prob={p}", "population.compute.sigma=0",
                "task.partition.kind=iid", "server.deadline_s=10"])
            tables[n, p] = slot_table(run_dir)
    return tables


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/mac_whatif_study"))
    parser.add_argument("--png", type=Path, default=None)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    png = args.png or args.out / "mac_whatif.png"

    tables = sweep(args.out)
    print(f"{'N':>3} {'p':>5} {'slots':>6} {'simulated':>9} {'N p (1-p)^(N-1)':>15} {'z':>6}")
    for (n, p), table in tables.items():
        slots, wins = table.get(n, [0, 0])
        expected = aloha(n, p)
        se = math.sqrt(expected * (1 - expected) / slots) if slots else math.nan
        z = (wins / slots - expected) / se if slots and se > 0 else math.nan
        print(f"{n:>3} {p:>5} {slots:>6} {wins / max(slots, 1):>9.4f} {expected:>15.4f} {z:>6.2f}")

    runs = {label: ensure_run(args.out, f"train_{i}", sets)
            for i, (label, sets) in enumerate(SCHEMES.items())}

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    ax = axes[0]
    grid = [SWEEP_P[0] * (SWEEP_P[-1] / SWEEP_P[0]) ** (i / 99) for i in range(100)]
    for n, colour in zip(SWEEP_N, ("C0", "C1")):
        ax.plot(grid, [aloha(n, p) for p in grid], color=colour, label=f"N p (1-p)^(N-1), N = {n}")
        points = [(p, tables[n, p].get(n, [0, 0])) for p in SWEEP_P]
        ax.errorbar([p for p, (s, _) in points if s], [w / s for _, (s, w) in points if s],
                    yerr=[2 * math.sqrt(aloha(n, p) * (1 - aloha(n, p)) / s)
                          for p, (s, _) in points if s],
                    fmt="o", color=colour, label=f"simulated, {n} contending")
    ax.set(xscale="log", xlabel="access probability p", ylabel="successes per slot",
           title="(a) all N phones contending")
    ax.legend(fontsize=8)

    ax = axes[1]
    n_max = max(SWEEP_N)
    for p, colour in zip((0.05, 0.1), ("C2", "C3")):
        table = tables[n_max, p]
        ns = sorted(n for n, (s, _) in table.items() if s >= 100)
        ax.plot(range(1, n_max + 1), [aloha(n, p) for n in range(1, n_max + 1)], color=colour,
                label=f"n p (1-p)^(n-1), p = {p}")
        ax.errorbar(ns, [table[n][1] / table[n][0] for n in ns],
                    yerr=[2 * math.sqrt(aloha(n, p) * (1 - aloha(n, p)) / table[n][0]) for n in ns],
                    fmt="o", ms=3, color=colour,
                    label=f"simulated (slots with n contenders), p = {p}")
    ax.set(xlabel="contending phones n", ylabel="successes per slot",
           title=f"(b) as phones leave once through (N = {n_max})")
    ax.legend(fontsize=8)

    ax = axes[2]
    target = None
    for label, run_dir in runs.items():
        evals = read_csv(run_dir / "evals.csv")
        summary = json.loads((run_dir / "summary.json").read_text())
        rounds = read_csv(run_dir / "rounds.csv")
        collided = sum(int(r["n_collided"]) for r in rounds) / len(rounds)
        tta = summary["time_to_target_s"]
        config = json.loads((run_dir / "config.json").read_text())
        target = config["scenario"]["run"]["target_accuracy"]
        ax.plot([float(e["t_s"]) for e in evals], [float(e["accuracy"]) for e in evals],
                label=f"{label}: {collided:.1f} collided/round, "
                      f"target at {'%.0f s' % tta if tta is not None else 'never'}")
        print(f"{label}: time to {target} = {tta}, final accuracy "
              f"{summary['final_accuracy']:.4f}, {collided:.2f} collided per round, "
              f"simulated {summary['sim_time_s']:.1f} s")
    if target is not None:
        ax.axhline(target, color="grey", ls="--", lw=1)
    ax.set(xlabel="simulated time (s)", ylabel="test accuracy",
           title="(c) time to accuracy, 20 phones, 3 s deadline")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"figure: {png}")


if __name__ == "__main__":
    main()
