"""CVaR's section: the accuracy of the rarely relayed users' classes, and the overall
accuracy, at the lower risk levels against the risk-neutral objective."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Callable, Sequence

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


def rare_classes(run: RunInfo, declared: Sequence[int] | None = None) -> list[int]:
    """The run's rare classes: ``declared`` (the study's, classes 8 and 9 of the thirty
    users) where given, else the main classes of the users with the smallest relay
    weight (the rare user's class in the three-user example)."""
    labels_file = run.path / "client_labels.json"
    if not labels_file.is_file():
        return []
    counts = np.asarray(json.loads(labels_file.read_text())["counts"], dtype=float)
    if declared:
        held = counts.sum(axis=0) > 0
        return sorted(int(k) for k in declared if k < len(held) and held[k])
    probs = np.broadcast_to(np.asarray(run.get("network.mac.probs"), dtype=float),
                            (counts.shape[0],))
    rare = np.isclose(probs, probs.min())
    return sorted({int(k) for k in np.argmax(counts[rare], axis=1)})


def rare_series(run: RunInfo, declared: Sequence[int] | None = None) -> Series:
    """The mean test accuracy over the run's rare classes, against rounds."""
    ks = rare_classes(run, declared)
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


#: what the verdict table says of the paper's effects
PAPER_EFFECT = ("in the paper's Table 1 and figures; those numbers are not available to "
                "simfl, so the direction is tested")


def cvar_section(c: Campaign, figures: Path) -> Section:
    claims: list[tuple[str, str, str]] = []
    body = [setting_line(c), ""]
    settings = sorted({r.arm.split("-")[0] for r in c.runs}, key=lambda s: int(s[4:] or 0))
    alphas = sorted({float(r.get("server.algorithm.alpha")) for r in c.runs}, reverse=True)
    declared = c.meta.get("notes", {}).get("rare_classes")

    def rare_of(setting: str) -> Callable[[RunInfo], float]:
        mine = declared if setting == "cvar30" else None

        def rare(r: RunInfo) -> float:
            ks = rare_classes(r, mine)
            evals = r.evals()
            return (float(np.mean([late_mean(evals, f"acc_class_{k}") for k in ks]))
                    if ks else math.nan)
        return rare

    def overall(r: RunInfo) -> float:
        return late_mean(r.evals(), "accuracy")

    def worst(r: RunInfo) -> float:
        evals = r.evals()
        cols = [k for k in evals if k.startswith("acc_class_")]
        return min(late_mean(evals, k) for k in cols) if cols else math.nan

    rare_made, overall_made, panels, overall_panels = [], [], [], []
    for setting in settings:
        rare = rare_of(setting)
        arm_runs = {a: c.arm(f"{setting}-a{a:g}") for a in alphas}
        rows = [[f"{a:g}", mean_ci(overall(r) for r in runs).text(),
                 mean_ci(rare(r) for r in runs).text(), mean_ci(worst(r) for r in runs).text()]
                for a, runs in arm_runs.items()]
        body += [f"`{setting}` (accuracies: means over the last {LATE_SHARE:.0%} of the rounds):",
                 "", md_table(["alpha", "accuracy", "rare classes' accuracy",
                               "worst class accuracy"], rows)]
        if 1.0 in arm_runs:
            claimed = [a for a in alphas if a in CVAR_CLAIM_ALPHAS and arm_runs[a]]
            made = [compare(f"alpha {a:g} > alpha 1 ({setting})", by_seed(arm_runs[a], rare),
                            by_seed(arm_runs[1.0], rare)) for a in claimed]
            chance = _chance(arm_runs)
            learned = [mean_ci(rare(r) for r in runs).mean for runs in arm_runs.values() if runs]
            if made and learned and max(learned) < chance:
                made = not_tested(made)
                body += [f"Rare classes not tested in `{setting}`: they are never learned "
                         f"(their accuracy stays below chance, {chance:.2f}, for every alpha), "
                         "so no risk level can raise it as the claim says.", ""]
            rare_made += made
            overall_made += [compare(f"alpha {a:g} > alpha 1 ({setting}, overall)",
                                     by_seed(arm_runs[a], overall),
                                     by_seed(arm_runs[1.0], overall)) for a in claimed]
        mine = declared if setting == "cvar30" else None
        panels.append((f"{setting}: rare classes", {
            f"alpha {a:g}": [rare_series(r, mine) for r in runs] for a, runs in arm_runs.items()}))
        overall_panels.append((f"{setting}: all classes", {
            f"alpha {a:g}": [series(r, "accuracy") for r in runs]
            for a, runs in arm_runs.items()}))
    if panels:
        plot_panels(figures / "cvar.png", [*panels, *overall_panels], "test accuracy",
                    ncols=len(panels))
        body += ["![CVaR: the rare classes' and the overall test accuracy against rounds]"
                 "(figures/cvar.png)", ""]
    body += ["The rare classes of a run are the classes of the rarely relayed users: those "
             "the study declares (classes 8 and 9, held only by the three least likely "
             "users, in `cvar30`), else the main labels of the users with the smallest relay "
             "weight (the rare user's class in `cvar3`); a run's score is their mean "
             "accuracy. The paper states its effects in its Table 1 and figures; their "
             "numbers are not available to simfl, so each comparison tests the direction "
             "only.", ""]
    verdict_block("Training for the CVaR of the loss at risk level alpha = 0.3 or 0.1 raises "
                  "the accuracy on the classes of the rarely relayed users above that of the "
                  "risk-neutral objective (alpha = 1).", rare_made,
                  "rare classes' accuracy", claims, body, paper_effect=PAPER_EFFECT)
    verdict_block("Training for the CVaR of the loss at risk level alpha = 0.3 or 0.1 gives a "
                  "higher overall test accuracy than the risk-neutral objective (alpha = 1).",
                  overall_made, "accuracy", claims, body, paper_effect=PAPER_EFFECT)
    return Section("CVaR: risk-aware FL under a random-access relay", claims, body)
