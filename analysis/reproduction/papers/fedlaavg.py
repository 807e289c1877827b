"""FedLaAvg's section: Example 1 against its closed form, and the accuracy's swing
within each day-night period of the diurnal study."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..campaigns import Campaign, RunInfo, by_seed
from ..figures import plot_panels, series
from ..sections import Section, setting_line, verdict_block
from ..tables import comparison_table, md_table
from ..verdicts import NOT_ASSESSED, NOT_REPRODUCED, REPRODUCED, compare, mean_ci


def example1_limit(gamma: float, t1: int, t2: int, e1: float = 0.0, e2: float = 1.0) -> float:
    """FedAvg's period-boundary limit in FedLaAvg's Example 1 (closed form)."""
    q = 1.0 - 2.0 * gamma
    return (q ** t2 * (e1 - e2) + e2 - q ** (t1 + t2) * e1) / (1.0 - q ** (t1 + t2))


def example1_objective(x: float, e1: float = 0.0, e2: float = 1.0) -> float:
    """The global objective of Example 1, the mean of (x - e_i)^2 over the two clients."""
    return ((x - e1) ** 2 + (x - e2) ** 2) / 2


#: tolerance of the Example 1 check on the test loss (float32 training)
EXAMPLE1_TOL = 1e-5


def diurnal_swing(run: RunInfo) -> tuple[float, float]:
    """Mean within-period swing (max - min accuracy) and mean accuracy over the whole
    day-night periods in the second half of the run."""
    evals = run.evals()
    period = 2 * int(run.get("population.availability.period_rounds", 10))
    rounds, acc = evals["round"], evals["accuracy"]
    last = int(rounds.max()) // period
    swings, means = [], []
    for k in range(last):
        if k * period < rounds.max() / 2:
            continue
        inside = (rounds > k * period) & (rounds <= (k + 1) * period) & np.isfinite(acc)
        if inside.any():
            swings.append(float(acc[inside].max() - acc[inside].min()))
            means.append(float(acc[inside].mean()))
    if not swings:  # shorter than two periods: the last period
        inside = (rounds > rounds.max() - period) & np.isfinite(acc)
        swings, means = [float(acc[inside].max() - acc[inside].min())], [float(acc[inside].mean())]
    return float(np.mean(swings)), float(np.mean(means))


def fedlaavg_section(c: Campaign, figures: Path) -> Section:
    claims: list[tuple[str, str, str]] = []
    body = [setting_line(c), ""]
    notes = c.meta.get("notes", {})
    t1, t2 = int(notes.get("t1", 1)), int(notes.get("t2", 3))
    rows, ok, assessed = [], True, 0
    for r in sorted(c.arm("example1-fedavg") + c.arm("example1-fedlaavg"),
                    key=lambda r: (r.arm, -float(r.get("task.lr")))):
        gamma = float(r.get("task.lr"))
        expected_x = example1_limit(gamma, t1, t2) if r.arm.endswith("fedavg") else 0.5
        expected = example1_objective(expected_x)
        loss = float(r.evals()["loss"][-1])
        gap = abs(loss - expected)
        distance = math.sqrt(max(loss - example1_objective(0.5), 0.0))
        ok = ok and gap <= EXAMPLE1_TOL
        assessed += 1
        rows.append([r.arm.split("-")[1], f"{gamma:g}", f"{expected_x:.6f}", f"{expected:.8f}",
                     f"{loss:.8f}", f"{distance:.6f}", f"{gap:.1e}"])
    body += ["Example 1, at the last period boundary (the runs are deterministic, one seed; "
             "|x - 0.5| is read back from the loss, F(x) = (x - 0.5)^2 + 1/4):", "",
             md_table(["method", "gamma", "closed-form limit x", "F(limit)", "simulated loss",
                       "simulated |x - 0.5|", "gap"], rows)]
    if assessed:
        verdict = REPRODUCED if ok else NOT_REPRODUCED
        reason = (f"every simulated loss is within {EXAMPLE1_TOL:g} of the closed form's"
                  if ok else f"a simulated loss is more than {EXAMPLE1_TOL:g} from the closed form's")
    else:
        verdict, reason = NOT_ASSESSED, "no Example 1 runs"
    claim = ("In Example 1, FedAvg converges to the biased period-boundary limit X(gamma) "
             "while FedLaAvg converges to the optimum x* = 0.5.")
    claims.append((claim, verdict, reason))
    body += [f"**Claim.** {claim}", "", f"**Verdict: {verdict}** ({reason}).", ""]

    fedavg, fedlaavg = c.arm("diurnal-fedavg"), c.arm("diurnal-fedlaavg")
    swing = {name: (by_seed(runs, lambda r: diurnal_swing(r)[0]),
                    by_seed(runs, lambda r: diurnal_swing(r)[1]))
             for name, runs in (("fedavg", fedavg), ("fedlaavg", fedlaavg))}
    body += ["Diurnal study: within-period swing (max - min accuracy inside each day-night "
             "period, averaged over the periods of the run's second half) and mean accuracy "
             "over the same periods:", "",
             md_table(["method", "swing", "mean accuracy"],
                      [[n, mean_ci(s.values()).text(), mean_ci(m.values()).text()]
                       for n, (s, m) in swing.items()])]
    if fedavg or fedlaavg:
        plot_panels(figures / "fedlaavg.png",
                    [("diurnal availability", {"fedavg": [series(r, "accuracy") for r in fedavg],
                                               "fedlaavg": [series(r, "accuracy")
                                                            for r in fedlaavg]})],
                    "test accuracy")
        body += ["![FedLaAvg: accuracy against rounds](figures/fedlaavg.png)", ""]
    comparisons = [compare("fedlaavg swing < fedavg swing", swing["fedlaavg"][0],
                           swing["fedavg"][0], higher_is_better=False)]
    verdict_block("Under day/night availability FedLaAvg's accuracy swings less within a "
                  "period than FedAvg's.", comparisons, "swing", claims, body)
    body += ["For reference, not part of the claim: mean accuracy.", "",
             comparison_table([compare("fedlaavg > fedavg (mean accuracy)", swing["fedlaavg"][1],
                                       swing["fedavg"][1])], "mean accuracy")]
    return Section("FedLaAvg: diurnal availability", claims, body)
