"""The loop of the asynchronous server modes (``server.mode`` ``async`` or ``buffered``).

Decide, then compute: :class:`~simfl.sim.continuous.ContinuousServer` runs the clock to
the next server step (every arrival in ``async``, every K-th in ``buffered``) and says
which updates it applies and from which versions; only then are those updates trained,
each from the version it was sent, and applied (:mod:`simfl.algorithms.async_rules`,
weights :mod:`simfl.algorithms.staleness`). The loop keeps a model version only while a
device at work (or an update not yet applied) still needs it. ``rounds.csv`` gets one
row per version, ``updates.csv`` one per applied update, ``evals.csv`` is as in sync
mode (``round`` = versions made so far).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from simfl.algorithms.async_rules import Buffer, FedAsyncRule, FedBuffRule
from simfl.algorithms.staleness import staleness_fn
from simfl.core.config import AsyncMode, BufferedMode, Scenario
from simfl.core.records import Arrival, RoundOutcome, TrainJob, with_lr_scale
from simfl.core.rng import RngTree
from simfl.experiment.build import (build_client_sampler, build_context, build_online,
                                    build_probe, build_simulation, build_trainer,
                                    check_local_rule, write_mobility)
from simfl.experiment.gc_tuning import FREEZE_EVERY_S, gc_for_many_objects
from simfl.experiment.loop import ProgressFn
from simfl.experiment.model_files import write_models
from simfl.experiment.training import Trainer
from simfl.metrics.rundir import fresh_run_dir
from simfl.metrics.updates import StepRecorder, UpdatesWriter
from simfl.sim.continuous import STALL_DEADLINES, ContinuousServer
from simfl.sim.rounds.server_steps import Step
from simfl.sim.radio.radio_map import client_table
from simfl.sim.simulation import Simulation


class ContinuousLoop:
    """Runs server steps until ``run.rounds`` versions or ``run.horizon_s``; trains and
    applies each step's updates; writes ``updates.csv`` in ``out_dir``."""

    def __init__(self, scenario: Scenario, sim: Simulation, sampler, trainer: Trainer,
                 recorder: StepRecorder, rngs: RngTree, n_samples: np.ndarray,
                 out_dir: Path) -> None:
        server = scenario.server
        mode = server.mode
        assert isinstance(mode, (AsyncMode, BufferedMode))
        self.mode, self.server, self.run_cfg = mode, server, scenario.run
        self.sim, self.sampler, self.trainer, self.recorder = sim, sampler, trainer, recorder
        self.rngs = rngs
        self.sampler_state = sampler.init(n_samples)
        self.staleness = staleness_fn(mode.staleness, mode.staleness_a, mode.staleness_b)
        size = mode.buffer_size if isinstance(mode, BufferedMode) else 1
        self.rule: FedAsyncRule | FedBuffRule = (
            FedBuffRule(mode.buffer_size, mode.server_lr) if isinstance(mode, BufferedMode)
            else FedAsyncRule(mode.alpha))
        self.clock = ContinuousServer(
            sim, concurrency=mode.concurrency or server.clients_per_round, buffer_size=size,
            pick=self._pick, max_steps=scenario.run.rounds)
        self.updates = UpdatesWriter(out_dir)
        self.version = 0
        self.versions: dict[int, Any] = {0: trainer.params}
        self.rule_state: Any = None if trainer.params is None else self.rule.init(trainer.params)
        self.n_rounds = self.n_arrived = 0
        self.stalled_at_s: float | None = None

    def _pick(self, view, k: int) -> np.ndarray:
        rng = self.rngs.stream(f"sampler/look/{view.round}")
        return self.sampler.select(self.sampler_state, view, k, rng)

    def run(self, progress: ProgressFn | None) -> None:
        run, clock = self.run_cfg, self.clock
        self.trainer.evaluate(self.recorder, 0.0, 0)
        frozen_s = time.perf_counter()
        stopped = False
        try:
            with gc_for_many_objects() as freeze_survivors:
                while run.rounds is None or self.n_rounds < run.rounds:
                    self.sim.mobility.advance(self.sim.now_s)  # positions at each step
                    step = clock.run_step(run.horizon_s)
                    if step is None:
                        if clock.end_reason == "stall":
                            self.stalled_at_s = self.sim.now_s
                        break
                    if run.rounds is not None and self.n_rounds + 1 == run.rounds:
                        step = step.with_tail(clock.stop())  # the last version: end here
                        stopped = True
                    self._step(step)
                    if progress:
                        progress(self.n_rounds, self.sim.now_s, self.trainer.accuracy)
                    if time.perf_counter() - frozen_s > FREEZE_EVERY_S:
                        freeze_survivors()
                        frozen_s = time.perf_counter()
                if not stopped:  # ended between steps: the last version's row, no step
                    self._step(clock.stop())
            self.trainer.evaluate_last(self.recorder, self.sim.now_s, self.version)
        finally:
            self.updates.flush(force=True)

    def _step(self, step: Step) -> None:
        outcome = RoundOutcome(
            round=step.version, t_open_s=step.t_open_s, t_deadline_s=step.t_close_s,
            t_close_s=step.t_close_s, n_available=step.n_available, selected=step.invited,
            received=tuple(Arrival(u.client, u.base_version, u.t_s, u.n_samples)
                           for u in step.updates),
            missing=step.missing, retries=step.retries, energy_j=step.energy_j,
            mac_slots=step.mac_slots)
        self.sampler_state = self.sampler.observe(self.sampler_state, outcome)
        trainer = self.trainer
        trainer.evaluate_due(self.recorder, step.t_close_s, self.version, before_close=True)
        weights = [self._weight(u.staleness) for u in step.updates]
        n_trained = n_aggregated = 0
        if step.stepped and trainer.params is not None:
            n_trained, n_aggregated = self._train(step)
        if step.stepped:
            self.version = step.version + 1
            self.versions[self.version] = trainer.params
            needed = self.clock.needed_versions() | {self.version}
            self.versions = {v: p for v, p in self.versions.items() if v in needed}
            self.updates.add((u.t_s, u.client, u.base_version, u.applied_version, u.staleness,
                              w, u.job) for u, w in zip(step.updates, weights))
        self.n_rounds += 1
        self.n_arrived += len(step.updates)
        self.recorder.round(outcome, n_trained, n_aggregated)
        trainer.evaluate_due(self.recorder, step.t_close_s, self.version, before_close=False)

    def _weight(self, staleness: int) -> float:
        """The coefficient of an update: alpha s(tau) (async), eta_g s(tau) / K (buffered)."""
        s = self.staleness(staleness)
        if isinstance(self.mode, BufferedMode):
            return self.mode.server_lr * s / self.mode.buffer_size
        return self.mode.alpha * s

    def _train(self, step: Step) -> tuple[int, int]:
        """Train the step's updates, each from its version, and apply them in arrival order."""
        trainer: Any = self.trainer  # the model trainer (a timing-only run never trains)
        jobs = [TrainJob(u.client, u.base_version, u.job, self._payload(u.client, u.base_version))
                for u in step.updates]
        done = trainer.executor.submit(jobs, self.versions)
        params, state = trainer.params, self.rule_state
        stepped, n_applied = False, 0
        for u, trained in zip(step.updates, done):
            n_applied += 1
            s = self.staleness(u.staleness)
            if isinstance(self.rule, FedBuffRule):
                params, state, stepped = self.rule.update(state, params, trained.delta, s)
            else:
                params, state, stepped = self.rule.update(
                    state, params, self.versions[u.base_version], trained.delta, s)
        if not stepped or (isinstance(state, Buffer) and state.count):
            raise RuntimeError(f"version {step.version}: the server rule did not step on "
                               f"its {len(done)} updates")
        trainer.params, self.rule_state = params, state
        trainer.stepped = True
        trainer.n_trained += len(done)
        return len(done), n_applied

    def _payload(self, client: int, version: int) -> Any:
        """The local rule's payload (FedProx's mu) with the schedule's scale at ``version``."""
        trainer: Any = self.trainer
        payload = trainer.aggregator.client_payload(trainer.agg_state, client)
        scale = self.server.lr_schedule.scale(version)
        return payload if scale == 1.0 else with_lr_scale(payload, scale)

    def summary(self) -> dict[str, Any]:
        """Fields of ``summary.json``: the server's versions and the updates' mean staleness."""
        return {"server_versions": self.version, "mean_staleness": self.updates.mean_staleness}

    def warnings(self) -> list[str]:
        """What a user must know to read the run's result (``summary.json`` ``warnings``)."""
        found = self.trainer.warnings(self.n_arrived, self.n_rounds)
        if self.stalled_at_s is not None:
            found.append(f"no update arrived for {STALL_DEADLINES} deadlines "
                         f"({STALL_DEADLINES * self.server.deadline_s:g} s): the run ended "
                         f"at {self.stalled_at_s:g} s")
        return found


def run_continuous(scenario: Scenario, out_dir: Path | None = None,
                   progress: ProgressFn | None = None, threads: int | None = None):
    """:func:`~simfl.experiment.run.run_scenario` for the asynchronous modes: the same
    components and run directory, :class:`ContinuousLoop` instead of the round loop
    (the scenario has passed the preflight; ``threads``: torch's thread count, for the
    summary)."""
    from simfl.experiment.run import RunResult, default_out_dir, eval_columns, versions
    from simfl.preflight import upload_airtime_warnings

    started_s = time.perf_counter()
    check_local_rule(scenario)
    ctx = build_context(scenario)
    online = build_online(ctx)
    sim = build_simulation(ctx, online)
    trainer = build_trainer(ctx, online)
    probe = build_probe(ctx, sim, trainer)
    sampler = build_client_sampler(ctx, probe)

    out_dir = fresh_run_dir(out_dir or default_out_dir(scenario))
    config = {"scenario": scenario.to_dict(), "seed": scenario.seed,
              "model_bytes": ctx.model_bytes, "versions": versions()}
    recorder = StepRecorder(out_dir, config, scenario.run.target_accuracy, started_s,
                            eval_extra=eval_columns(ctx))
    loop = ContinuousLoop(scenario, sim, sampler, trainer, recorder, ctx.rngs, ctx.n_samples,
                          out_dir)
    try:
        loop.run(progress)
    finally:
        recorder.flush(force=True)
    recorder.clients(client_table(sim.battery.table(), sim.radio_map))
    write_mobility(out_dir, sim.mobility)
    write_models(out_dir, trainer)
    summary = recorder.finish(sim.now_s, sim.n_events, sim.events if scenario.run.events else None,
                              {**probe.counts, **loop.summary(), "torch_threads": threads,
                               "warnings": upload_airtime_warnings(scenario, ctx.model_bytes)
                               + loop.warnings()})
    return RunResult(out_dir, summary, recorder.outcomes, trainer.params)
