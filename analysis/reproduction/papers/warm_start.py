"""The warm-start section: accuracy just after a returning session's switch, per
initialiser of its model (the paper's metric: the mean over the first rounds after the
switch), per cell of the session grid and over all of them."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from simfl.metrics.curves import Series

from ..aligned import mean_series, since_each
from ..campaigns import Campaign, RunInfo
from ..figures import Panel, plot_panels, series
from ..sections import Section, setting_line, verdict_block
from ..tables import comparison_table, md_table
from ..verdicts import compare, mean_ci

#: rounds after a switch the claim's metric averages when a campaign does not say
DEFAULT_WINDOW = 10
#: the paper's accuracy over the first 10 rounds after a switch (MNIST, MLP)
PAPER_ACCURACY = {"similarity": 0.9097, "previous": 0.6234, "average": 0.9047}
#: the keys of a run's cell of the session grid
CELL_KEYS = (("population.sessions.label_overlap", "overlap"), ("task.partition.alpha", "dir"))


def switch_scores(run: RunInfo, window: int = 3) -> dict[int, tuple[float, float, float]]:
    """Per returning session (after the pilot and the restart): accuracy after its first
    round, mean of its first ``window`` rounds, and at its end."""
    evals = run.evals()
    first_warm = int(run.get("population.sessions.pilot_sessions", 1)) + 1
    out = {}
    sessions = evals["session"]
    for s in sorted({int(v) for v in sessions[np.isfinite(sessions)]}):
        if s < first_warm:
            continue
        acc = evals["accuracy"][(sessions == s) & (evals["round"] > 0)]
        if len(acc):
            out[s] = (float(acc[0]), float(acc[:window].mean()), float(acc[-1]))
    return out


def switch_rounds(run: RunInfo) -> list[float]:
    """The rounds at which the returning sessions start (the last round before each)."""
    evals = run.evals()
    first_warm = int(run.get("population.sessions.pilot_sessions", 1)) + 1
    rounds, sessions = evals["round"], evals["session"]
    return [float(rounds[sessions == s].min()) - 1
            for s in sorted({int(v) for v in sessions[np.isfinite(sessions)]}) if s >= first_warm]


def cell(run: RunInfo) -> str:
    """The run's cell of the session grid, e.g. ``overlap 2, dir 0.3`` (empty: no grid)."""
    return ", ".join(f"{name} {run.get(key):g}" for key, name in CELL_KEYS
                     if isinstance(run.get(key), (int, float)))


def warm_start_section(c: Campaign, figures: Path) -> Section:
    claims: list[tuple[str, str, str]] = []
    body = [setting_line(c), ""]
    window = int(c.meta.get("notes", {}).get("switch_window", DEFAULT_WINDOW))
    arms = [a for a in ("similarity", "previous", "average", "continuous") if c.arm(a)]
    cells = sorted({cell(r) for a in arms for r in c.arm(a)})
    scores = {a: {(r.seed, cell(r)): switch_scores(r, window) for r in c.arm(a)} for a in arms}
    names = ("1 round after", f"first {window} rounds", "session end")

    def metric(arm: str, i: int, where: str | None = None) -> dict[int, float]:
        """Per seed: the mean over the returning sessions (and over the grid's cells,
        unless ``where`` picks one)."""
        per_seed: dict[int, list[float]] = {}
        for (seed, at), per in scores[arm].items():
            if per and (where is None or at == where):
                per_seed.setdefault(seed, []).append(float(np.mean([v[i] for v in per.values()])))
        return {seed: float(np.mean(v)) if v else math.nan for seed, v in per_seed.items()}

    rows = [[a] + [mean_ci(metric(a, i).values()).text() for i in range(3)] for a in arms]
    body += ["Accuracy on the session's labels, averaged over the returning sessions "
             "(from the second session after the pilot on) and the grid's cells:", "",
             md_table(["initialiser", *names], rows)]
    if len(cells) > 1:
        rows = [[a] + [mean_ci(metric(a, 1, k).values()).text() for k in cells] for a in arms]
        body += [f"Mean accuracy over the first {window} rounds after a switch, per cell "
                 "(label overlap of the groups, Dirichlet alpha):", "",
                 md_table(["initialiser", *cells], rows)]
    best = "similarity" if "similarity" in arms else None
    comparisons = [compare(f"similarity > {b} (first {window} rounds)", metric(best, 1),
                           metric(b, 1), paper_effect=paper_gain(b))
                   for b in arms if best and b != best]
    if arms:
        plot_switches(c, arms, cells, figures / "warm_start.png")
        body += ["![Warm starts: accuracy against rounds since the switch]"
                 "(figures/warm_start.png)", ""]
    verdict_block("Starting a returning session from the similarity-weighted blend of the "
                  "earlier sessions' models gives a higher mean accuracy over the first "
                  f"{window} rounds after the switch than starting from the previous model, "
                  "the average, or continuous distillation.", comparisons, "accuracy",
                  claims, body, paper_effect="+0.2863 over previous, +0.0050 over average "
                  "(MNIST)")
    body += ["For reference, not part of the claim: 1 round after the switch and the "
             "session's end.", "",
             comparison_table([compare(f"similarity > {b} ({names[i]})", metric(best, i),
                                       metric(b, i))
                               for i in (0, 2) for b in arms if best and b != best], "accuracy")]
    return Section("Warm starts for alternating client groups", claims, body)


def paper_gain(baseline: str) -> float | None:
    """The paper's similarity-minus-``baseline`` accuracy after a switch, where it gives both."""
    if baseline not in PAPER_ACCURACY:
        return None
    return round(PAPER_ACCURACY["similarity"] - PAPER_ACCURACY[baseline], 4)


def after(piece: Series) -> Series:
    """An aligned piece without its point at the switch itself (measured on the
    previous session's labels)."""
    keep = piece.x > 0
    return Series(piece.x[keep], piece.y[keep])


def plot_switches(c: Campaign, arms: list[str], cells: list[str], path: Path) -> None:
    """One panel per cell of the grid: each run's accuracy aligned on the rounds since
    each returning session's switch and averaged over those switches."""
    panels = []
    for where in cells:
        lines = {}
        for a in arms:
            runs = [r for r in c.arm(a) if cell(r) == where]
            length = max((int(r.get("population.sessions.rounds_per_session", 10)) for r in runs),
                         default=10)
            lines[a] = [mean_series([after(p) for p in since_each(
                series(r, "accuracy"), switch_rounds(r), length)]) for r in runs]
        panels.append(Panel(where or "accuracy on the session's labels", lines,
                            xlabel="rounds since the switch"))
    plot_panels(path, panels, "test accuracy", ncols=2 if len(panels) > 2 else None)
