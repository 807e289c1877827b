"""CVaR's section: the accuracy of the rarely relayed users' class at a low risk level
against the risk-neutral objective."""

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
from ..verdicts import compare, mean_ci


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
