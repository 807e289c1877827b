"""The model side of a training run: the model step, the evaluation schedule, and the
answers samplers ask of the current model, behind the
:class:`~simfl.experiment.trainer.Trainer` interface the loops use.

:class:`ModelTrainer` puts together a :class:`~simfl.experiment.model_step.ModelStep`
(train, aggregate, optimise), an :class:`~simfl.experiment.eval_schedule.EvalSchedule`
(when the model is scored, the best model, divergence) and the run's
:class:`~simfl.experiment.compute.ModelCompute` (model, executor, evaluation: torch);
what a checkpoint holds of them is :func:`~simfl.experiment.checkpoint_state.trainer_state`.
Timing-only runs use :class:`~simfl.experiment.trainer.NullTrainer` instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from simfl.core.records import RoundOutcome
from simfl.core.rng import RngTree
from simfl.experiment.checkpoint_state import restore_trainer, trainer_state
from simfl.experiment.degraded import executor_fallback
from simfl.experiment.eval_schedule import EvalSchedule
from simfl.experiment.model_files import write_models
from simfl.experiment.model_step import ModelStep
from simfl.experiment.trainer import NullTrainer, Trainer
from simfl.metrics.recorder import RunRecorder
from simfl.sim.rounds.server_steps import Update

__all__ = ["ModelTrainer", "NullTrainer", "Trainer"]


class ModelTrainer:
    """The model side of a training run (:class:`~simfl.experiment.trainer.Trainer`).

    ``compute`` is the run's :class:`~simfl.experiment.compute.ModelCompute`, ``step`` its
    :class:`~simfl.experiment.model_step.ModelStep`, ``schedule`` its
    :class:`~simfl.experiment.eval_schedule.EvalSchedule`, ``sessions`` a
    :class:`~simfl.experiment.session_model.SessionRun` or
    :class:`~simfl.experiment.session_model.NoSessions`.
    """

    def __init__(self, compute: Any, step: ModelStep, schedule: EvalSchedule, sessions: Any,
                 data: Any, dataset: Any, rngs: RngTree) -> None:
        self.compute, self.step, self.schedule, self.sessions = compute, step, schedule, sessions
        self.data, self.dataset, self.rngs = data, dataset, rngs
        self._stats: Any = None

    @property
    def params(self) -> Any:
        """The global model."""
        return self.step.params

    @property
    def accuracy(self) -> float | None:
        """The latest evaluation's accuracy (None before the first)."""
        return self.schedule.accuracy

    @property
    def device(self) -> Any:
        return self.compute.device

    def begin_round(self, round: int, t_s: float) -> None:
        self.step.begin_round(round, t_s)

    def train(self, round: int, outcome: RoundOutcome,
              late_running: Mapping[int, int]) -> tuple[int, int]:
        return self.step.train(round, outcome, late_running)

    def apply(self, version: int, updates: Sequence[Update], staleness: Sequence[float],
              versions: Mapping[int, Any]) -> tuple[int, int]:
        return self.step.apply(version, updates, staleness, versions)

    def evaluate_due(self, recorder: RunRecorder, t_close_s: float, completed: int,
                     before_close: bool) -> None:
        self.schedule.due(recorder, self.step.params, t_close_s, completed, before_close)

    def evaluate_last(self, recorder: RunRecorder, t_s: float, completed: int) -> None:
        self.schedule.last(recorder, self.step.params, t_s, completed)

    def evaluate(self, recorder: RunRecorder, t_s: float, completed: int) -> None:
        self.schedule.evaluate(recorder, self.step.params, t_s, completed)

    def _client_stats(self) -> Any:
        if self._stats is None:
            from simfl.train.local import sample_loss
            from simfl.train.probe import ClientStats

            self._stats = ClientStats(self.compute.net, self.compute.executor,
                                      sample_loss(self.dataset), self.data.x_test, self.rngs)
        return self._stats

    def client_losses(self, clients: np.ndarray) -> np.ndarray:
        """Each client's mean local loss of the current global model."""
        return self._client_stats().losses(self.step.params, clients)  # type: ignore[no-any-return]

    def client_features(self, kind: str, clients: np.ndarray, noise_batch: int) -> np.ndarray:
        """Each client's learned feature row (``logit`` or ``update``) of the current model."""
        return self._client_stats().features(  # type: ignore[no-any-return]
            kind, self.step.params, clients, noise_batch)

    def warnings(self, n_arrived: int, n_rounds: int) -> list[str]:
        """What a user must know to read the run's result (``summary.json`` ``warnings``):
        the global model diverged, updates arrived but it never moved, or the batched
        executor asked for trained one job at a time."""
        return (self.schedule.warnings() + self.step.warnings(n_arrived, n_rounds)
                + executor_fallback(self.compute.asked_executor, self.compute.executor))

    def save_models(self, out_dir: Path) -> None:
        """``model.pt`` (the final model) and ``model_best.pt`` into ``out_dir``."""
        write_models(out_dir, self.compute.net, self.step.params, self.schedule.best.params)

    def snapshot(self) -> dict[str, Any]:
        """Everything a resumed run needs to train on exactly as this one would."""
        return trainer_state(self.step, self.schedule, self.sessions, self.compute.net)

    def restore(self, state: dict[str, Any]) -> None:
        restore_trainer(state, self.step, self.schedule, self.sessions, self.compute.net)
