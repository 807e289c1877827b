"""``run_scenario`` and ``resume_run``: build a run's components, run its rounds, write
its run directory (and, with ``run.checkpoint_every_rounds``, its checkpoints)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection

from simfl.core.config import Scenario
from simfl.core.errors import ConfigError, SimflError
from simfl.core.records import RoundOutcome
from simfl.experiment import checkpoint
from simfl.experiment.build import (BuildContext, build_client_sampler, build_context,
                                    build_online, build_probe, build_simulation, build_trainer,
                                    check_local_rule, write_mobility)
from simfl.experiment.checkpoint import CheckpointError
from simfl.experiment.checkpoint_check import check_state, check_top, saved_scenario
from simfl.experiment.journal import JournaledTrainer
from simfl.experiment.loop import ProgressFn, RoundLoop
from simfl.experiment.model_files import write_models
from simfl.experiment.threads import torch_threads
from simfl.metrics.recorder import TABLES, RunRecorder
from simfl.metrics.run_lock import RunLock
from simfl.metrics.rundir import EVAL_COLUMNS, check_tables, fresh_run_dir
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
    preflight(scenario)  # every check that needs no training, before anything is allocated
    with torch_threads(scenario, threads) as chosen:
        if not scenario.server.mode.synchronous:  # async or buffered: no rounds
            from simfl.experiment.async_loop import run_continuous

            return run_continuous(scenario, out_dir, progress, chosen)
        started_s = time.perf_counter()
        run = _Run(scenario, started_s, out_dir)
        lock = RunLock(run.out_dir).acquire() if run.every is not None else None
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
            return _Run(scenario, started_s, run_dir, resume_from=found).go(progress, chosen)
    finally:
        lock.release()


def eval_columns(ctx: BuildContext) -> tuple[str, ...]:
    """The columns of ``evals.csv`` after ``accuracy`` and ``loss``: the session, and one
    accuracy per class with ``run.per_class_accuracy``."""
    scenario = ctx.scenario
    classes = ctx.data.n_classes if scenario.run.per_class_accuracy and ctx.trains else 0
    return (("session",) if scenario.population.sessions is not None else ()) + tuple(
        f"acc_class_{k}" for k in range(classes))


def scenario_digest(scenario: Scenario) -> str:
    """A hash of the resolved scenario (a checkpoint belongs to one scenario)."""
    text = json.dumps(scenario.to_dict(), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Run:
    """One run's built components, from a fresh start or a checkpoint."""

    def __init__(self, scenario: Scenario, started_s: float, out_dir: Path | None,
                 resume_from: Path | None = None) -> None:
        self.scenario = scenario
        check_local_rule(scenario)
        ctx = self.ctx = build_context(scenario)
        self.airtime = upload_airtime_warnings(scenario, ctx.upload_bytes)
        online = build_online(ctx)
        self.sim = build_simulation(ctx, online)
        trainer = build_trainer(ctx, online)
        self.every = scenario.run.checkpoint_every_rounds
        self.saved: dict[str, Any] | None = None
        live_trainer: dict[str, Any] = {}
        if resume_from is not None:
            self.saved = checkpoint.load(resume_from, trainer.device)
            check_top(self.saved, int(resume_from.name[len("round_"):]),
                      scenario.run.rounds)
            self._check_saved(scenario)
            live_trainer = trainer.snapshot()
            trainer = JournaledTrainer(trainer, self.saved["journal"])
        elif self.every is not None:
            trainer = JournaledTrainer(trainer)
        self.trainer = trainer
        self.probe = build_probe(ctx, self.sim, trainer)
        sampler = build_client_sampler(ctx, self.probe)

        if resume_from is None:
            out_dir = fresh_run_dir(out_dir or default_out_dir(scenario))
        assert out_dir is not None
        self.out_dir = out_dir
        config = {"scenario": scenario.to_dict(), "seed": scenario.seed,
                  "model_bytes": ctx.model_bytes, "versions": versions()}
        self.recorder = RunRecorder(out_dir, config, scenario.run.target_accuracy, started_s,
                                    eval_extra=eval_columns(ctx), late=ctx.keep_late,
                                    resume=resume_from is not None, tiers=ctx.tiered,
                                    upload_bits=ctx.upload_bits)
        self.loop = RoundLoop(scenario, self.sim, sampler, trainer, self.recorder, ctx.rngs,
                              ctx.n_samples)
        if self.saved is not None:  # all of it checked before any file is touched
            check_state(self.saved, self._fingerprint(), live_trainer, ctx.n_clients,
                        len(EVAL_COLUMNS) + len(eval_columns(ctx)), TABLES)
            check_tables(out_dir, TABLES, self.saved["recorder"]["sizes"])

    def _check_saved(self, scenario: Scenario) -> None:
        saved = self.saved
        assert saved is not None
        mine = versions()["simfl"]
        if saved["simfl"] != mine:
            raise CheckpointError(f"the checkpoint was written by simfl {saved['simfl']}, this "
                                  f"is simfl {mine}: resume with that version, or run again")
        if saved["scenario"] != scenario_digest(scenario):
            raise CheckpointError("the checkpoint belongs to another scenario than the run "
                                  "folder's config.json")

    def go(self, progress: ProgressFn | None, threads: int | None) -> RunResult:
        replay = 0 if self.saved is None else int(self.saved["rounds_done"])
        try:
            self.loop.run(progress, self._round_end, replay)
        finally:
            self.recorder.flush(force=True)
        if self.saved is not None and isinstance(self.trainer, JournaledTrainer) \
                and self.trainer.replaying:
            raise CheckpointError(f"the run ended before round {replay} in the replay: it "
                                  "does not replay the way it ran")
        sim, recorder = self.sim, self.recorder
        recorder.clients(client_table(sim.battery.table(), sim.radio_map))
        write_mobility(self.out_dir, sim.mobility)
        extra = {**self.probe.counts, "torch_threads": threads,
                 "warnings": self.airtime + self.probe.warnings + self.loop.warnings()}
        if self.saved is not None:
            extra["resumed_after_round"] = replay
        write_models(self.out_dir, self.trainer)  # before summary.json: a finished run has them
        summary = recorder.finish(sim.now_s, sim.n_events,
                                  sim.events if self.scenario.run.events else None, extra)
        return RunResult(self.out_dir, summary, recorder.outcomes, self.trainer.params)

    def _round_end(self, rounds_done: int) -> None:
        if self.saved is not None and rounds_done == int(self.saved["rounds_done"]):
            self._take_up(self.saved)
        elif self.every is not None and rounds_done % self.every == 0:
            checkpoint.save(self.out_dir, rounds_done, self._state(rounds_done))

    def _fingerprint(self) -> dict[str, Any]:
        """What the replay must reproduce exactly before a checkpoint is taken up."""
        r = self.recorder
        return {"now_s": self.sim.now_s, "events": self.sim.n_events, "rounds": r.n_rounds,
                "trained": r.trained_total, "aggregated": r.aggregated_total,
                "energy_j": r.energy_total_j, "arrived": self.loop.n_arrived}

    def _state(self, rounds_done: int) -> dict[str, Any]:
        trainer = self.trainer
        assert isinstance(trainer, JournaledTrainer)
        return {"format": 1, "simfl": versions()["simfl"],
                "scenario": scenario_digest(self.scenario), "rounds_done": rounds_done,
                "fingerprint": self._fingerprint(), "journal": trainer.entries,
                "trainer": trainer.snapshot(), "recorder": self.recorder.snapshot()}

    def _take_up(self, saved: dict[str, Any]) -> None:
        trainer = self.trainer
        assert isinstance(trainer, JournaledTrainer)
        trainer.end_replay()
        if self._fingerprint() != saved["fingerprint"]:
            raise CheckpointError(f"the replay of {saved['rounds_done']} rounds ended in "
                                  f"{self._fingerprint()}, the run was at "
                                  f"{saved['fingerprint']}: it does not replay the same way")
        trainer.restore(saved["trainer"])
        self.recorder.restore(saved["recorder"])
