"""What a worker does with one run: rebuild its scenario, run it into its folder, report.

A worker writes its run folder only (the run's tables, summary.json and
provenance.json; a run stopped after a checkpoint is resumed from it) and returns a
plain dict; the coordinator records it in the index.
Failures come back as a one-line error, never as an exception object, so that any
engine can carry them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator


@dataclass(frozen=True)
class RunTask:
    """What a worker needs: the run's id, folder (absolute), resolved scenario (plain
    form), and for provenance.json the command line and the scenario script."""

    id: str
    folder: str
    scenario: dict[str, Any]
    command: list[str]
    source: str | None = None
    named_code: tuple[str, ...] = ()  # the code the user's scenario and --set name
    trust_code: bool = False
    campaign: str | None = None  # the campaign folder (code is never loaded from it)
    #: the ``[key, value]`` overrides and grid values this run was given
    given: list[list[Any]] | None = None


def one_line(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    if not isinstance(err, _simfl_error()):
        text = f"{type(err).__name__}: {text}"
    return " ".join(text.split())


def _simfl_error() -> type:
    from simfl.core.errors import SimflError

    return SimflError


def execute_run(task: RunTask) -> dict[str, Any]:
    """Run ``task`` and return ``{"id", "ok", "folder", "summary", "wall_time_s", "error"}``."""
    started_s = time.perf_counter()
    started_at = time.time()
    try:
        from simfl.core.config import Scenario
        from simfl.core.config.code_refs import check_saved_code
        from simfl.experiment import run_scenario
        from simfl.metrics.rundir import write_provenance
        from simfl.plugins import load_plugins

        load_plugins()
        if task.campaign is not None:
            check_saved_code(task.scenario, f"the campaign index (run {task.id})",
                             Path(task.campaign), task.named_code, task.trust_code)
        scenario = Scenario.from_dict(task.scenario)
        assert isinstance(scenario, Scenario)
        with _torch_threads(None if scenario.run.timing_only else RUN_THREADS):
            result = (_resumed(Path(task.folder), scenario, task)
                      or run_scenario(scenario, Path(task.folder), None, threads=RUN_THREADS))
        write_provenance(result.out_dir, task.command, started_at,
                         Path(task.source) if task.source else None,
                         None if task.given is None else [(k, v) for k, v in task.given])
        return {"id": task.id, "ok": True, "folder": str(result.out_dir),
                "summary": result.summary, "wall_time_s": time.perf_counter() - started_s,
                "error": None}
    except Exception as err:  # reported in the index; the campaign goes on
        return {"id": task.id, "ok": False, "folder": task.folder, "summary": None,
                "wall_time_s": time.perf_counter() - started_s, "error": one_line(err)}


def _resumed(folder: Path, scenario: Any, task: RunTask | None = None) -> Any:
    """The run in ``folder`` continued from its checkpoint; None (and the folder emptied
    for a fresh start) when it has none or it belongs to another scenario or version.
    Code that the folder's config.json names and the user did not is refused."""
    from simfl.core.config import Scenario
    from simfl.core.config.code_refs import UntrustedCode, check_saved_code
    from simfl.core.errors import SimflError
    from simfl.experiment import resume_run
    from simfl.experiment.checkpoint import latest
    from simfl.experiment.checkpoint_state import scenario_digest
    from simfl.metrics.run_lock import RunInUse

    try:
        if latest(folder) is not None:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            named, trust = (task.named_code, task.trust_code) if task else ((), False)
            within = Path(task.campaign) if task and task.campaign is not None else folder
            check_saved_code(config["scenario"], str(folder / "config.json"), within,
                             named, trust)
            saved = Scenario.from_dict(config["scenario"])
            if scenario_digest(saved) == scenario_digest(scenario):  # type: ignore[arg-type]
                return resume_run(folder, threads=RUN_THREADS, named_code=named,
                                  trust_code=trust)
    except (RunInUse, UntrustedCode):
        raise  # another process is writing it, or code was refused: never empty it
    except (SimflError, OSError, ValueError, KeyError, TypeError):
        pass  # started over below
    if folder.exists():
        shutil.rmtree(folder)
    return None


#: torch threads per training run of a campaign: sums over a tensor are split among
#: threads, so their last bits depend on the thread count; one thread everywhere makes a
#: run's tables the same in this process, a pool worker and a Dask worker (and parallel
#: runs do not compete for cores)
RUN_THREADS = 1


@contextlib.contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    """torch's intra-op thread count set to ``n`` for the block (None: torch untouched,
    not even imported: timing-only runs never import it)."""
    if n is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


#: how often a pool worker checks that its coordinator is still alive (seconds)
PARENT_CHECK_S = 0.5


def init_pool_worker() -> None:
    """A local pool worker ignores Ctrl-C (the coordinator decides) and exits when its
    coordinator is gone (killed), so it never keeps writing a folder the index has
    handed to a later sweep."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(PARENT_CHECK_S)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="simfl-parent-watch").start()
