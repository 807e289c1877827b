"""The loop of the asynchronous server modes (``server.mode`` ``async`` or ``buffered``).

Decide, then compute: :class:`~simfl.sim.continuous.ContinuousServer` runs the clock to
the next server step (every arrival in ``async``, every K-th in ``buffered``) and says
which updates it applies and from which versions; only then does the model side train
those updates, each from the version it was sent, and apply them
(:meth:`~simfl.experiment.trainer.Trainer.apply`: :mod:`simfl.algorithms.async_rules`,
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

from simfl.algorithms.staleness import staleness_fn
from simfl.core.config import AsyncMode, BufferedMode, Scenario
from simfl.core.records import Arrival, RoundOutcome
from simfl.core.rng import RngTree
from simfl.experiment.build import BuildContext
from simfl.experiment.gc_tuning import FREEZE_EVERY_S, gc_for_many_objects
from simfl.experiment.loop import ProgressFn, RoundEndFn
from simfl.experiment.trainer import Trainer
from simfl.metrics.recorder import RunRecorder
from simfl.metrics.updates import StepRecorder, UpdatesWriter
from simfl.sim.continuous import STALL_DEADLINES, ContinuousServer
from simfl.sim.rounds.server_steps import Step
from simfl.sim.simulation import Simulation


class ContinuousLoop:
    """Runs server steps until ``run.rounds`` versions or ``run.horizon_s``; hands each
    step's updates to the model side; writes ``updates.csv`` beside the recorder's
    tables."""

    @staticmethod
    def build_recorder(out_dir: Path, config: dict[str, Any], ctx: BuildContext,
                       started_s: float, eval_extra: tuple[str, ...],
                       resume: bool) -> RunRecorder:
        """The recorder of a run of server versions (one ``rounds.csv`` row each)."""
        assert not resume, "asynchronous runs take no checkpoints"
        return StepRecorder(out_dir, config, ctx.scenario.run.target_accuracy, started_s,
                            eval_extra=eval_extra)

    def __init__(self, scenario: Scenario, sim: Simulation, sampler, trainer: Trainer,
                 recorder: RunRecorder, rngs: RngTree, n_samples: np.ndarray) -> None:
        server = scenario.server
        mode = server.mode
        assert isinstance(mode, (AsyncMode, BufferedMode))
        self.mode, self.server, self.run_cfg = mode, server, scenario.run
        self.sim, self.sampler, self.trainer, self.recorder = sim, sampler, trainer, recorder
        self.rngs = rngs
        self.sampler_state = sampler.init(n_samples)
        self.staleness = staleness_fn(mode.staleness, mode.staleness_a, mode.staleness_b)
        size = mode.buffer_size if isinstance(mode, BufferedMode) else 1
        self.clock = ContinuousServer(
            sim, concurrency=mode.concurrency or server.clients_per_round, buffer_size=size,
            pick=self._pick, max_steps=scenario.run.rounds)
        self.updates = UpdatesWriter(recorder.out_dir)
        self.version = 0
        self.versions: dict[int, Any] = {0: trainer.params}
        self.n_rounds = self.n_arrived = 0
        self.stalled_at_s: float | None = None

    def _pick(self, view, k: int) -> np.ndarray:
        rng = self.rngs.stream(f"sampler/look/{view.round}")
        return self.sampler.select(self.sampler_state, view, k, rng)

    def run(self, progress: ProgressFn | None, round_end: RoundEndFn | None = None,
            replay_rounds: int = 0) -> None:
        """Run to the end (no checkpoints: ``round_end`` and ``replay_rounds`` are those of
        the round loop, and validation refuses them with an asynchronous mode)."""
        assert round_end is None and replay_rounds == 0, "asynchronous runs take no checkpoints"
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
        factors = [self.staleness(u.staleness) for u in step.updates]
        weights = [self._weight(s) for s in factors]
        n_trained = n_aggregated = 0
        if step.stepped:  # the model side trains and applies them (a null one does nothing)
            n_trained, n_aggregated = trainer.apply(step.version, step.updates, factors,
                                                    self.versions)
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

    def _weight(self, s: float) -> float:
        """The coefficient of an update of staleness factor s = s(tau): alpha s (async),
        eta_g s / K (buffered)."""
        if isinstance(self.mode, BufferedMode):
            return self.mode.server_lr * s / self.mode.buffer_size
        return self.mode.alpha * s

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
