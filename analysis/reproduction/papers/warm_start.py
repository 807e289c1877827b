"""The warm-start section: accuracy just after a returning session's switch, per FL
algorithm and initialiser of the session's model (the paper's metric: the mean over the
first rounds after the switch), each switch scored on its own.

Which switches are scored: session P (after the P pilot sessions) restarts every
initialiser from the initial model, and in session P + 1 every initialiser starts from
the one finished model W_P (previous, average and similarity coincide there); the
switches into sessions P + 2, P + 3, ... are the ones where the initialisers differ,
and each is compared on its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from simfl.metrics.curves import Series

from ..aligned import mean_series, since_each
from ..campaigns import Campaign, RunInfo
from ..figures import Panel, plot_panels, series
from ..sections import Section, setting_line, verdict_block
from ..tables import comparison_table, md_table
from ..verdicts import Comparison, compare, mean_ci

#: rounds after a switch the claim's metric averages when a campaign does not say
DEFAULT_WINDOW = 10
#: the paper's Fashion-MNIST accuracy over the first 10 rounds after a switch, at label
#: overlap 0 and Dirichlet 0.3 (the proposed similarity blend and the three baselines)
PAPER_ACCURACY = {"similarity": 0.8816, "previous": 0.7952, "average": 0.8795,
                  "continuous": 0.8395}
#: the paper's cell of the session grid, the one ``PAPER_ACCURACY`` belongs to
PAPER_CELL = "overlap 0, dir 0.3"
#: the FL algorithm whose runs are compared with the paper's row
PAPER_ALGORITHM = "fedavg"
INITIALISERS = ("similarity", "previous", "average", "continuous")
ALGORITHMS = ("fedavg", "fedprox", "scaffold")
#: the initialisers the claim compares the similarity blend with, in words
BASELINE_WORDS = {"previous": "the previous model", "average": "the average",
                  "continuous": "the previous model with continuous distillation"}
TITLE = "Warm starts for alternating client groups"
#: the keys of a run's cell of the session grid
CELL_KEYS = (("population.sessions.label_overlap", "overlap"), ("task.partition.alpha", "dir"))


def first_scored_session(run: RunInfo) -> int:
    """The first session whose warm start differs between the initialisers: P + 2."""
    return int(run.get("population.sessions.pilot_sessions", 1)) + 2


def switch_scores(run: RunInfo, window: int = 3) -> dict[int, tuple[float, float, float]]:
    """Per scored session (from :func:`first_scored_session` on): accuracy after its
    first round, mean of its first ``window`` rounds, and at its end."""
    evals = run.evals()
    first = first_scored_session(run)
    out = {}
    sessions = evals["session"]
    for s in sorted({int(v) for v in sessions[np.isfinite(sessions)]}):
        if s < first:
            continue
        acc = evals["accuracy"][(sessions == s) & (evals["round"] > 0)]
        if len(acc):
            out[s] = (float(acc[0]), float(acc[:window].mean()), float(acc[-1]))
    return out


def switch_rounds(run: RunInfo) -> dict[int, float]:
    """Per scored session, the round at which it starts (the last round before it)."""
    evals = run.evals()
    first = first_scored_session(run)
    rounds, sessions = evals["round"], evals["session"]
    return {s: float(rounds[sessions == s].min()) - 1
            for s in sorted({int(v) for v in sessions[np.isfinite(sessions)]}) if s >= first}


def cell(run: RunInfo) -> str:
    """The run's cell of the session grid, e.g. ``overlap 2, dir 0.3`` (empty: no grid)."""
    return ", ".join(f"{name} {run.get(key):g}" for key, name in CELL_KEYS
                     if isinstance(run.get(key), (int, float)))


def split_arm(arm: str) -> tuple[str, str]:
    """``fedprox-similarity`` -> (``fedprox``, ``similarity``); a bare initialiser's arm
    (a campaign of FedAvg alone) is FedAvg's."""
    alg, _, init = arm.rpartition("-")
    return alg or PAPER_ALGORITHM, init


class Scores:
    """Every run's switch scores by (algorithm, initialiser), and per-seed metrics."""

    def __init__(self, c: Campaign, window: int) -> None:
        self.by_arm: dict[tuple[str, str], dict[tuple[int, str], dict]] = {}
        for r in c.runs:
            if not r.diverged:
                self.by_arm.setdefault(split_arm(r.arm), {})[(r.seed, cell(r))] = \
                    switch_scores(r, window)
        self.cells = sorted({at for per in self.by_arm.values() for _, at in per})
        self.sessions = sorted({s for per in self.by_arm.values() for v in per.values()
                                for s in v})

    def arms(self, alg: str) -> list[str]:
        return [i for i in INITIALISERS if (alg, i) in self.by_arm]

    def metric(self, alg: str, init: str, i: int, where: str,
               session: int | None = None) -> dict[int, float]:
        """Per seed in cell ``where``: score ``i`` of ``session`` (None: the mean over
        the scored sessions)."""
        out = {}
        for (seed, at), per in self.by_arm.get((alg, init), {}).items():
            if at != where or not per:
                continue
            if session is None:
                out[seed] = float(np.mean([v[i] for v in per.values()]))
            elif session in per:
                out[seed] = per[session][i]
        return out


def claim_cell(scores: Scores) -> str:
    """The cell the claims are decided in: the paper's when the campaign has it."""
    return PAPER_CELL if PAPER_CELL in scores.cells else scores.cells[0]


def warm_start_section(c: Campaign, figures: Path) -> Section:
    claims: list = []
    body = [setting_line(c), ""]
    window = int(c.meta.get("notes", {}).get("switch_window", DEFAULT_WINDOW))
    scores = Scores(c, window)
    algs = [a for a in ALGORITHMS if scores.arms(a)]
    if not algs or not scores.cells:
        body.append("No finished run with a scored switch.")
        return Section(TITLE, claims, body)
    where = claim_cell(scores)
    body += [f"Scored switches: sessions {', '.join(map(str, scores.sessions))} (each on "
             "its own; the pilot session, the restart from the initial model and the next "
             "session, where every initialiser starts from the same finished model, are "
             f"not scored). Cell of the claims: {where}.", ""]
    for alg in algs:
        body += [f"Mean accuracy over the first {window} rounds after each switch, {alg}:",
                 "", md_table(["initialiser", *(f"session {s}" for s in scores.sessions)],
                              [[i] + [mean_ci(scores.metric(alg, i, 1, where, s).values())
                                      .text() for s in scores.sessions]
                               for i in scores.arms(alg)])]
    for alg in algs:
        paper = alg == PAPER_ALGORITHM and where == PAPER_CELL
        comparisons = switch_comparisons(scores, alg, where, window, paper)
        if not comparisons:
            continue
        others = [BASELINE_WORDS[b] for b in scores.arms(alg) if b != "similarity"]
        verdict_block(f"With {alg}, starting a returning session from the similarity-"
                      "weighted blend of the earlier sessions' models gives a higher mean "
                      f"accuracy over the first {window} rounds after the switch than "
                      f"starting from {' or '.join(others)}, at every scored switch.",
                      comparisons, "accuracy", claims, body,
                      paper_effect=paper_effects_text() if paper else None)
    figure = f"{part_key(algs) or 'warm_start'}.png"
    plot_switches(c, algs, where, figures / figure)
    body += ["![Warm starts: accuracy against rounds since each scored switch]"
             f"(figures/{figure})", "",
             "For reference, not part of the claims: 1 round after the switch and the "
             "session's end, averaged over the scored switches.", "",
             comparison_table([compare(f"{alg}: similarity > {b} ({name})",
                                       scores.metric(alg, "similarity", i, where),
                                       scores.metric(alg, b, i, where))
                               for alg in algs if "similarity" in scores.arms(alg)
                               for i, name in ((0, "1 round after"), (2, "session end"))
                               for b in scores.arms(alg) if b != "similarity"], "accuracy")]
    return Section(TITLE + ("" if PAPER_ALGORITHM in algs else f" ({', '.join(algs)})"),
                   claims, body, key=part_key(algs))


def part_key(algs: list[str]) -> str | None:
    """The report part of a campaign: the study's own (None) when it holds the paper's
    algorithm, else one named after its algorithms (a second campaign of the study)."""
    return None if PAPER_ALGORITHM in algs else "_".join(["warm_start", *algs])


def switch_comparisons(scores: Scores, alg: str, where: str, window: int,
                       paper: bool) -> list[Comparison]:
    """similarity against every other initialiser of ``alg``, one comparison per scored
    switch; with the paper's effect when ``paper`` (its cell and algorithm)."""
    if "similarity" not in scores.arms(alg):
        return []
    return [compare(f"similarity > {b} (session {s}, first {window} rounds)",
                    scores.metric(alg, "similarity", 1, where, s),
                    scores.metric(alg, b, 1, where, s),
                    paper_effect=paper_gain(b) if paper else None)
            for b in scores.arms(alg) if b != "similarity" for s in scores.sessions]


def paper_gain(baseline: str) -> float | None:
    """The paper's similarity-minus-``baseline`` accuracy after a switch, where it gives both."""
    if baseline not in PAPER_ACCURACY:
        return None
    return round(PAPER_ACCURACY["similarity"] - PAPER_ACCURACY[baseline], 4)


def paper_effects_text() -> str:
    gains = ", ".join(f"{paper_gain(b):+.4f} over {b}" for b in INITIALISERS[1:])
    return f"{gains} (Fashion-MNIST, overlap 0, Dirichlet 0.3)"


def after(piece: Series) -> Series:
    """An aligned piece without its point at the switch itself (measured on the
    previous session's labels)."""
    keep = piece.x > 0
    return Series(piece.x[keep], piece.y[keep])


def plot_switches(c: Campaign, algs: list[str], where: str, path: Path) -> None:
    """One panel per algorithm and scored switch (cell ``where``): each run's accuracy
    aligned on the rounds since that switch."""
    panels = []
    runs = [r for r in c.runs if cell(r) == where and not r.diverged]
    sessions = sorted({s for r in runs for s in switch_rounds(r)})
    for alg in algs:
        for s in sessions:
            lines = {}
            for init in INITIALISERS:
                mine = [r for r in runs if split_arm(r.arm) == (alg, init)]
                if not mine:
                    continue
                length = max(int(r.get("population.sessions.rounds_per_session", 10))
                             for r in mine)
                lines[init] = [mean_series([after(p) for p in since_each(
                    series(r, "accuracy"), [switch_rounds(r)[s]], length)]) for r in mine
                    if s in switch_rounds(r)]
            panels.append(Panel(f"{alg}, session {s}", lines, xlabel="rounds since the switch"))
    plot_panels(path, panels, "test accuracy", ncols=len(sessions) if len(panels) > 1 else None)

