"""The reproduction report: each paper's claim checked on its study's campaign folder.

Reads campaign folders written by the studies (``python -m studies.NAME``): their
``study.json`` and run folders (``config.json``, ``evals.csv``, ``summary.json``, and where
a study wrote them ``events.csv`` and ``client_labels.json``). It never runs a simulation.

Usage::

    python analysis/report.py CAMPAIGN [CAMPAIGN ...] --out DIR

writes ``DIR/report.md`` and its figures ``DIR/figures/*.png``.

Statistics. A number is the mean over seeds with its 95% confidence interval,
mean ± t(0.975, n-1) s / sqrt(n) (s: the sample standard deviation; no interval for one
seed). A *comparison* of a claimed-better arm A with an arm B pairs their runs by seed
and takes the differences d_s in the claimed direction (A - B when higher is better,
B - A when lower is); the rule:

* **reproduced**: at least 2 paired seeds, and the 95% interval of the mean of d lies
  above 0 (a paired t-test, two-sided at 5%, on the claimed side). Two arms whose own
  intervals do not overlap always pass it (the paired interval is never wider than the
  two half-widths added);
* **partly**: the mean of d is above 0 but neither interval condition holds;
* **not reproduced**: the mean of d is 0 or on the wrong side.

A claim made of several comparisons (one per setting or per baseline) is reproduced
when all of them are, not reproduced when none holds even in the mean, and partly
otherwise.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from simfl.core.errors import SimflError
from simfl.metrics.curves import Series, band, common_grid, read_table, step_values, t_quantile_975

REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_ASSESSED = (
    "reproduced", "partly", "not reproduced", "not assessed")
STUDY_FILE = "study.json"
#: share of the last rounds whose evaluations make a run's "late" value
LATE_SHARE = 0.2


# ---------------------------------------------------------------------------------
# statistics


@dataclass(frozen=True)
class Interval:
    """Mean over seeds with its 95% t-interval (lo = hi = mean for one value)."""

    mean: float
    lo: float
    hi: float
    n: int

    @property
    def half(self) -> float:
        return (self.hi - self.lo) / 2

    def text(self, digits: int = 3) -> str:
        if self.n == 0:
            return "-"
        if self.n == 1:
            return f"{self.mean:.{digits}f} (1 seed)"
        return f"{self.mean:.{digits}f} ± {self.half:.{digits}f}"


def mean_ci(values: Iterable[float]) -> Interval:
    """The mean of the finite ``values`` and its 95% t-interval."""
    x = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    n = len(x)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    mean = float(x.mean())
    if n == 1:
        return Interval(mean, mean, mean, 1)
    half = t_quantile_975(n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)


@dataclass(frozen=True)
class Comparison:
    """A claimed-better arm against another, paired by seed, with its verdict."""

    label: str
    better: Interval  # the claimed-better arm over its seeds
    other: Interval
    diff: Interval  # paired differences in the claimed direction (> 0: the claim holds)
    higher_is_better: bool
    verdict: str

    def row(self, digits: int = 3) -> list[str]:
        return [self.label, self.better.text(digits), self.other.text(digits),
                self.diff.text(digits), str(self.diff.n), self.verdict]


def compare(label: str, better: dict[Any, float], other: dict[Any, float],
            higher_is_better: bool = True) -> Comparison:
    """Compare per-seed values (seed -> value) of the claimed-better arm with another's;
    only seeds with a finite value on both sides are paired."""
    a, b = mean_ci(better.values()), mean_ci(other.values())
    sign = 1.0 if higher_is_better else -1.0
    paired = [sign * (better[s] - other[s]) for s in better if s in other
              and math.isfinite(better[s]) and math.isfinite(other[s])]
    diff = mean_ci(paired)
    if diff.n == 0 or not diff.mean > 0:
        verdict = NOT_REPRODUCED if diff.n else NOT_ASSESSED
    elif diff.n >= 2 and diff.lo > 0:
        verdict = REPRODUCED
    else:
        verdict = PARTLY
    return Comparison(label, a, b, diff, higher_is_better, verdict)


def overall(comparisons: Sequence[Comparison]) -> tuple[str, str]:
    """The verdict of a claim made of ``comparisons`` and the reason, in words."""
    assessed = [c for c in comparisons if c.verdict != NOT_ASSESSED]
    if not assessed:
        return NOT_ASSESSED, "no comparison had runs on both sides"
    counts = {v: sum(c.verdict == v for c in assessed) for v in (REPRODUCED, PARTLY, NOT_REPRODUCED)}
    n = len(assessed)
    tally = (f"{counts[REPRODUCED]} of {n} comparisons reproduced, {counts[PARTLY]} hold in "
             f"the mean only, {counts[NOT_REPRODUCED]} do not hold")
    if counts[REPRODUCED] == n:
        return REPRODUCED, tally
    if counts[NOT_REPRODUCED] == n:
        return NOT_REPRODUCED, tally
    failing = [c.label for c in assessed if c.verdict == NOT_REPRODUCED]
    if failing:
        tally += "; against: " + ", ".join(failing[:6]) + (" ..." if len(failing) > 6 else "")
    return PARTLY, tally


# ---------------------------------------------------------------------------------
# reading campaigns


@dataclass(frozen=True)
class RunInfo:
    """A finished run folder of a campaign: its arm (the run's name), seed and scenario."""

    path: Path
    arm: str
    seed: int
    scenario: dict[str, Any]

    def get(self, key: str, default: Any = None) -> Any:
        node: Any = self.scenario
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    def evals(self) -> dict[str, np.ndarray]:
        """``evals.csv`` as float columns."""
        header, rows = read_table(self.path / "evals.csv")
        return {c: np.array([_float(r[c]) for r in rows], dtype=float) for c in header}

    def summary(self) -> dict[str, Any]:
        return json.loads((self.path / "summary.json").read_text())


def _float(text: str | None) -> float:
    try:
        return float(text) if text not in (None, "", "None") else math.nan
    except ValueError:
        return math.nan


@dataclass
class Campaign:
    """A study's campaign folder: its ``study.json`` and finished runs."""

    folder: Path
    meta: dict[str, Any]
    runs: list[RunInfo]
    unfinished: int = 0

    @property
    def study(self) -> str:
        return str(self.meta.get("study"))

    def arm(self, name: str) -> list[RunInfo]:
        return [r for r in self.runs if r.arm == name]

    @property
    def wall_time_s(self) -> float:
        """Summed wall time of the runs (a campaign on several workers takes less)."""
        return float(sum((r.summary().get("wall_time_s") or 0.0) for r in self.runs))


def read_campaign(folder: Path) -> Campaign:
    """The campaign in ``folder``: ``study.json`` and every run folder under it."""
    folder = Path(folder)
    meta_file = folder / STUDY_FILE
    try:
        meta = json.loads(meta_file.read_text())
    except OSError:
        raise SimflError(f"{meta_file} is missing: {folder} is not a study's campaign folder "
                         "(make one with python -m studies.NAME)") from None
    except ValueError as err:
        raise SimflError(f"{meta_file} is not JSON: {err}") from None
    prefix = f"{meta.get('study')}-"
    runs, unfinished = [], 0
    for config in sorted(folder.glob("*/config.json")):
        run = config.parent
        if not (run / "summary.json").is_file():
            unfinished += 1
            continue
        scenario = json.loads(config.read_text())["scenario"]
        name = str(scenario.get("name", ""))
        arm = name[len(prefix):] if name.startswith(prefix) else name
        runs.append(RunInfo(run, arm, int(scenario.get("seed", 0)), scenario))
    return Campaign(folder, meta, runs, unfinished)


def late_mean(evals: dict[str, np.ndarray], column: str, share: float = LATE_SHARE) -> float:
    """Mean of ``column`` over the evaluations in the last ``share`` of the rounds."""
    rounds, values = evals["round"], evals[column]
    keep = (rounds >= rounds.max() * (1 - share)) & np.isfinite(values)
    return float(values[keep].mean()) if keep.any() else math.nan


def by_seed(runs: Sequence[RunInfo], metric: Callable[[RunInfo], float]) -> dict[int, float]:
    return {r.seed: metric(r) for r in runs}


# ---------------------------------------------------------------------------------
# figures and tables


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def comparison_table(comparisons: Sequence[Comparison], metric: str) -> str:
    return md_table(["comparison", f"claimed better ({metric})", "other", "paired difference",
                     "seeds", "verdict"], [c.row() for c in comparisons])


def plot_panels(path: Path, panels: Sequence[tuple[str, dict[str, list[Series]]]],
                ylabel: str, xlabel: str = "rounds completed") -> Path:
    """One subplot per panel, one line per label: mean over seeds with a 95% CI band (the
    view spans the runs' own values; a wider band, as with 2 seeds, is cut at its edge)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.2 * len(panels), 3.6), dpi=110)
    FigureCanvasAgg(fig)
    for i, (title, lines) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), i + 1)
        lo, hi = math.inf, -math.inf  # the runs' own values: a wider band is cut at the edge
        for label, series in lines.items():
            series = [s for s in series if len(s.x)]
            if not series:
                continue
            grid = common_grid(series)
            if grid.size == 0:
                continue
            values = np.vstack([step_values(s.x, s.y, grid) for s in series])
            lo, hi = min(lo, float(values.min())), max(hi, float(values.max()))
            mean, lower, upper = band(values, "ci")
            (drawn,) = ax.plot(grid, mean, drawstyle="steps-post", linewidth=1.3,
                               label=f"{label} (n={len(series)})")
            if lower is not None:
                ax.fill_between(grid, lower, upper, step="post", alpha=0.18,
                                color=drawn.get_color(), linewidth=0)
        if math.isfinite(lo):
            margin = 0.05 * (hi - lo) or 0.05 * max(abs(hi), 1.0)
            ax.set_ylim(lo - margin, hi + margin)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def series(run: RunInfo, column: str) -> Series:
    evals = run.evals()
    keep = np.isfinite(evals[column])
    return Series(evals["round"][keep], evals[column][keep])


# ---------------------------------------------------------------------------------
# the papers


@dataclass
class Section:
    """One paper's part of the report."""

    title: str
    claims: list[tuple[str, str, str]]  # (claim in one sentence, verdict, reason)
    body: list[str] = field(default_factory=list)
    campaign: Campaign | None = None

    def scale(self) -> list[str]:
        """Seeds, rounds and study wall time, for the verdict table."""
        c = self.campaign
        if c is None:
            return ["-", "-", "-"]
        seeds = sorted({r.seed for r in c.runs})
        wall_s = c.meta.get("wall_time_s")
        return [f"{len(seeds)} ({', '.join(map(str, seeds))})",
                str(c.meta.get("notes", {}).get("rounds", "-")),
                f"{wall_s:.0f} s" if isinstance(wall_s, (int, float)) else "-"]


def setting_line(c: Campaign) -> str:
    m = c.meta
    seeds = sorted({r.seed for r in c.runs})
    notes = ", ".join(f"{k} {v}" for k, v in sorted(m.get("notes", {}).items()))
    return (f"*Campaign* `{c.folder}`: {m.get('mode')} mode, {len(c.runs)} finished runs"
            f"{f' ({c.unfinished} unfinished)' if c.unfinished else ''}, seeds "
            f"{', '.join(map(str, seeds))}; {notes}; study wall time "
            f"{m.get('wall_time_s', math.nan):.0f} s with {m.get('jobs', 1)} worker(s), "
            f"runs' summed wall time {c.wall_time_s:.0f} s.")


def verdict_block(claim: str, comparisons: Sequence[Comparison], metric: str,
                  claims: list[tuple[str, str, str]], body: list[str]) -> None:
    verdict, reason = overall(comparisons)
    claims.append((claim, verdict, reason))
    body += [f"**Claim.** {claim}", "", comparison_table(comparisons, metric),
             f"**Verdict: {verdict}** ({reason}).", ""]


FEDAR_BASELINES = ("mifa", "fedvarp", "fedavg_is", "fedavg_s", "scaffold")


def client_accuracies(run: RunInfo) -> np.ndarray | None:
    """Each client's expected accuracy at the last evaluation: the per-class accuracies
    weighted by the client's training-label counts (``client_labels.json``)."""
    labels_file = run.path / "client_labels.json"
    evals = run.evals()
    if not labels_file.is_file() or "acc_class_0" not in evals:
        return None
    counts = np.asarray(json.loads(labels_file.read_text())["counts"], dtype=float)
    per_class = np.array([evals[f"acc_class_{k}"][-1] for k in range(counts.shape[1])])
    per_class = np.where(np.isfinite(per_class), per_class, 0.0)
    return counts @ per_class / np.maximum(counts.sum(axis=1), 1.0)


def tail_mean(values: np.ndarray, share: float) -> float:
    k = max(1, int(round(share * len(values))))
    return float(np.sort(values)[:k].mean()) if share > 0 else math.nan


def fedar_section(c: Campaign, figures: Path) -> Section:
    claims: list[tuple[str, str, str]] = []
    body = [setting_line(c), ""]
    p_mins = sorted({r.get("population.availability.p_min") for r in c.runs})
    arms = ["fedar", *FEDAR_BASELINES]
    metrics: dict[str, Callable[[RunInfo], float]] = {
        "final accuracy": lambda r: float(r.evals()["accuracy"][-1]),
        "last-10 accuracy": lambda r: float(np.nanmean(r.evals()["accuracy"][-10:])),
    }
    client_stats: dict[str, Callable[[np.ndarray], float]] = {
        "client mean": lambda a: float(a.mean()), "client variance": lambda a: float(a.var()),
        "worst 10%": lambda a: tail_mean(a, 0.1), "best 10%": lambda a: -tail_mean(-a, 0.1)}
    comparisons = []
    panels = []
    for p_min in p_mins:
        runs = {arm: [r for r in c.arm(arm) if r.get("population.availability.p_min") == p_min]
                for arm in arms}
        rows = []
        for arm in arms:
            row = [arm] + [mean_ci(f(r) for r in runs[arm]).text() for f in metrics.values()]
            accs = [a for a in (client_accuracies(r) for r in runs[arm]) if a is not None]
            row += [mean_ci(f(a) for a in accs).text(4 if name == "client variance" else 3)
                    for name, f in client_stats.items()]
            rows.append(row)
        body += [f"p_min = {p_min}:", "",
                 md_table(["method", *metrics, *client_stats], rows)]
        late = {arm: by_seed(runs[arm], metrics["last-10 accuracy"]) for arm in arms}
        comparisons += [compare(f"fedar > {b} (p_min {p_min})", late["fedar"], late[b])
                        for b in FEDAR_BASELINES]
        panels.append((f"p_min = {p_min}", {arm: [series(r, "accuracy") for r in runs[arm]]
                                            for arm in arms}))
    if panels:
        plot_panels(figures / "fedar.png", panels, "test accuracy")
        body += ["![FedAR: accuracy against rounds](figures/fedar.png)", ""]
    body += ["Per-client accuracy: each client's expected accuracy at the last evaluation, "
             "the per-class test accuracies weighted by its training-label counts; the "
             "worst and best 10% are the means of the lowest and highest tenth of clients.",
             ""]
    verdict_block("FedAR reaches a higher accuracy (mean of the last 10 evaluations) than "
                  "MIFA, FedVARP, FedAvg-IS, FedAvg(S) and SCAFFOLD when client availability "
                  "is heterogeneous, p_i ~ U(p_min, 1).", comparisons, "last-10 accuracy",
                  claims, body)
    return Section("FedAR: availability-aware aggregation", claims, body)


def rare_class(run: RunInfo) -> int | None:
    """The class with the smallest total relay weight (the relay's ``probs`` summed over
    the clients whose main training label it is)."""
    labels_file = run.path / "client_labels.json"
    if not labels_file.is_file():
        return None
    counts = np.asarray(json.loads(labels_file.read_text())["counts"], dtype=float)
    probs = run.get("network.mac.probs")
    probs = np.broadcast_to(np.asarray(probs, dtype=float), (counts.shape[0],))
    weight = np.zeros(counts.shape[1])
    np.add.at(weight, np.argmax(counts, axis=1), probs)
    held = counts.sum(axis=0) > 0
    return int(np.flatnonzero(held)[np.argmin(weight[held])])


def rare_series(run: RunInfo) -> Series:
    k = rare_class(run)
    return series(run, f"acc_class_{k}") if k is not None else Series(np.array([]), np.array([]))


#: the risk level of the claim (the paper's example); alpha = 0.5 is shown in the tables
CVAR_CLAIM_ALPHA = 0.1


def cvar_section(c: Campaign, figures: Path) -> Section:
    claims: list[tuple[str, str, str]] = []
    body = [setting_line(c), ""]
    settings = sorted({r.arm.split("-")[0] for r in c.runs}, key=lambda s: int(s[4:] or 0))
    alphas = sorted({float(r.get("server.algorithm.alpha")) for r in c.runs}, reverse=True)

    def rare(r: RunInfo) -> float:
        k = rare_class(r)
        return late_mean(r.evals(), f"acc_class_{k}") if k is not None else math.nan

    def worst(r: RunInfo) -> float:
        evals = r.evals()
        cols = [k for k in evals if k.startswith("acc_class_")]
        return min(late_mean(evals, k) for k in cols) if cols else math.nan

    comparisons, panels = [], []
    for setting in settings:
        arm_runs = {a: c.arm(f"{setting}-a{a:g}") for a in alphas}
        rows = [[f"{a:g}", mean_ci(late_mean(r.evals(), "accuracy") for r in runs).text(),
                 mean_ci(rare(r) for r in runs).text(), mean_ci(worst(r) for r in runs).text()]
                for a, runs in arm_runs.items()]
        body += [f"`{setting}` (accuracies: means over the last {LATE_SHARE:.0%} of the rounds):",
                 "", md_table(["alpha", "accuracy", "rare class accuracy", "worst class accuracy"],
                              rows)]
        if 1.0 in arm_runs:
            for a in alphas:
                if a == CVAR_CLAIM_ALPHA and arm_runs[a]:
                    comparisons.append(compare(f"alpha {a:g} > alpha 1 ({setting})",
                                               by_seed(arm_runs[a], rare),
                                               by_seed(arm_runs[1.0], rare)))
        panels.append((setting, {f"alpha {a:g}": [rare_series(r) for r in runs]
                                 for a, runs in arm_runs.items()}))
    if panels:
        plot_panels(figures / "cvar.png", panels, "rare class test accuracy")
        body += ["![CVaR: the rare class's accuracy against rounds](figures/cvar.png)", ""]
    body += ["The rare class of a run is the one with the smallest total relay probability "
             "(summed over the users whose main label it is): the rare user's class in "
             "`cvar3`, class 2 in `cvar30`.", ""]
    verdict_block(f"Training for the CVaR of the loss at risk level alpha = "
                  f"{CVAR_CLAIM_ALPHA:g} raises the accuracy on the class of the rarely relayed "
                  "users above that of the risk-neutral objective (alpha = 1).", comparisons, "rare class accuracy", claims, body)
    return Section("CVaR: risk-aware FL under a random-access relay", claims, body)


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


#: the FedGS sampler's alpha of the claim (the other alphas are shown in the tables)
FEDGS_CLAIM_ALPHA = 1.0
#: the seven availability modes, in the paper's order
FEDGS_MODES = ("ideal", "more_data_first", "less_data_first", "y_max_first", "y_cycle",
               "log_normal", "sin_log_normal")


def invite_variance(run: RunInfo) -> float:
    """Variance over the clients of how many rounds invited each (events.csv)."""
    path = run.path / "events.csv"
    if not path.is_file():
        return math.nan
    _, rows = read_table(path)
    counts = np.zeros(int(run.get("task.n_clients")))
    for row in rows:
        if row["kind"] == "invited":
            counts[int(row["client"])] += 1
    return float(counts.var())


def fedgs_section(c: Campaign, figures: Path) -> Section:
    claims: list[tuple[str, str, str]] = []
    body = [setting_line(c), ""]
    found = {r.get("population.availability.kind") for r in c.runs}
    modes = [m for m in FEDGS_MODES if m in found] + sorted(found - set(FEDGS_MODES))
    arms = list(dict.fromkeys(r.arm for r in c.runs))
    claimed = f"fedgs_a{FEDGS_CLAIM_ALPHA:g}"

    def runs(arm: str, mode: str) -> list[RunInfo]:
        return [r for r in c.arm(arm) if r.get("population.availability.kind") == mode]

    def best_loss(r: RunInfo) -> float:
        return float(np.nanmin(r.evals()["loss"]))

    values = {(a, m): (by_seed(runs(a, m), best_loss), by_seed(runs(a, m), invite_variance))
              for a in arms for m in modes}
    for i, title in enumerate(("Best test loss", "Variance of the clients' invitation counts")):
        rows = [[a] + [mean_ci(values[a, m][i].values()).text(3 if i == 0 else 2) for m in modes]
                for a in arms]
        body += [f"{title} (mean ± 95% CI over seeds):", "", md_table(["sampler", *modes], rows)]
    body += ["The counts come from the `invited` events: `md` invites a client drawn twice "
             "once, so its counts are of distinct invitations.", ""]
    if claimed in arms and "uniform" in arms:
        var = [compare(f"{claimed} < uniform ({m})", values[claimed, m][1],
                       values["uniform", m][1], higher_is_better=False) for m in modes]
        loss = [compare(f"{claimed} < uniform ({m})", values[claimed, m][0],
                        values["uniform", m][0], higher_is_better=False) for m in modes]
    else:
        var = loss = []
    mode = "sin_log_normal" if "sin_log_normal" in modes else (modes[0] if modes else None)
    if mode is not None:
        plot_panels(figures / "fedgs.png",
                    [(f"availability {mode}",
                      {a: [series(r, "loss") for r in runs(a, mode)] for a in arms})],
                    "test loss")
        body += [f"![FedGS: test loss against rounds, {mode}](figures/fedgs.png)", ""]
    verdict_block(f"FedGS sampling (alpha = {FEDGS_CLAIM_ALPHA:g}) makes how often clients are "
                  "sampled more even (a lower variance of the sampling counts) than uniform "
                  "sampling, under each of the seven availability modes.", var,
                  "count variance", claims, body)
    verdict_block(f"FedGS sampling (alpha = {FEDGS_CLAIM_ALPHA:g}) reaches a lower best test "
                  "loss than uniform sampling under each of the seven availability modes.",
                  loss, "best test loss", claims, body)
    return Section("FedGS: graph-based client sampling", claims, body)


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


SECTIONS: dict[str, Callable[[Campaign, Path], Section]] = {
    "fedar": fedar_section, "cvar": cvar_section, "warm_start": warm_start_section,
    "fedgs": fedgs_section, "fedlaavg": fedlaavg_section}


RULE = """A number is the mean over seeds ± the half-width of its 95% t-interval. Each
claim is tested by comparisons of a claimed-better arm with another, paired by seed:
**reproduced** when, over at least 2 paired seeds, the 95% interval of the paired
difference lies on the claimed side of 0 (which holds whenever the two arms' own
intervals do not overlap);
**partly** when the difference is on the claimed side in the mean only; **not
reproduced** when it is not. A claim made of several comparisons is reproduced when all
are, not reproduced when none holds even in the mean, partly otherwise. With 2 seeds
(the quick mode) t(0.975, 1) = 12.7, so an interval rarely excludes 0: quick-mode
verdicts are a check of the machinery, not of the papers."""


def write_report(campaigns: Sequence[Path], out: Path) -> Path:
    """Write ``out/report.md`` (and ``out/figures``) from the campaign folders."""
    out = Path(out)
    figures = out / "figures"
    sections: list[Section] = []
    modes = set()
    for folder in campaigns:
        campaign = read_campaign(folder)
        make = SECTIONS.get(campaign.study)
        if make is None:
            raise SimflError(f"{Path(folder) / STUDY_FILE}: unknown study {campaign.study!r} "
                             f"(expected one of {', '.join(SECTIONS)})")
        modes.add(str(campaign.meta.get("mode")))
        section = make(campaign, figures)
        section.campaign = campaign
        sections.append(section)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = ["# simfl reproduction report", "",
             f"Generated by `analysis/report.py` on {now} from {len(campaigns)} campaign "
             f"folder(s), mode: {', '.join(sorted(modes))}. Nothing was re-run: every number "
             "below is read from the run folders.", "", "## Verdicts", "",
             md_table(["paper", "claim", "verdict", "why", "seeds", "rounds", "study wall time"],
                      [[s.title.split(":")[0], claim, f"**{verdict}**", reason, *s.scale()]
                       for s in sections for claim, verdict, reason in s.claims]),
             "## How the verdicts are decided", "", RULE, ""]
    for s in sections:
        lines += [f"## {s.title}", "", *s.body]
    out.mkdir(parents=True, exist_ok=True)
    path = out / "report.md"
    path.write_text("\n".join(lines))
    return path


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Write the reproduction report from the studies' "
                                "campaign folders (nothing is re-run).")
    p.add_argument("campaigns", nargs="+", type=Path, help="campaign folders of the studies")
    p.add_argument("--out", type=Path, required=True, help="folder for report.md and figures/")
    args = p.parse_args(argv)
    try:
        path = write_report(args.campaigns, args.out)
    except SimflError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
