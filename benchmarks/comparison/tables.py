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
