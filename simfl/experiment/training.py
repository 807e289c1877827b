"""The model side of a run: train the received updates, aggregate, evaluate on schedule.

:class:`ModelTrainer` does it with a real model; the same interface
(:class:`~simfl.experiment.trainer.Trainer`) has a null version for timing-only runs
(:class:`~simfl.experiment.trainer.NullTrainer`).
"""

from __future__ import annotations

import functools
import math
from typing import Any, Mapping

import numpy as np

from simfl.algorithms.report import N_AGGREGATED, STEPPED, WAITING_FOR
from simfl.algorithms.server_optimizers import server_step
from simfl.core.config import Scenario
from simfl.core.errors import SimflError
from simfl.core.records import RoundOutcome, TrainJob, with_lr_scale
from simfl.core.rng import RngTree
from simfl.experiment.model_files import BestModel
from simfl.experiment.degraded import executor_fallback
from simfl.experiment.model_warnings import divergence, never_updated
from simfl.experiment.trainer import NullTrainer, Trainer
from simfl.metrics.recorder import RunRecorder

__all__ = ["ModelTrainer", "NullTrainer", "Trainer"]


class ModelTrainer:
    """The global model, its aggregator and the evaluation schedule of a training run.

    ``compute`` is the run's :class:`~simfl.experiment.compute._Trainer` (model, executor,
    evaluation), ``sessions`` a :class:`~simfl.experiment.sessions.SessionRun` or
    :class:`~simfl.experiment.sessions.NoSessions`, ``optimizer`` a server optimiser or None.
    """

    def __init__(self, scenario: Scenario, compute, aggregator, sessions, data, rngs: RngTree,
                 n_samples: np.ndarray, optimizer=None) -> None:
        self.server, self.run, self.dataset = scenario.server, scenario.run, scenario.task.dataset
        self.compute, self.aggregator, self.sessions = compute, aggregator, sessions
        self.executor = compute.executor  # trains the round's jobs
        self.data, self.rngs, self.n_samples = data, rngs, n_samples
        self.params = compute.params
        self.agg_state = aggregator.init(self.params, n_samples)
        self.optimizer = optimizer
        self.opt_state = None if optimizer is None else optimizer.init(self.params)
        self.versions: dict[int, Any] = {}  # models that late devices still work from
        self.accuracy: float | None = None
        self._scored: tuple[Any, tuple, tuple[float, float], tuple[float, ...]] | None = None
        self._n_timed_evals = 1  # the evaluation at t = 0 is the first of the schedule
        self.n_trained = 0
        self.stepped = False  # whether any round moved the global model
        self.waiting_for: float | None = None  # the aggregator's last WAITING_FOR, if any
        #: [rounds completed, t_s, loss] of the first evaluation that found the model or
        #: its loss not finite (NaN or infinite); None while every one was finite
        self.diverged: list[float] | None = None
        self._stats = None
        self.best = BestModel()  # the global model of the best evaluation (model_best.pt)

    def begin_round(self, round: int, t_s: float) -> None:
        """A new session's warm start, when the round opening at ``t_s`` enters one."""
        if self.sessions.enter(round, t_s):
            self.params = self.sessions.start(self.params)
            self.agg_state = self.aggregator.init(self.params, self.n_samples)
            self.opt_state = None if self.optimizer is None else self.optimizer.init(self.params)

    def train(self, round: int, outcome: RoundOutcome,
              late_running: Mapping[int, int]) -> tuple[int, int]:
        """Train and aggregate the round's updates; (updates trained, updates aggregated).

        ``late_running`` maps each device still at work after the round to the round
        whose model it trains from; those models are kept.
        """
        n_trained = n_aggregated = 0
        versions = {round: self.params, **self.versions}
        arrivals = outcome.received + outcome.late_received
        if len(arrivals) >= self.server.min_updates:
            # a late upload trains as it would have on time: from its round's model,
            # with its round's minibatches and step size
            jobs = [TrainJob(a.client, a.base_round, a.base_round,
                             self._payload(a.client, a.base_round)) for a in arrivals]
            teacher = self.sessions.teacher()
            if teacher is None:
                updates = self._submit(jobs, versions, outcome)
            else:  # the continuous initialiser: distil towards the last session's model
                updates = self.sessions.distill(jobs, versions, teacher)
            # each side counts its own work: the updates the executor returned, the
            # updates the aggregator says it used; the run's invariant check compares them
            n_trained = len(updates)
            w_t = self.params
            self.params, self.agg_state, metrics = self.aggregator.aggregate(
                self.agg_state, self.params, outcome, updates)
            missing = [key for key in (N_AGGREGATED, STEPPED) if key not in metrics]
            if missing:
                raise SimflError(f"the {self.server.algorithm.kind} aggregator's metrics "
                                 f"lack {' and '.join(missing)}: every aggregator reports how "
                                 "many updates it used and whether the model moved")
            n_aggregated = int(metrics[N_AGGREGATED])
            if self.optimizer is not None and metrics[STEPPED]:  # the server optimiser's step
                moved = self.params
                self.params, self.opt_state = server_step(
                    self.optimizer, self.opt_state, w_t, self.params)
                # a module's buffers are averaged, never stepped (simfl.train.torch_net)
                buffers = getattr(self.compute.net, "buffer_names", ())
                self.params = {**self.params, **{k: moved[k] for k in buffers}}
            self.stepped = self.stepped or bool(metrics[STEPPED])
            self.waiting_for = metrics.get(WAITING_FOR)
        needed = set(late_running.values())  # a model is kept while a late device needs it
        self.versions = {b: v for b, v in versions.items() if b in needed}
        self.n_trained += n_trained
        return n_trained, n_aggregated

    def _submit(self, jobs: list[TrainJob], versions: dict, outcome: RoundOutcome):
        """Train ``jobs``; an aggregator that needs only the weighted sum of the deltas
        (FedAvg, FedProx: ``needs = "sum"``) gets them summed by the executor."""
        if getattr(self.aggregator, "needs", None) != "sum":
            return self.executor.submit(jobs, versions)
        weigh = functools.partial(self.aggregator.sum_weight, outcome)
        return self.executor.submit(jobs, versions, weigh=weigh)

    def _payload(self, client: int, r: int) -> Any:
        """The aggregator's payload for ``client`` with round r's step-size scale
        (``server.lr_schedule``; the local rule reads ``lr_scale``)."""
        payload = self.aggregator.client_payload(self.agg_state, client)
        scale = self.server.lr_schedule.scale(r)
        return payload if scale == 1.0 else with_lr_scale(payload, scale)

    def evaluate_due(self, recorder: RunRecorder, t_close_s: float, completed: int,
                     before_close: bool) -> None:
        """The evaluations due by ``t_close_s``; ``completed`` rounds are done at each.

        With ``run.eval_every_s`` the times k * eval_every_s before the round's close
        (``before_close``: the model is still the one the round started from, and the
        rounds completed are those before it) or at its close (after aggregation). The
        ``round`` column of ``evals.csv`` is always the number of rounds completed at
        the evaluation's time: never negative, never decreasing.
        """
        run = self.run
        if run.eval_every_s is not None:
            while True:
                t_s = self._n_timed_evals * run.eval_every_s
                if t_s > t_close_s or (before_close and t_s == t_close_s):
                    break
                self.evaluate(recorder, t_s, completed)
                self._n_timed_evals += 1
        elif not before_close and completed % run.eval_every_rounds == 0:
            self.evaluate(recorder, t_close_s, completed)

    def evaluate_last(self, recorder: RunRecorder, t_s: float, completed: int) -> None:
        """The end-of-run evaluation, unless one was recorded at ``t_s`` already."""
        rows = recorder.eval_rows
        if not rows or rows[-1][0] < t_s:
            self.evaluate(recorder, t_s, completed)

    def evaluate(self, recorder: RunRecorder, t_s: float, completed: int) -> None:
        """Record the current model's test scores at simulated time ``t_s``."""
        extra = self.sessions.extra
        if self._scored is None or self._scored[0] is not self.params or self._scored[1] != extra:
            self._scored = (self.params, extra, self.sessions.score(self.params),
                            self.compute.evaluate.class_accuracy(self.params, self.data.n_classes)
                            if self.run.per_class_accuracy else ())
        accuracy, loss = self._scored[2]
        self.accuracy = accuracy
        self.best.offer(accuracy, self.params)
        if self.diverged is None and not (math.isfinite(loss) and _finite(self.params)):
            self.diverged = [completed, t_s, loss]
        recorder.evaluation(t_s, completed, accuracy, loss, *extra, *self._scored[3])

    @property
    def device(self) -> Any:
        return self.compute.device

    def snapshot(self) -> dict[str, Any]:
        """Everything a resumed run needs to train on exactly as this one would: the
        global model, the aggregator's and the server optimiser's states, the models late
        devices work from, the session's warm-start state and the evaluation schedule."""
        return {"params": self.params, "agg_state": self.agg_state, "opt_state": self.opt_state,
                "versions": self.versions,
                "accuracy": self.accuracy, "n_timed_evals": self._n_timed_evals,
                "n_trained": self.n_trained, "stepped": self.stepped,
                "waiting_for": self.waiting_for, "diverged": self.diverged,
                "sessions": self.sessions.snapshot(), "best": self.best.snapshot(),
                "client_buffers": getattr(self.compute.net, "client_buffers", None),
                "local_optimizer": self.executor.kept}

    def restore(self, state: dict[str, Any]) -> None:
        self.params, self.agg_state = state["params"], state["agg_state"]
        self.opt_state = state["opt_state"]
        self.versions, self.accuracy = state["versions"], state["accuracy"]
        self._n_timed_evals, self.n_trained = state["n_timed_evals"], state["n_trained"]
        self.stepped, self.waiting_for = state["stepped"], state["waiting_for"]
        self.diverged, self.executor.kept = state.get("diverged"), state.get("local_optimizer", {})
        self.sessions.restore(state["sessions"])
        self.best.restore(state["best"])
        if state["client_buffers"] is not None:  # FedBN: each client's own buffers
            self.compute.net.client_buffers = state["client_buffers"]
        self._scored = None

    def _client_stats(self):
        if self._stats is None:
            from simfl.train.local import sample_loss
            from simfl.train.probe import ClientStats

            self._stats = ClientStats(self.compute.net, self.executor, sample_loss(self.dataset),
                                      self.data.x_test, self.rngs)
        return self._stats

    def client_losses(self, clients: np.ndarray) -> np.ndarray:
        """Each client's mean local loss of the current global model."""
        return self._client_stats().losses(self.params, clients)

    def client_features(self, kind: str, clients: np.ndarray, noise_batch: int) -> np.ndarray:
        """Each client's learned feature row (``logit`` or ``update``) of the current model."""
        return self._client_stats().features(kind, self.params, clients, noise_batch)

    def warnings(self, n_arrived: int, n_rounds: int) -> list[str]:
        """What a user must know to read the run's result (``summary.json`` ``warnings``).

        Two cases: the global model diverged (:func:`divergence`), and updates arrived
        but the global model never moved (:func:`never_updated`).
        """
        found = divergence(self.diverged) + executor_fallback(self.run.executor, self.executor)
        if self.stepped or n_arrived == 0:
            return found
        return found + [never_updated(self.server, self.n_trained, self.waiting_for,
                                      n_arrived, n_rounds)]



def _finite(params: Any) -> bool:
    """Whether every tensor of the model ``params`` holds only finite numbers."""
    return all(bool(v.isfinite().all()) for v in params.values())
