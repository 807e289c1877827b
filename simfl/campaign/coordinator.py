"""The coordinator of a sweep: expands the runs, keeps the index, feeds an engine.

Only the coordinator writes the index. A re-run of the same sweep skips the runs that
are done, retries the failed ones, and runs the points a grown grid added. On Ctrl-C
(SIGINT) or SIGTERM it cancels what has not started, stops what runs, marks the
unfinished runs pending again and re-raises; a later sweep resumes each of them from its
latest checkpoint when it has one (``run.checkpoint_every_rounds``), and otherwise
redoes it in a clean folder.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from simfl.campaign.engines import make_engine
from simfl.campaign.grid import RunSpec, expand, parse_grid, parse_seeds
from simfl.campaign.index import CampaignError, CampaignIndex, Row
from simfl.campaign.progress import CampaignProgress
from simfl.campaign.worker import RunTask
from simfl.core.config import Scenario, load_scenario, parse_override
from simfl.core.config.scenario import resolve_scenario_path
from simfl.core.errors import ConfigError

LOCK_NAME = "index.lock"
#: how long the coordinator waits for a result before it looks at signals again (s)
POLL_S = 0.2


@dataclass(frozen=True)
class SweepReport:
    """What one sweep did: ``total`` runs in the campaign's sweep, ``skipped`` already
    done, ``ran`` executed now, of which ``failed`` failed; wall time of this sweep."""

    folder: Path
    total: int
    skipped: int
    ran: int
    failed: int
    wall_time_s: float

    def line(self) -> str:
        failed = f", {self.failed} failed" if self.failed else ""
        return (f"{self.folder}: {self.total} runs, {self.ran} run now{failed}, "
                f"{self.skipped} already done, in {self.wall_time_s:.1f} s")


def _overrides(set: Iterable[str] | Mapping[str, Any] | None) -> list[tuple[str, Any]]:
    if set is None:
        return []
    if isinstance(set, Mapping):
        return list(set.items())
    return [parse_override(text) for text in set]


def _grid(grid: Iterable[str] | Mapping[str, Iterable[Any]] | None) -> list[tuple[str, list[Any]]]:
    if grid is None:
        return []
    if isinstance(grid, Mapping):
        pairs = [(key, list(values)) for key, values in grid.items()]
        for key, values in pairs:
            if key == "seed" or not values:
                raise ConfigError("--grid", key, "a scenario key other than seed, with values")
        return pairs
    pairs = [parse_grid(text) for text in grid]
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ConfigError("--grid", ", ".join(keys), "each key once")
    return pairs


def _seeds(seeds: str | int | Iterable[int] | None) -> list[int] | None:
    if seeds is None:
        return None
    if isinstance(seeds, str):
        return parse_seeds(seeds)
    if isinstance(seeds, int):
        return [seeds]
    return parse_seeds(",".join(str(int(s)) for s in seeds))


@contextlib.contextmanager
def _campaign_lock(folder: Path) -> Iterator[None]:
    """One sweep at a time per campaign folder (an advisory lock, freed if we die)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    handle = open(folder / LOCK_NAME, "a+")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise CampaignError(f"{folder} is in use by another simfl sweep") from None
        yield
    finally:
        handle.close()


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops the sweep as Ctrl-C does (in the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _owned(folder: Path, name: str) -> Path | None:
    """The run folder ``name`` of the campaign in ``folder`` when it may be removed: a
    direct child, not a link."""
    path = folder / name
    if name in ("", ".", "..") or "/" in name or os.sep in name or path.is_symlink():
        return None
    return path if path.parent == folder else None


def _free_name(folder: Path, name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... the first neither indexed nor on disk."""
    n = 1
    candidate = name
    while candidate in taken or os.path.lexists(folder / candidate):
        n += 1
        candidate = f"{name}_{n}"
    return candidate


def _prepare(index: CampaignIndex, folder: Path, row: Row, taken: set[str]) -> str:
    """The folder a redone run writes: its old one, or a fresh one when a killed sweep
    left it ``running`` (a worker of that sweep may still be writing it). A run stopped
    after a checkpoint keeps its folder (a fresh one gets a copy) and resumes from it;
    any other is started over in an empty folder."""
    old = _owned(folder, row.folder)
    resumable = old is not None and _resumable(old)
    name = row.folder
    if row.status == "running":
        name = _free_name(folder, row.folder, taken)
        taken.add(name)
        index.set_folder(row.id, name)
        if resumable:
            assert old is not None
            try:
                shutil.copytree(old, folder / name)
            except (OSError, shutil.Error):  # changed while copied: start over
                shutil.rmtree(folder / name, ignore_errors=True)
    elif resumable:
        return name
    if old is not None and old.exists():
        shutil.rmtree(old, ignore_errors=True)
    return name


def _resumable(run_folder: Path) -> bool:
    """Whether ``run_folder`` holds an unfinished run with a checkpoint."""
    return ((run_folder / "checkpoint" / "LATEST").is_file()
            and not (run_folder / "summary.json").exists())


def sweep(scenario: Scenario | str, seeds: str | int | Iterable[int] | None = None,
          grid: Iterable[str] | Mapping[str, Iterable[Any]] | None = None,
          set: Iterable[str] | Mapping[str, Any] | None = None, out: str | Path | None = None,
          jobs: int = 1, engine: str = "local", scheduler: str | None = None,
          quiet: bool = True, command: list[str] | None = None) -> SweepReport:
    """Run a campaign: every grid point times every seed, skipping runs already done.

    Parameters
    ----------
    scenario
        A :class:`Scenario`, or the path or bundled name of a scenario script.
    seeds
        ``"1-5"``, ``"1,3,7"``, an int or a list of ints (default: the scenario's seed).
    grid
        ``["KEY=v1,v2", ...]`` or ``{KEY: [v1, v2], ...}``: the runs cover every
        combination (the last key varies fastest).
    set
        Overrides applied to every run (``["KEY=VALUE", ...]`` or ``{KEY: VALUE}``).
    out
        The campaign folder (default ``runs/NAME_sweep``): ``index.sqlite`` and one run
        folder per run.
    jobs, engine, scheduler
        ``jobs`` workers of the ``local`` process pool (1: in this process) or of
        ``dask`` (a ``LocalCluster``, or the scheduler at ``scheduler``).
    quiet
        No progress bar (it is shown only when stderr is a terminal anyway).
    command
        The command line recorded in each run's provenance.json (default ``sys.argv``).
    """
    from simfl import __version__

    started_s = time.perf_counter()
    source = None
    if isinstance(scenario, str):
        source = str(resolve_scenario_path(scenario).resolve())
        scenario = load_scenario(scenario)
    specs = expand(scenario, _overrides(set), _grid(grid), _seeds(seeds), __version__)
    folder = Path(out) if out is not None else Path("runs") / f"{scenario.name}_sweep"
    if folder.exists() and not folder.is_dir():
        raise ConfigError("--out", str(folder), "a folder, or a path where one can be made "
                          "(this is a file)")
    folder.mkdir(parents=True, exist_ok=True)
    folder = folder.resolve()
    command = list(sys.argv if command is None else command)
    with _campaign_lock(folder):
        index = CampaignIndex(folder, create=True)
        try:
            index.add_grid_keys([k for k in specs[0].params if k != "seed"] if specs else [])
            todo = _todo(index, folder, specs)
            tasks = [RunTask(row.id, str(folder / name), row.scenario, command, source)
                     for row, name in todo]
            ran, failed = _execute(index, tasks, engine, jobs, scheduler,
                                   CampaignProgress(folder.name, len(tasks), quiet))
        finally:
            index.close()
    return SweepReport(folder, len(specs), len(specs) - len(tasks), ran, failed,
                       time.perf_counter() - started_s)


def _todo(index: CampaignIndex, folder: Path, specs: list[RunSpec]) -> list[tuple[Row, str]]:
    """Add the new runs to the index; return the runs to execute, with their folders."""
    known = {row.id: row for row in index.rows()}
    taken = index.folders()
    for spec in specs:
        if spec.id not in known:
            name = _free_name(folder, spec.folder, taken)
            taken.add(name)
            index.add(spec.id, name, spec.params, spec.scenario)
    known = {row.id: row for row in index.rows()}
    todo = []
    for spec in specs:
        row = known[spec.id]
        if row.status == "done" and (folder / row.folder / "summary.json").is_file():
            continue
        todo.append((row, _prepare(index, folder, row, taken)))
    return todo


def _execute(index: CampaignIndex, tasks: list[RunTask], engine_name: str, jobs: int,
             scheduler: str | None, progress: CampaignProgress) -> tuple[int, int]:
    """Run ``tasks`` on the engine, recording each result; returns (ran, failed)."""
    ran = failed = 0
    if not tasks:
        progress.close()
        return ran, failed
    results: queue.Queue = queue.Queue()
    waiting = list(tasks)
    inflight: dict[str, RunTask] = {}
    engine = None
    try:
        with _sigterm_as_interrupt():
            engine = make_engine(engine_name, jobs, scheduler)
            while waiting or inflight:
                while waiting and len(inflight) < engine.capacity:
                    task = waiting.pop(0)
                    index.set_running(task.id)
                    inflight[task.id] = task
                    progress.started()
                    engine.submit(task, results.put)
                try:
                    result = results.get(timeout=POLL_S)
                except queue.Empty:
                    continue
                ok = _record(index, inflight.pop(result["id"]), result)
                ran += 1
                failed += not ok
                progress.finished(ok)
    except BaseException:
        if engine is not None:
            engine.close(cancel=True)
        while not results.empty():  # what finished before the stop stays finished
            result = results.get()
            if result["id"] in inflight:
                _record(index, inflight.pop(result["id"]), result)
        index.set_pending(list(inflight))
        progress.close()
        raise
    engine.close()
    progress.close()
    return ran, failed


def _record(index: CampaignIndex, task: RunTask, result: dict[str, Any]) -> bool:
    if result["ok"]:
        name = Path(result["folder"]).name
        index.set_done(task.id, name, result["wall_time_s"], result["summary"])
        return True
    index.set_failed(task.id, result["error"], result["wall_time_s"])
    return False
