"""Reading a study's campaign folder: its ``study.json`` and finished run folders, and the
per-run measures every section uses (late means, values by seed)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from simfl.core.errors import SimflError
from simfl.metrics.curves import read_table

STUDY_FILE = "study.json"
#: share of the last rounds whose evaluations make a run's "late" value
LATE_SHARE = 0.2


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

    @property
    def diverged(self) -> bool:
        """Whether the run's model became non-finite (simfl's warning in summary.json):
        its later scores are meaningless, so comparisons leave it out."""
        return any("diverged" in w or "not a finite number" in w
                   for w in self.summary().get("warnings", ()))


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
    """``metric`` of each run by its seed, leaving out runs whose model diverged."""
    return {r.seed: metric(r) for r in runs if not r.diverged}
