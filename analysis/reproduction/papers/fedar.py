"""FedAR's section: accuracy against five baselines under heterogeneous availability,
and the per-client accuracies read from the clients' label counts."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Callable

import numpy as np

from ..campaigns import Campaign, RunInfo, by_seed
from ..figures import plot_panels, series
from ..sections import Section, setting_line, verdict_block
from ..tables import md_table
from ..verdicts import compare, mean_ci


FEDAR_BASELINES = ("mifa", "fedvarp", "fedavg_is", "fedavg_s", "scaffold")
#: the paper's gain over its best baseline: about 3 accuracy points (CIFAR-10, LeNet-5)
PAPER_GAIN = 0.03


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
        comparisons += [compare(f"fedar > {b} (p_min {p_min})", late["fedar"], late[b],
                                paper_effect=PAPER_GAIN) for b in FEDAR_BASELINES]
        panels.append((f"p_min = {p_min}", {arm: [series(r, "accuracy") for r in runs[arm]]
                                            for arm in arms}))
    if panels:
        name = f"fedar{_model_suffix(c)}.png"  # one figure per model's campaign
        plot_panels(figures / name, panels, "test accuracy")
        body += [f"![FedAR: accuracy against rounds](figures/{name})", ""]
    body += ["Per-client accuracy: each client's expected accuracy at the last evaluation, "
             "the per-class test accuracies weighted by its training-label counts; the "
             "worst and best 10% are the means of the lowest and highest tenth of clients.",
             ""]
    verdict_block("FedAR reaches a higher accuracy (mean of the last 10 evaluations) than "
                  "MIFA, FedVARP, FedAvg-IS, FedAvg(S) and SCAFFOLD when client availability "
                  "is heterogeneous, p_i ~ U(p_min, 1).", comparisons, "last-10 accuracy",
                  claims, body, paper_effect=f"about {PAPER_GAIN:+.2f} over the best baseline "
                  "(CIFAR-10, LeNet-5; at least that over the others)")
    which = f" ({_model_suffix(c)[1:]})" if _model_suffix(c) else ""
    return Section(f"FedAR{which}: availability-aware aggregation", claims, body,
                   key=f"fedar{_model_suffix(c)}")


def _model_suffix(c: Campaign) -> str:
    """``""`` for the study's logistic regression, else ``_MODEL``."""
    model = c.meta.get("notes", {}).get("model", "logreg")
    return "" if model == "logreg" else f"_{model}"
