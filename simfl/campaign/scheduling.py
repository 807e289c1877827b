"""The scheduling loop of a sweep: feeds the engine up to its capacity, records each
result in the index as it comes, and on Ctrl-C or SIGTERM cancels what has not started,
stops what runs, keeps what finished and marks the unfinished runs pending again."""

from __future__ import annotations

import contextlib
import queue
import signal
import threading
from pathlib import Path
from typing import Any, Iterator

from simfl.campaign.engines import make_engine
from simfl.campaign.index import CampaignIndex
from simfl.campaign.progress import CampaignProgress
from simfl.campaign.worker import RunTask

#: how long the coordinator waits for a result before it looks at signals again (s)
POLL_S = 0.2


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


def execute(index: CampaignIndex, tasks: list[RunTask], engine_name: str, jobs: int,
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
                    inflight[task.id] = task  # first: a stop during the write finds it
                    index.set_running(task.id)
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
