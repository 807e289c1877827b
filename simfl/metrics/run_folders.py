"""Reading run folders: find them, read a run's scenario tree and seed, and read one
metric of a run as a series of samples.

Everything here reads run folders (``config.json``, ``evals.csv``, ``rounds.csv``) and
nothing else, so it works on any folder of runs: one made by hand, by a script's loop or
by a campaign. :mod:`simfl.metrics.grouping` groups the runs read here into lines and
:mod:`simfl.metrics.curves` puts each group on a common grid with a band.
"""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from simfl.core.errors import ConfigError, SimflError

#: keys of the flattened scenario tree that never separate two lines
IGNORED_KEYS = ("seed", "name")
#: columns that are positions, not metrics
POSITION_COLUMNS = ("t_s", "round", "t_open_s", "t_close_s", "session")
#: the largest magnitude of a value or position that is drawn: means, spreads and the
#: axes' transforms of larger ones overflow
MAX_ABS_VALUE = 1e100


@dataclass(frozen=True)
class Run:
    """One run folder: its path, its scenario tree, its seed, and the values it was given
    (flattened; None where its folder does not record them, see
    :mod:`simfl.metrics.given_values`)."""

    path: Path
    scenario: dict[str, Any]
    seed: Any
    given: dict[str, Any] | None = None

    @property
    def params(self) -> dict[str, Any]:
        """The flattened scenario tree without the keys that never separate lines."""
        return {k: v for k, v in flatten(self.scenario).items() if k not in IGNORED_KEYS}

    @property
    def target_accuracy(self) -> float | None:
        return self.scenario.get("run", {}).get("target_accuracy")


@dataclass(frozen=True)
class Series:
    """One run's metric: sample positions ``x``, values ``y`` (NaN-free) and the x of
    its session changes (the last sample of each session that ends)."""

    x: np.ndarray
    y: np.ndarray
    session_changes: tuple[float, ...] = ()


# ---------------------------------------------------------------------------------
# finding and reading run folders


def is_run_folder(path: Path) -> bool:
    return (path / "config.json").is_file()


def find_runs(paths: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """Run folders named by ``paths``, and the unfinished ones that were left out.

    A path holding ``config.json`` is a run folder and is taken as it is (finished or
    not). Any other folder is searched for run folders below it, in natural order of
    their names (``p=0.2`` before ``p=0.05``... by the numbers: ``seed2`` before
    ``seed10``); a run found this way that has no ``summary.json`` yet (still running,
    or crashed) is left out and returned in the second list.
    """
    per_path, unfinished = find_runs_per_path(paths)
    return [run for runs in per_path for run in runs], unfinished


def find_runs_per_path(paths: Iterable[Path]) -> tuple[list[list[Path]], list[Path]]:
    """:func:`find_runs` with the run folders of each path apart (a list per path)."""
    found: list[list[Path]] = []
    unfinished: list[Path] = []
    for path in paths:
        path = Path(path)
        if not path.is_dir():
            raise SimflError(f"not a run folder or a folder of runs: {path}")
        if is_run_folder(path):
            found.append([path])
            continue
        below = list(_walk(path))
        if not below:
            raise SimflError(f"no run folder (a folder with config.json) in {path}")
        found.append([])
        for run_dir in below:
            (found[-1] if (run_dir / "summary.json").is_file() else unfinished).append(run_dir)
    return found, unfinished


def _walk(folder: Path) -> Iterable[Path]:
    try:
        children = [p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError as err:
        raise SimflError(f"cannot read the folder {folder}: {err.strerror or err}") from None
    for child in sorted(children, key=natural_key):
        if is_run_folder(child):
            yield child
        else:
            yield from _walk(child)


def natural_key(path: Path) -> list:
    """Sort key of a name that orders its numbers by value (``seed2`` < ``seed10``)."""
    parts = re.split(r"(\d+(?:\.\d+)?)", path.name)
    return [(0, float(p), "") if i % 2 else (1, 0.0, p) for i, p in enumerate(parts)]


def read_run(path: Path) -> Run:
    """The run folder's scenario tree and seed from its ``config.json``."""
    config_file = Path(path) / "config.json"
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
        scenario = config["scenario"]
        if not isinstance(scenario, dict):
            raise TypeError
    except OSError as err:
        raise SimflError(f"cannot read {config_file}: {err.strerror or err}") from None
    except (ValueError, KeyError, TypeError):
        raise SimflError(f"{config_file} is not a simfl config.json (no scenario object; "
                         f"an unfinished run?)") from None
    from simfl.metrics.given_values import read_given

    return Run(Path(path), scenario, config.get("seed", scenario.get("seed")),
               read_given(Path(path), flatten(scenario)))


def flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    """Leaves of a nested dict as ``{"dotted.key": value}``; lists become JSON text."""
    if isinstance(tree, dict):
        flat: dict[str, Any] = {}
        for key, value in tree.items():
            flat.update(flatten(value, f"{prefix}{key}."))
        return flat
    if isinstance(tree, list):
        tree = json.dumps(tree)
    return {prefix[:-1]: tree}


def read_table(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """Header and rows of a CSV file; a missing or unreadable file names itself."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:  # a BOM is dropped
            reader = csv.DictReader(handle)
            rows = list(reader)
            return list(reader.fieldnames or ()), rows
    except OSError as err:
        raise SimflError(f"cannot read {path}: {err.strerror or err} "
                         f"(is it a simfl run folder?)") from None
    except (csv.Error, UnicodeDecodeError) as err:
        raise SimflError(f"{path} is not a CSV table: {err}") from None


def metric_table(run_dir: Path, metric: str) -> str:
    """``"evals"`` or ``"rounds"``: the table of ``run_dir`` that has the column ``metric``."""
    headers = {}
    for table in ("evals", "rounds"):
        path = run_dir / f"{table}.csv"
        headers[table] = read_table(path)[0] if path.is_file() else []
        if metric in headers[table] and metric not in POSITION_COLUMNS:
            return table
    allowed = [c for t in ("evals", "rounds") for c in headers[t] if c not in POSITION_COLUMNS]
    raise ConfigError("--metric", metric, f"a column of {run_dir}'s evals.csv or rounds.csv: "
                      f"{', '.join(allowed) or 'none (no tables there)'}")


def read_series(run_dir: Path, metric: str, x: str = "time") -> Series:
    """``metric`` of one run against simulated time (s) or rounds completed.

    Evaluation columns are taken at the evaluation's ``t_s`` or ``round``; round columns
    at the round's ``t_close_s``, or at ``round + 1`` (the rounds completed at its close,
    the same count as ``evals.csv``'s ``round``). Empty or NaN values are skipped (a run
    that diverged writes NaN); a missing position column, an infinite value or one
    beyond :data:`MAX_ABS_VALUE` is refused with a line naming the file.
    """
    table = metric_table(run_dir, metric)
    path = run_dir / f"{table}.csv"
    header, rows = read_table(path)
    if table == "evals":
        x_col, x_shift = ("t_s", 0) if x == "time" else ("round", 0)
    else:
        x_col, x_shift = ("t_close_s", 0) if x == "time" else ("round", 1)
    if x_col not in header:
        raise SimflError(f"{path} has no {x_col} column, which --x {x} needs (its columns: "
                         f"{', '.join(header) or 'none'})")
    xs, ys, sessions = [], [], []
    for line, row in enumerate(rows, start=2):
        try:
            value = float(row[metric]) if row[metric] not in ("", "None") else math.nan
            position = float(row[x_col]) + x_shift
        except (TypeError, ValueError):
            raise SimflError(f"{path} line {line}: {metric} = {row[metric]!r} or "
                             f"{x_col} = {row[x_col]!r} is not a number") from None
        if not (abs(value) <= MAX_ABS_VALUE or math.isnan(value)) or not (
                abs(position) <= MAX_ABS_VALUE):
            raise SimflError(f"{path} line {line}: {metric} = {row[metric]!r} at {x_col} = "
                             f"{row[x_col]!r} cannot be drawn (values are plotted up to "
                             f"{MAX_ABS_VALUE:g} in magnitude)")
        if "session" in header:
            sessions.append((position, row["session"]))
        if math.isfinite(value):
            xs.append(position)
            ys.append(value)
    if not xs:
        hint = " (a --timing-only run?)" if table == "evals" else ""
        raise SimflError(f"{path} has no {metric} values{hint}.")
    changes = tuple(p for (p, s), (_, s_next) in zip(sessions, sessions[1:]) if s != s_next)
    return Series(np.asarray(xs), np.asarray(ys), changes)
