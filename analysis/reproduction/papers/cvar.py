"""CVaR's section: the accuracy of the rarely relayed users' classes at the lower risk
levels against the risk-neutral objective."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from simfl.metrics.curves import Series

from ..campaigns import LATE_SHARE, Campaign, RunInfo, by_seed, late_mean
from ..figures import plot_panels, series
from ..sections import Section, setting_line, verdict_block
from ..tables import md_table
from ..verdicts import compare, mean_ci, not_tested


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


def rare_classes(run: RunInfo) -> list[int]:
    """The main classes of the users with the smallest relay weight (one class in the
    three-user example, classes 8 and 9 in the thirty-user study)."""
    labels_file = run.path / "client_labels.json"
    if not labels_file.is_file():
        return []
    counts = np.asarray(json.loads(labels_file.read_text())["counts"], dtype=float)
    probs = np.broadcast_to(np.asarray(run.get("network.mac.probs"), dtype=float),
                            (counts.shape[0],))
    rare = np.isclose(probs, probs.min())
    return sorted({int(k) for k in np.argmax(counts[rare], axis=1)})


def rare_series(run: RunInfo) -> Series:
    """The mean test accuracy over the run's rare classes, against rounds."""
    ks = rare_classes(run)
    if not ks:
        return Series(np.array([]), np.array([]))
    evals = run.evals()
    y = np.mean([evals[f"acc_class_{k}"] for k in ks], axis=0)
    keep = np.isfinite(y)
    return Series(evals["round"][keep], y[keep])


#: the risk levels of the claim (the paper's grid), each against alpha = 1
CVAR_CLAIM_ALPHAS = (0.3, 0.1)


def _chance(arm_runs: dict) -> float:
    """Chance-level accuracy: one over the number of classes with a column in evals.csv."""
    for runs in arm_runs.values():
        for r in runs:
            n = sum(1 for k in r.evals() if k.startswith("acc_class_"))
            if n:
                return 1.0 / n
    return 0.0


def cvar_section(c: Campaign, figures: Path) -> Section:
    claims: list[tuple[str, str, str]] = []
    body = [setting_line(c), ""]
    settings = sorted({r.arm.split("-")[0] for r in c.runs}, key=lambda s: int(s[4:] or 0))
    alphas = sorted({float(r.get("server.algorithm.alpha")) for r in c.runs}, reverse=True)

    def rare(r: RunInfo) -> float:
        ks = rare_classes(r)
        evals = r.evals()
        return float(np.mean([late_mean(evals, f"acc_class_{k}") for k in ks])) if ks else math.nan

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
                 "", md_table(["alpha", "accuracy", "rare classes' accuracy",
                               "worst class accuracy"], rows)]
        if 1.0 in arm_runs:
            made = [compare(f"alpha {a:g} > alpha 1 ({setting})",
                            by_seed(arm_runs[a], rare), by_seed(arm_runs[1.0], rare))
                    for a in alphas if a in CVAR_CLAIM_ALPHAS and arm_runs[a]]
            chance = _chance(arm_runs)
            learned = [mean_ci(rare(r) for r in runs).mean for runs in arm_runs.values() if runs]
            if made and learned and max(learned) < chance:
                made = not_tested(made)
                body += [f"Not tested in `{setting}`: the rare classes are never learned (their "
                         f"accuracy stays below chance, {chance:.2f}, for every alpha), so no "
                         "risk level can raise it as the claim says.", ""]
            comparisons += made
        panels.append((setting, {f"alpha {a:g}": [rare_series(r) for r in runs]
                                 for a, runs in arm_runs.items()}))
    if panels:
        plot_panels(figures / "cvar.png", panels, "rare classes' test accuracy")
        body += ["![CVaR: the rare classes' accuracy against rounds](figures/cvar.png)", ""]
    body += ["The rare classes of a run are the main labels of the users with the smallest "
             "relay weight: the rare user's class in `cvar3`, the users of classes 8 and 9 in "
             "`cvar30`; a run's score is their mean accuracy.", ""]
    verdict_block("Training for the CVaR of the loss at risk level alpha = 0.3 or 0.1 raises "
                  "the accuracy on the classes of the rarely relayed users above that of the "
                  "risk-neutral objective (alpha = 1).", comparisons,
                  "rare classes' accuracy", claims, body,
                  paper_effect="not stated as a number (the paper shows curves)")
    return Section("CVaR: risk-aware FL under a random-access relay", claims, body)
