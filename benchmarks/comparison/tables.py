"""The printed tables: the reference workload's arms side by side with the FLOP floor,
and the cnn workload's repetitions."""

from __future__ import annotations

import statistics

from .flops import reference_flop, reference_flop_6p
from .reference import CNN_ARMS


def _ratio(reference_ms: float | None, ms: float) -> str:
    return "-" if reference_ms is None else f"{reference_ms / ms:.2f}x"


def reference_table(results: dict, peak: float) -> list[str]:
    lines = [f"{'model':<7} {'K':>4} {'arm':<14} {'ms/round':>9} {'peak MB':>8} "
             f"{'GFLOP/s':>8} {'%peak':>6} {'vs plain':>9} {'vs flower':>10} {'acc':>6}"]
    for (model, cohort), arms in results.items():
        gflop = reference_flop(model, cohort * 40) / 1e9  # 40 samples per client, 1 epoch
        lines.append(f"{model:<7} {cohort:>4} {'FLOP floor':<14} {1e3 * gflop / peak:>9.1f}  "
                     f"({gflop:.3f} GFLOP of training at the matmul peak; 6 x parameters "
                     f"would say {reference_flop_6p(model, cohort * 40) / 1e9:.3f})")
        plain = arms.get("plain", {}).get("ms")
        flower = arms.get("flower", {}).get("ms")
        for arm, r in arms.items():
            if "error" in r or "skipped" in r:
                lines.append(f"{model:<7} {cohort:>4} {arm:<14} {r.get('error') or r['skipped']}")
                continue
            rate = gflop / (r["ms"] / 1e3)
            lines.append(
                f"{model:<7} {cohort:>4} {arm:<14} {r['ms']:>9.1f} {r['peak_b'] / 2**20:>8.0f} "
                f"{rate:>8.1f} {100 * rate / peak:>6.1f} "
                f"{_ratio(plain, r['ms']):>9} {_ratio(flower, r['ms']):>10} "
                f"{r.get('accuracy') or float('nan'):>6.3f}")
    return lines


def cnn_table(r: dict, cohorts: list[int], core: int) -> list[str]:
    peak, flop = r["peak_gflops"], r["flop_per_client"]
    lines = [f"cnn workload: FedAvg's CNN (1,663,370 parameters), mnist5k, 1 local epoch of 40 "
             f"samples at batch 32, one round of training + summing the updates; one thread, "
             f"pinned to core {core}, repetitions interleaved; one-thread matmul peak "
             f"{peak:.0f} GFLOP/s",
             f"{'K':>4} {'arm':<8} {'min ms':>9} {'median':>9} {'max':>9} {'GFLOP/s':>8} "
             f"{'vs plain':>9}"]
    for cohort in cohorts:
        gflop = flop * cohort / 1e9
        plain = statistics.median(r["round_s"][f"{cohort}/plain"])
        for arm in CNN_ARMS:
            t = r["round_s"][f"{cohort}/{arm}"]
            med = statistics.median(t)
            lines.append(f"{cohort:>4} {arm:<8} {1e3 * min(t):>9.1f} {1e3 * med:>9.1f} "
                         f"{1e3 * max(t):>9.1f} {gflop / med:>8.1f} {plain / med:>8.2f}x")
        lines.append(f"{cohort:>4} {'floor':<8} {1e3 * gflop / peak:>9.1f}  ({gflop:.1f} GFLOP of "
                     "training at the one-thread matmul peak)")
    return lines


def pfl_table(results: dict[str, list[dict]], full_updates: int,
              steps_per_update: int) -> list[str]:
    """One row per arm of the pfl workload: CPU seconds per round (rounds after the first
    of each repetition; min / median / max over every such round), wall seconds per round,
    peak memory, and the ratios of median CPU time and peak memory to the plain loop's.
    An arm that trained other than ``steps_per_update`` steps per update, or (but for the
    arm with a network, which trains only what arrives) other than ``full_updates``
    updates, is marked."""
    def median_cpu(runs: list[dict]) -> float:
        return statistics.median(c for r in runs for c in r["cpu_s"][1:])

    def peak_gb(runs: list[dict]) -> float:
        return max(r["peak_b"] for r in runs) / 2**30

    done = {arm: [r for r in runs if "cpu_s" in r] for arm, runs in results.items()}
    plain = done.get("plain")
    lines = [f"{'arm':<14} {'CPU s/round: min':>16} {'median':>7} {'max':>6} {'wall s':>7} "
             f"{'peak GB':>8} {'CPU vs plain':>13} {'mem vs plain':>13} {'steps':>7} "
             f"{'updates':>8}"]
    for arm, runs in results.items():
        if not done[arm]:
            why = runs[0].get("error") or runs[0].get("skipped") if runs else "not run"
            lines.append(f"{arm:<14} {why}")
            continue
        cpu = [c for r in done[arm] for c in r["cpu_s"][1:]]
        wall = statistics.median(w for r in done[arm] for w in r["round_s"][1:])
        steps = {r["steps"] for r in done[arm]}
        updates = {r["updates"] for r in done[arm]}
        whole = all(r["steps"] == r["updates"] * steps_per_update for r in done[arm]) and (
            arm == "simfl_network" or updates == {full_updates})
        work = "" if whole else " (not the full work)"
        vs_cpu = f"{median_cpu(done[arm]) / median_cpu(plain):.2f}x" if plain else "-"
        vs_mem = f"{peak_gb(done[arm]) / peak_gb(plain):.2f}x" if plain else "-"
        lines.append(f"{arm:<14} {min(cpu):>16.2f} {statistics.median(cpu):>7.2f} "
                     f"{max(cpu):>6.2f} {wall:>7.2f} {peak_gb(done[arm]):>8.2f} {vs_cpu:>13} "
                     f"{vs_mem:>13} {'/'.join(map(str, sorted(steps))):>7} "
                     f"{'/'.join(map(str, sorted(updates))):>8}{work}")
    return lines


def kernel_table(runs: list[dict], core: int) -> list[str]:
    """simfl's events per CPU second against a bare SimPy loop's, per repetition."""
    done = [r for r in runs if "cpu_s" in r]
    if not done:
        return [f"kernel workload: {runs[0].get('error') if runs else 'not run'}"]
    lines = [f"kernel workload: timing-only quickstart population, 100,000 clients, 10,000 "
             f"invited per round, against a bare SimPy loop turning over as many events; "
             f"pinned to core {core}, {len(done)} repetitions",
             f"{'':<6} {'events':>9} {'SimPy events':>13} {'CPU s':>7} {'events/CPU s':>13} "
             f"{'bare SimPy events/CPU s':>24} {'simfl / bare':>13}"]
    for i, r in enumerate(done, 1):
        ours, bare = r["records"] / r["cpu_s"], r["bare_events"] / r["bare_cpu_s"]
        lines.append(f"rep {i:<2} {r['records']:>9,} {r['simpy_events']:>13,} {r['cpu_s']:>7.2f} "
                     f"{ours:>13,.0f} {bare:>24,.0f} {ours / bare:>12.2f}x")
    return lines
