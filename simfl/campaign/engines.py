"""Where a campaign's runs execute: in this process, a local process pool, or Dask.

Every engine takes a :class:`~simfl.campaign.worker.RunTask` and calls back with the
worker's result dict (from another thread for the pool and Dask); ``close(cancel=True)``
drops what has not started and stops what runs. A run's result does not depend on the
engine: each run builds everything from its own scenario and seed.
"""

from __future__ import annotations

import multiprocessing
from typing import Any, Callable

from simfl.campaign.worker import RunTask, execute_run, init_pool_worker, one_line
from simfl.core.errors import ConfigError, SimflError

Done = Callable[[dict[str, Any]], None]
ENGINES = ("local", "dask")
#: seconds to reach a Dask scheduler before the sweep gives up
SCHEDULER_TIMEOUT_S = 10


class InlineEngine:
    """``--jobs 1``: each run in this process, one after the other."""

    capacity = 1

    def submit(self, task: RunTask, done: Done) -> None:
        done(execute_run(task))

    def close(self, cancel: bool = False) -> None:
        pass


class PoolEngine:
    """A pool of ``jobs`` worker processes started with ``spawn`` (a forked copy of a
    process that has used torch is not safe), each reused for many runs."""

    def __init__(self, jobs: int) -> None:
        self.capacity = jobs
        context = multiprocessing.get_context("spawn")
        self.pool = context.Pool(jobs, initializer=init_pool_worker)

    def submit(self, task: RunTask, done: Done) -> None:
        def failed(err: BaseException) -> None:
            done({"id": task.id, "ok": False, "folder": task.folder, "summary": None,
                  "wall_time_s": None, "error": one_line(err)})

        self.pool.apply_async(execute_run, (task,), callback=done, error_callback=failed)

    def close(self, cancel: bool = False) -> None:
        if cancel:
            self.pool.terminate()
        else:
            self.pool.close()
        self.pool.join()


class DaskEngine:
    """Runs as tasks of a Dask distributed scheduler at ``address``, or of a
    ``LocalCluster`` of ``jobs`` single-threaded worker processes started here."""

    def __init__(self, jobs: int, address: str | None) -> None:
        try:
            import logging

            from distributed import Client, LocalCluster
        except ImportError:
            raise SimflError('the dask engine needs dask[distributed]: pip install '
                             '"simfl[dask]"') from None
        self.cluster = None
        try:
            if address:
                self.client = Client(address, timeout=SCHEDULER_TIMEOUT_S)
            else:
                self.cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                            dashboard_address=None,
                                            silence_logs=logging.ERROR)
                self.client = Client(self.cluster)
        except OSError as err:
            raise ConfigError("--scheduler", address, f"the address of a running Dask "
                              f"scheduler, such as tcp://host:8786 ({one_line(err)})") from None
        threads = sum(self.client.nthreads().values()) if address else jobs
        self.capacity = max(jobs, threads, 1)
        self.futures: list[Any] = []

    def submit(self, task: RunTask, done: Done) -> None:
        future = self.client.submit(execute_run, task, key=f"simfl-run-{task.id}", pure=False)

        def finished(f: Any) -> None:
            if f.cancelled():
                return
            try:
                done(f.result())
            except BaseException as err:  # the worker died or the task was lost
                done({"id": task.id, "ok": False, "folder": task.folder, "summary": None,
                      "wall_time_s": None, "error": one_line(err)})

        future.add_done_callback(finished)
        self.futures.append(future)

    def close(self, cancel: bool = False) -> None:
        try:
            if cancel and self.futures:
                self.client.cancel(self.futures, force=True)
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()


def check_engine(engine: str, jobs: int, scheduler: str | None = None) -> None:
    """Refuse an unknown engine, a worker count out of range, or a scheduler without
    Dask, before a sweep makes anything on disk."""
    if engine not in ENGINES:
        raise ConfigError("--engine", engine, " or ".join(ENGINES))
    if not isinstance(jobs, int) or isinstance(jobs, bool) or not 1 <= jobs <= 4096:
        raise ConfigError("--jobs", jobs, "an integer from 1 to 4096")
    if scheduler and engine != "dask":
        raise ConfigError("--scheduler", scheduler, "only with --engine dask")


def make_engine(engine: str, jobs: int, scheduler: str | None = None):
    """The engine named ``engine`` (local or dask) with ``jobs`` workers."""
    check_engine(engine, jobs, scheduler)
    if engine == "dask":
        return DaskEngine(jobs, scheduler)
    return InlineEngine() if jobs == 1 else PoolEngine(jobs)
