"""``run_scenario`` and ``resume_run``: one assembly of a run's components
(:class:`RunAssembly`), its loop run, its run directory written (and, with
``run.checkpoint_every_rounds``, its checkpoints).

Every run is assembled the same way, whatever its server mode: the build context, the
simulation, the model side (:class:`~simfl.experiment.trainer.Trainer`), the probe and
the sampler, the run folder and its recorder, checkpointing, and the loop the mode asks
for (:func:`loop_class`: rounds or server steps). The loop decides, the trainer
computes; the assembly then writes what every run writes.
"""

from __future__ import annotations

import importlib.metadata
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection

from simfl.core.config import Scenario
from simfl.core.errors import ConfigError
from simfl.core.records import RoundOutcome
from simfl.experiment import checkpoint
from simfl.experiment.async_loop import ContinuousLoop
from simfl.experiment.build import (BuildContext, build_client_sampler, build_context,
                                    build_online, build_probe, build_simulation, build_trainer,
                                    check_local_rule, write_mobility)
from simfl.experiment.checkpoint import CheckpointError
from simfl.experiment.checkpoint_check import saved_scenario
from simfl.experiment.checkpoint_state import Checkpointing
from simfl.experiment.loop import ProgressFn, RoundLoop, RunLoop
from simfl.experiment.threads import torch_threads
from simfl.metrics.run_lock import RunLock
from simfl.metrics.rundir import EVAL_COLUMNS, fresh_run_dir
from simfl.preflight import preflight, upload_airtime_warnings
from simfl.sim.radio.radio_map import client_table


@dataclass(frozen=True)
class RunResult:
    out_dir: Path
    summary: dict[str, Any]
    outcomes: list[RoundOutcome]
    params: Any = None  # the final global model (None in timing-only runs)


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in ("simfl", "numpy", "simpy", "torch", "scikit-learn"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "not installed"
    return found


def default_out_dir(scenario: Scenario) -> Path:
    return Path("runs") / f"{scenario.name}_seed{scenario.seed}"


def run_scenario(scenario: Scenario, out_dir: Path | None = None,
                 progress: ProgressFn | None = None, *, threads: int | None = None) -> RunResult:
    """Simulate ``scenario`` and write its run directory (a fresh one by default).

    ``threads`` forces torch's thread count (a campaign's runs use one), in place of
    ``run.threads`` and the choice by model size (:mod:`simfl.experiment.threads`).
    """
    # every check that needs no training, before anything is allocated; a timing-only run
    # never loads the data, so it reads the data files whole as ``simfl validate`` does
    preflight(scenario, whole_files=scenario.run.timing_only)
    with torch_threads(scenario, threads) as chosen:
        started_s = time.perf_counter()
        run = RunAssembly(scenario, started_s, out_dir)
        lock = RunLock(run.out_dir).acquire() if run.checkpoints.every is not None else None
        try:
            return run.go(progress, chosen)
        finally:
            if lock is not None:
                lock.release()


def resume_run(run_dir: Path | str, progress: ProgressFn | None = None, *,
               threads: int | None = None, named_code: Collection[str] = (),
               trust_code: bool = False) -> RunResult:
    """Continue the run in ``run_dir`` from its latest checkpoint (``threads`` as in
    :func:`run_scenario`).

    Code that the folder's ``config.json`` names (a ``torch_module`` factory, a
    ``task.loss``) is imported only when ``named_code`` names it again, or with
    ``trust_code`` (:func:`~simfl.experiment.checkpoint_check.saved_scenario`).

    The completed rounds are replayed on the timing side (no training: the checkpoint's
    journal answers for the model), which rebuilds the clock, batteries, availability,
    the MAC, late devices and the sampler exactly; the model side then takes up the
    checkpoint's state and the tables are cut back to their length at the checkpoint.
    The finished run's tables are the same, byte for byte, as an uninterrupted run's.
    """
    run_dir = Path(run_dir)
    if not (run_dir / "config.json").is_file():
        raise ConfigError("run folder", str(run_dir), "a run folder (it has no config.json)")
    lock = RunLock(run_dir).acquire()  # one writer: a second resume is refused here
    try:
        if (run_dir / "summary.json").exists():
            raise CheckpointError(f"{run_dir} is finished (it has a summary.json): nothing "
                                  "to resume")
        found = checkpoint.latest(run_dir)
        if found is None:
            raise CheckpointError(f"{run_dir} has no checkpoint to resume from (set "
                                  "run.checkpoint_every_rounds to write them)")
        scenario = saved_scenario(run_dir, named_code, trust_code)
        preflight(scenario)
        with torch_threads(scenario, threads) as chosen:
            started_s = time.perf_counter()
            return RunAssembly(scenario, started_s, run_dir, resume_from=found).go(progress,
                                                                                   chosen)
    finally:
        lock.release()


def eval_columns(ctx: BuildContext) -> tuple[str, ...]:
    """The columns of ``evals.csv`` after ``accuracy`` and ``loss``: the session, and one
    accuracy per class with ``run.per_class_accuracy``."""
    scenario = ctx.scenario
    classes = ctx.data.n_classes if scenario.run.per_class_accuracy and ctx.trains else 0
    return (("session",) if scenario.population.sessions is not None else ()) + tuple(
        f"acc_class_{k}" for k in range(classes))


def loop_class(scenario: Scenario) -> Any:
    """The loop ``scenario``'s server mode runs: rounds (``sync``, with or without edge
    servers) or server steps (``async``, ``buffered``)."""
    return RoundLoop if scenario.server.mode.synchronous else ContinuousLoop


class RunAssembly:
    """One run's components, built once from a fresh start or a checkpoint."""

    def __init__(self, scenario: Scenario, started_s: float, out_dir: Path | None,
                 resume_from: Path | None = None) -> None:
        self.scenario = scenario
        check_local_rule(scenario)
        ctx = self.ctx = build_context(scenario)
        self.airtime = upload_airtime_warnings(scenario, ctx.upload_bytes)
        online = build_online(ctx)
        self.sim = build_simulation(ctx, online)
        trainer = build_trainer(ctx, online)
        checkpoints = self.checkpoints = Checkpointing(
            scenario, versions()["simfl"], scenario.run.checkpoint_every_rounds, resume_from,
            trainer.device)
        live_trainer = trainer.snapshot() if resume_from is not None else {}
        self.trainer = trainer = checkpoints.journal(trainer)
        self.probe = build_probe(ctx, self.sim, trainer)
        sampler = build_client_sampler(ctx, self.probe)

        if resume_from is None:
            out_dir = fresh_run_dir(out_dir or default_out_dir(scenario))
        assert out_dir is not None
        self.out_dir = out_dir
        config = {"scenario": scenario.to_dict(), "seed": scenario.seed,
                  "model_bytes": ctx.model_bytes, "versions": versions()}
        loop = loop_class(scenario)
        self.recorder = loop.build_recorder(out_dir, config, ctx, started_s,
                                            eval_columns(ctx), resume_from is not None)
        self.loop: RunLoop = loop(scenario, self.sim, sampler, trainer, self.recorder,
                                  ctx.rngs, ctx.n_samples)
        checkpoints.attach(out_dir, self.sim, trainer, self.recorder, self.loop)
        checkpoints.check_saved(live_trainer, ctx.n_clients,
                                len(EVAL_COLUMNS) + len(eval_columns(ctx)))

    def go(self, progress: ProgressFn | None, threads: int | None) -> RunResult:
        """Run the loop, then write what every run writes: ``clients.csv``, the mobility
        table, the models, ``summary.json``."""
        checkpoints = self.checkpoints
        saving = checkpoints.every is not None or checkpoints.saved is not None
        try:
            self.loop.run(progress, checkpoints.round_end if saving else None,
                          checkpoints.replay_rounds)
        finally:
            self.recorder.flush(force=True)
        checkpoints.check_replayed()
        sim, recorder = self.sim, self.recorder
        recorder.clients(client_table(sim.battery.table(), sim.radio_map))
        write_mobility(self.out_dir, sim.mobility)
        extra = {**self.probe.counts, **self.loop.summary(), "torch_threads": threads,
                 "warnings": self.airtime + self.probe.warnings + self.loop.warnings()}
        if checkpoints.saved is not None:
            extra["resumed_after_round"] = checkpoints.replay_rounds
        self.trainer.save_models(self.out_dir)  # before summary.json: a finished run has them
        summary = recorder.finish(sim.now_s, sim.n_events,
                                  sim.events if self.scenario.run.events else None, extra)
        return RunResult(self.out_dir, summary, recorder.outcomes, self.trainer.params)
