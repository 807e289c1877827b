"""Plots of the MAC what-if study, read from its run folders (nothing is re-run).

The runs are made by ``python scenarios/mac_whatif.py --sweep DIR``; this script reads
every run folder below DIR (a folder holding config.json, at any depth: the script's
own layout or a campaign's) and tells the runs apart by their ``config.json`` alone:

1. timing-only slotted-ALOHA runs (the sweep over the access probability p and the
   number N of contending phones): each round's ``mac_slots`` event in ``events.csv``
   says how many slots had n contenders and how many successes they carried; pooled
   over rounds (and over seeds, when there are several), that is the simulated per-slot
   success rate with n contenders, printed and plotted against n p (1-p)^(n-1) with
   binomial error bars (2 standard errors);
2. training runs: accuracy against simulated time, one line per access scheme, the
   mean over the runs that differ only by seed with a 95% confidence band (the grouping
   of ``simfl plot``); the time to the target is printed per scheme as the mean over
   the seeds that reached it.

Usage::

    python analysis/mac_whatif.py DIR [--png FILE.png]   # default DIR/mac_whatif.png
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import numpy as np  # noqa: E402

from simfl.core.errors import SimflError  # noqa: E402
from simfl.metrics.curves import band, build_lines, find_runs, read_run  # noqa: E402
from simfl.metrics.rundir import read_csv  # noqa: E402


def aloha(n: int, p: float) -> float:
    """Expected successes per slot with n contenders, each transmitting with probability p."""
    return n * p * (1 - p) ** (n - 1)


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


def scheme_label(mac: dict) -> str:
    if mac["kind"] == "slotted_aloha":
        return f"slotted ALOHA (p = {mac['access_prob']:g}, {mac['slot_s'] * 1e3:g} ms)"
    if mac["kind"] == "tdma":
        return f"tdma ({mac['slot_s'] * 1e3:g} ms slots)"
    return mac["kind"]


def read_study(folder: Path) -> tuple[dict, list]:
    """(N, p) -> slot table of the timing-only ALOHA runs (pooled over seeds); the
    finished training runs (:class:`simfl.metrics.curves.Run`)."""
    sweep: dict = {}
    training = []
    for run_dir in find_runs([folder])[0]:
        run = read_run(run_dir)
        mac = run.scenario["network"]["mac"]
        if run.scenario["run"]["timing_only"]:
            if mac["kind"] == "slotted_aloha" and (run_dir / "events.csv").is_file():
                key = (run.scenario["task"]["n_clients"], mac["access_prob"])
                table = sweep.setdefault(key, {})
                for n, (slots, wins) in slot_table(run_dir).items():
                    entry = table.setdefault(n, [0, 0])
                    entry[0] += slots
                    entry[1] += wins
        else:
            training.append(run)
    return sweep, training


def mean_and_half_width(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% t-interval (NaN for fewer than two values)."""
    mean, _, upper = band(np.asarray(values, dtype=float)[:, None], "ci")
    return float(mean[0]), math.nan if upper is None else float(upper[0] - mean[0])


def scheme_summary(runs) -> dict:
    """Per-seed numbers of one scheme's runs, averaged."""
    collided, tta, final = [], [], []
    for run in runs:
        rounds = read_csv(run.path / "rounds.csv")
        summary = json.loads((run.path / "summary.json").read_text())
        collided.append(sum(int(r["n_collided"]) for r in rounds) / len(rounds))
        final.append(summary["final_accuracy"])
        if summary["time_to_target_s"] is not None:
            tta.append(summary["time_to_target_s"])
    return {"seeds": len(runs), "collided": sum(collided) / len(collided),
            "final": mean_and_half_width(final), "tta": mean_and_half_width(tta) if tta else None,
            "reached": len(tta)}


def errorbar(ax, p_or_n, table_entries, rate, colour, label, **style) -> None:
    """Simulated successes per slot with 2 binomial standard errors of the oracle ``rate``."""
    points = [(x, s, w, rate(x)) for x, (s, w) in zip(p_or_n, table_entries) if s]
    ax.errorbar([x for x, *_ in points], [w / s for _, s, w, _ in points],
                yerr=[2 * math.sqrt(r * (1 - r) / s) for _, s, _, r in points],
                fmt="o", color=colour, label=label, **style)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the DIR given to scenarios/mac_whatif.py --sweep")
    parser.add_argument("--png", type=Path, default=None)
    args = parser.parse_args()
    png = args.png or args.folder / "mac_whatif.png"
    try:
        sweep, training = read_study(args.folder)
    except SimflError as err:
        raise SystemExit(f"{err}: run python scenarios/mac_whatif.py --sweep {args.folder} first")
    if not sweep and not training:
        raise SystemExit(f"no run directories in {args.folder}: run "
                         f"python scenarios/mac_whatif.py --sweep {args.folder} first")

    print(f"{'N':>3} {'p':>5} {'slots':>6} {'simulated':>9} {'N p (1-p)^(N-1)':>15} {'z':>6}")
    for (n, p), table in sorted(sweep.items()):
        slots, wins = table.get(n, [0, 0])
        expected = aloha(n, p)
        se = math.sqrt(expected * (1 - expected) / slots) if slots else math.nan
        z = (wins / slots - expected) / se if slots and se > 0 else math.nan
        print(f"{n:>3} {p:>5} {slots:>6} {wins / max(slots, 1):>9.4f} {expected:>15.4f} {z:>6.2f}")

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    ax = axes[0]
    ns = sorted({n for n, _ in sweep})
    for n, colour in zip(ns, ("C0", "C1", "C4", "C5")):
        ps = sorted(p for m, p in sweep if m == n)
        grid = [ps[0] * (ps[-1] / ps[0]) ** (i / 99) for i in range(100)]
        ax.plot(grid, [aloha(n, p) for p in grid], color=colour, label=f"N p (1-p)^(N-1), N = {n}")
        errorbar(ax, ps, [sweep[n, p].get(n, [0, 0]) for p in ps], lambda p: aloha(n, p),
                 colour, f"simulated, {n} contending")
    ax.set(xscale="log", xlabel="access probability p", ylabel="successes per slot",
           title="(a) all N phones contending")
    ax.legend(fontsize=8)

    ax = axes[1]
    n_max = max(ns, default=0)
    for p, colour in zip((0.05, 0.1), ("C2", "C3")):
        if (n_max, p) not in sweep:
            continue
        table = sweep[n_max, p]
        counts = sorted(n for n, (s, _) in table.items() if s >= 100)
        ax.plot(range(1, n_max + 1), [aloha(n, p) for n in range(1, n_max + 1)], color=colour,
                label=f"n p (1-p)^(n-1), p = {p}")
        errorbar(ax, counts, [table[n] for n in counts], lambda n: aloha(n, p), colour,
                 f"simulated (slots with n contenders), p = {p}", ms=3)
    ax.set(xlabel="contending phones n", ylabel="successes per slot",
           title=f"(b) as phones leave once through (N = {n_max})")
    ax.legend(fontsize=8)

    ax = axes[2]
    target = None
    lines = build_lines(training, "accuracy") if training else []
    for line in lines:
        label = scheme_label(line.runs[0].scenario["network"]["mac"])
        numbers = scheme_summary(line.runs)
        target = line.runs[0].target_accuracy
        tta = numbers["tta"]
        reached = (f"target at {tta[0]:.0f} s" if tta else "target never") + (
            f" ({numbers['reached']}/{numbers['seeds']} seeds)" if numbers["seeds"] > 1 else "")
        (drawn,) = ax.plot(line.x, line.mean, drawstyle="steps-post",
                           label=f"{label}:\n{numbers['collided']:.1f} collided/round, {reached}")
        if line.lower is not None:
            ax.fill_between(line.x, line.lower, line.upper, step="post", alpha=0.2,
                            color=drawn.get_color(), linewidth=0)
        final, final_hw = numbers["final"]
        tta_text = "never" if tta is None else (
            f"{tta[0]:.1f} s" + ("" if math.isnan(tta[1]) else f" ± {tta[1]:.1f} s"))
        print(f"{label}: {numbers['seeds']} seed(s), time to {target} = {tta_text} "
              f"(reached by {numbers['reached']}), final accuracy {final:.4f}"
              + ("" if math.isnan(final_hw) else f" ± {final_hw:.4f}")
              + f", {numbers['collided']:.2f} collided per round")
    if target is not None:
        ax.axhline(target, color="grey", ls="--", lw=1)
    if lines:  # the view spans the runs' values: a wide interval of few seeds is cut
        lo = min(line.runs_range[0] for line in lines)
        hi = max([line.runs_range[1] for line in lines] + [target or 0.0])
        ax.set_ylim(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
    seeds = max((len(line.runs) for line in lines), default=0)
    ax.set(xlabel="simulated time (s)", ylabel="test accuracy",
           title="(c) time to accuracy, 20 phones, 3 s deadline"
           + (f"\n(mean of {seeds} seeds, 95% CI)" if seeds > 1 else ""))
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"figure: {png}")


if __name__ == "__main__":
    main()
