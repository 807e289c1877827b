"""The loops a run can go through, and the round loop.

A loop is the strategy a run follows between its assembly and its summary
(:class:`RunLoop`): :class:`RoundLoop` runs rounds (``server.mode = "sync"``; with
``server.hierarchy`` the simulation's rounds are edge rounds and the trainer keeps a
model per edge, :mod:`~simfl.experiment.edges`), and
:class:`~simfl.experiment.async_loop.ContinuousLoop` runs server steps (``async``,
``buffered``). Each decides in simulated time first, then hands what arrived to the
model side through :class:`~simfl.experiment.trainer.Trainer`, and brings its own
recorder (:meth:`RoundLoop.build_recorder`).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, Callable, Protocol

import numpy as np

from simfl.core.config import Scenario
from simfl.core.errors import SimflError
from simfl.core.records import RoundOutcome
from simfl.core.rng import RngTree
from simfl.experiment.arrivals import ArrivalWatch
from simfl.experiment.build import BuildContext
from simfl.experiment.degraded import DegradationWatch
from simfl.experiment.gc_tuning import FREEZE_EVERY_S, gc_for_many_objects
from simfl.experiment.trainer import Trainer
from simfl.metrics.recorder import RunRecorder
from simfl.sim.simulation import Simulation

#: called after every round with (round index, simulated time, latest accuracy or None)
ProgressFn = Callable[[int, float, "float | None"], None]
#: called after every round with the number of rounds completed (checkpoints)
RoundEndFn = Callable[[int], None]


class RunLoop(Protocol):
    """What a run's assembly asks of its loop."""

    n_arrived: int  # updates that arrived so far (a checkpoint's fingerprint has it)

    def run(self, progress: ProgressFn | None, round_end: RoundEndFn | None = None,
            replay_rounds: int = 0) -> None: ...

    def summary(self) -> dict[str, Any]: ...  # the loop's own fields of summary.json

    def warnings(self) -> list[str]: ...  # summary.json's warnings about the run


def check_finite(outcome: RoundOutcome) -> None:
    """Refuse a round whose close time or energy is not a finite number: no table or
    summary is written with an infinite clock or a NaN energy (one line, exit 2)."""
    if not (math.isfinite(outcome.t_close_s) and math.isfinite(outcome.energy_j)):
        raise SimflError(f"round {outcome.round} closed at t = {outcome.t_close_s:g} s with "
                         f"{outcome.energy_j:g} J spent: the simulated time or energy is no "
                         "longer a finite number (a delay, rate or deadline of the scenario "
                         "is too extreme); nothing more is simulated")


class RoundLoop:
    """Runs rounds until ``run.rounds`` or ``run.horizon_s``; counts what arrived."""

    @staticmethod
    def build_recorder(out_dir: Path, config: dict[str, Any], ctx: BuildContext,
                       started_s: float, eval_extra: tuple[str, ...],
                       resume: bool) -> RunRecorder:
        """The recorder of a run of rounds (``resume``: silent while it replays)."""
        return RunRecorder(out_dir, config, ctx.scenario.run.target_accuracy, started_s,
                           eval_extra=eval_extra, late=ctx.keep_late, resume=resume,
                           tiers=ctx.tiered, upload_bits=ctx.upload_bits)

    def __init__(self, scenario: Scenario, sim: Simulation, sampler, trainer: Trainer,
                 recorder: RunRecorder, rngs: RngTree, n_samples: np.ndarray) -> None:
        self.run_cfg, self.sim, self.sampler, self.trainer = scenario.run, sim, sampler, trainer
        self.recorder, self.rngs = recorder, rngs
        self.sampler_state = sampler.init(n_samples)
        self.n_rounds = self.n_arrived = 0  # rounds, updates in
        self.watch = ArrivalWatch(sim.compute_s, scenario.server.deadline_s)
        self.degraded = DegradationWatch(scenario, sim.mac)

    def run(self, progress: ProgressFn | None, round_end: RoundEndFn | None = None,
            replay_rounds: int = 0) -> None:
        """Run to the end. A resumed run first replays its ``replay_rounds`` completed
        rounds (:class:`~simfl.experiment.journal.JournaledTrainer` answers for the
        model, the recorder stays silent), then calls ``round_end(replay_rounds)``, where
        the model side and the recorder take up the checkpoint's state."""
        run = self.run_cfg
        if replay_rounds == 0:
            self.trainer.evaluate(self.recorder, 0.0, 0)  # the initial model, at t = 0
        r = 0
        frozen_s = time.perf_counter()
        with gc_for_many_objects() as freeze_survivors:
            while (run.rounds is None or r < run.rounds) and (
                    run.horizon_s is None or self.sim.now_s < run.horizon_s):
                self._round(r)
                r += 1
                if progress and r > replay_rounds:
                    progress(r, self.sim.now_s, self.trainer.accuracy)
                if round_end and r >= replay_rounds:
                    round_end(r)
                if time.perf_counter() - frozen_s > FREEZE_EVERY_S:
                    freeze_survivors()
                    frozen_s = time.perf_counter()
        self.trainer.evaluate_last(self.recorder, self.sim.now_s, r)

    def _round(self, r: int) -> None:
        rng = self.rngs.stream(f"sampler/round/{r}")
        self.trainer.begin_round(r, self.sim.now_s)  # a new session's warm start
        # over-selection: ceil(overcommit * k) invitations, the round closes at the k-th
        # arrival (Simulation.n_invites; the invitees still at work then are ``late``)
        outcome = self.sim.run_round(
            r, lambda view: self.sampler.select(self.sampler_state, view,
                                                self.sim.n_invites, rng))
        check_finite(outcome)
        self.sampler_state = self.sampler.observe(self.sampler_state, outcome)
        self.trainer.evaluate_due(self.recorder, outcome.t_close_s, r, before_close=True)
        n_trained, n_aggregated = self.trainer.train(r, outcome, self.sim.late_running)
        self.n_rounds += 1
        self.n_arrived += len(outcome.received) + len(outcome.late_received)
        self.watch.observe(outcome)
        self.degraded.observe(outcome)
        self.recorder.round(outcome, n_trained, n_aggregated,
                            len(outcome.late_received) if n_trained else 0)
        self.trainer.evaluate_due(self.recorder, outcome.t_close_s, r + 1, before_close=False)

    def summary(self) -> dict[str, Any]:
        """Fields of ``summary.json`` of the loop's own: none for rounds."""
        return {}

    def warnings(self) -> list[str]:
        """What a user must know to read the run's result (``summary.json`` ``warnings``)."""
        return (self.watch.warnings() + self.degraded.warnings()
                + self.trainer.warnings(self.n_arrived, self.n_rounds))
