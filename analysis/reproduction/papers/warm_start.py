"""The warm-start section: accuracy just after a returning session's switch, per
initialiser of its model."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..campaigns import Campaign, RunInfo
from ..figures import plot_panels, series
from ..sections import Section, setting_line, verdict_block
from ..tables import comparison_table, md_table
from ..verdicts import compare, mean_ci


def switch_scores(run: RunInfo) -> dict[int, tuple[float, float, float]]:
    """Per returning session (after the pilot and the restart): accuracy after its first
    round, mean of its first three rounds, and at its end."""
    evals = run.evals()
    first_warm = int(run.get("population.sessions.pilot_sessions", 1)) + 1
    out = {}
    sessions = evals["session"]
    for s in sorted({int(v) for v in sessions[np.isfinite(sessions)]}):
        if s < first_warm:
            continue
        acc = evals["accuracy"][(sessions == s) & (evals["round"] > 0)]
        if len(acc):
            out[s] = (float(acc[0]), float(acc[:3].mean()), float(acc[-1]))
    return out


def warm_start_section(c: Campaign, figures: Path) -> Section:
    claims: list[tuple[str, str, str]] = []
    body = [setting_line(c), ""]
    arms = [a for a in ("similarity", "previous", "average", "continuous") if c.arm(a)]
    scores = {a: {r.seed: switch_scores(r) for r in c.arm(a)} for a in arms}
    names = ("1 round after", "first 3 rounds", "session end")

    def metric(arm: str, i: int) -> dict[int, float]:
        return {seed: float(np.mean([v[i] for v in per.values()])) if per else math.nan
                for seed, per in scores[arm].items()}

    rows = [[a] + [mean_ci(metric(a, i).values()).text() for i in range(3)] for a in arms]
    body += ["Accuracy on the session's labels, averaged over the returning sessions "
             "(from the second session after the pilot on):", "",
             md_table(["initialiser", *names], rows)]
    sessions = sorted({s for a in arms for per in scores[a].values() for s in per})
    if sessions:
        rows = [[a] + [mean_ci(per[s][0] for per in scores[a].values() if s in per).text()
                       for s in sessions] for a in arms]
        body += ["Accuracy 1 round after each switch, per session:", "",
                 md_table(["initialiser", *[f"session {s}" for s in sessions]], rows)]
    comparisons = [compare(f"similarity > {b} ({names[i]})", metric("similarity", i),
                           metric(b, i))
                   for i in (0, 1) for b in arms if b != "similarity" and "similarity" in arms]
    if arms:
        plot_panels(figures / "warm_start.png",
                    [("accuracy on the session's labels",
                      {a: [series(r, "accuracy") for r in c.arm(a)] for a in arms})],
                    "test accuracy")
        body += ["![Warm starts: accuracy against rounds](figures/warm_start.png)", ""]
    end = [compare(f"similarity > {b} (session end)", metric("similarity", 2), metric(b, 2))
           for b in arms if b != "similarity" and "similarity" in arms]
    verdict_block("Starting a returning session from the similarity-weighted blend of the "
                  "earlier sessions' models gives a higher accuracy in the first rounds after "
                  "the switch (after 1 round and over the first 3) than starting from the "
                  "previous model, the average, or continuous distillation.", comparisons,
                  "accuracy", claims, body)
    body += ["For reference, not part of the claim: the session's end.", "",
             comparison_table(end, "accuracy")]
    return Section("Warm starts for alternating client groups", claims, body)
