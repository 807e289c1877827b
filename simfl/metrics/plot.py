"""Time-to-accuracy plots read from run directories (never re-running anything)."""

from __future__ import annotations

import json
from pathlib import Path

from simfl.core.errors import SimflError
from simfl.metrics.rundir import read_csv

X_COLUMNS = {"time": ("t_s", "simulated time (s)"), "round": ("round", "round")}


def _config(run_dir: Path) -> dict:
    try:
        return json.loads((run_dir / "config.json").read_text())
    except (OSError, ValueError):
        return {}


def run_labels(run_dirs: list[Path]) -> list[str]:
    """``name (seed N)`` from each config.json; the folder name is added where two agree."""
    labels = []
    for run_dir in run_dirs:
        config = _config(run_dir)
        try:
            labels.append(f"{config['scenario']['name']} (seed {config['seed']})")
        except KeyError:
            labels.append(run_dir.name)
    return [f"{label} — {d.name}" if labels.count(label) > 1 else label
            for label, d in zip(labels, run_dirs)]


def plot_runs(run_dirs: list[Path], out_png: Path, metric: str = "accuracy",
              x: str = "time") -> Path:
    """One line per run directory of ``metric`` against simulated time or round."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x_col, x_label = X_COLUMNS[x]
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    targets = set()
    for run_dir, label in zip(run_dirs, run_labels(run_dirs)):
        path = run_dir / "evals.csv"
        if not path.is_file():
            raise SimflError(f"{run_dir} has no evals.csv: is it a simfl run directory?")
        rows = [r for r in read_csv(path) if r[metric] not in ("", "None")]
        if not rows:
            raise SimflError(f"{path} has no {metric} values (a --timing-only run?).")
        ax.plot([float(r[x_col]) for r in rows], [float(r[metric]) for r in rows],
                marker=".", markersize=4, linewidth=1.4, label=label)
        target = _config(run_dir).get("scenario", {}).get("run", {}).get("target_accuracy")
        if metric == "accuracy" and target is not None:
            targets.add(target)
    for target in sorted(targets):
        ax.axhline(target, color="grey", linestyle="--", linewidth=0.8)
        ax.annotate(f"target {target:g}", (0, target), xycoords=("axes fraction", "data"),
                    xytext=(4, 3), textcoords="offset points", fontsize=8, color="grey")
    ax.set_xlabel(x_label)
    ax.set_ylabel(f"test {metric}")
    ax.set_title(f"test {metric} against {x_label}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out_png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_png)
    plt.close(fig)
    return out_png
