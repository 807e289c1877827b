"""When the global model is scored, and what the scores tell: the evaluation schedule,
the best model so far (``model_best.pt``) and the first sign of divergence.

Evaluations are due every ``run.eval_every_s`` of simulated time or every
``run.eval_every_rounds`` rounds, and once more at the end of the run; each scores the
model it is given on the test split (or the session's label set, with
``population.sessions``), once per model: an unchanged model is not scored again.
"""

from __future__ import annotations

import math
from typing import Any

from simfl.core.config import Run
from simfl.metrics.recorder import RunRecorder


class BestModel:
    """The global model of the best evaluation so far, copied when one beats it."""

    def __init__(self) -> None:
        self.accuracy: float | None = None
        self.params: Any = None

    def offer(self, accuracy: float, params: Any) -> None:
        """Keep a copy of ``params`` if ``accuracy`` beats every earlier one."""
        if params is None or not math.isfinite(accuracy):
            return
        if self.accuracy is None or accuracy > self.accuracy:
            self.accuracy = accuracy
            self.params = {k: v.detach().clone() for k, v in params.items()}

    def snapshot(self) -> dict[str, Any]:
        return {"accuracy": self.accuracy, "params": self.params}

    def restore(self, state: dict[str, Any]) -> None:
        self.accuracy, self.params = state["accuracy"], state["params"]


class EvalSchedule:
    """The evaluations of a training run, recorded into ``evals.csv``.

    ``sessions`` says the ``session`` column and scores a model (the whole test split,
    or the session's labels), ``class_accuracy(params)`` gives the per-class accuracies
    (``run.per_class_accuracy``).
    """

    def __init__(self, run: Run, sessions: Any, class_accuracy: Any) -> None:
        self.run, self.sessions, self.class_accuracy = run, sessions, class_accuracy
        self.accuracy: float | None = None  # the latest evaluation's
        self._scored: tuple[Any, tuple, tuple[float, float], tuple[float, ...]] | None = None
        self.n_timed_evals = 1  # the evaluation at t = 0 is the first of the schedule
        #: [rounds completed, t_s, loss] of the first evaluation that found the model or
        #: its loss not finite (NaN or infinite); None while every one was finite
        self.diverged: list[float] | None = None
        self.best = BestModel()  # the global model of the best evaluation (model_best.pt)

    def due(self, recorder: RunRecorder, params: Any, t_close_s: float, completed: int,
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
                t_s = self.n_timed_evals * run.eval_every_s
                if t_s > t_close_s or (before_close and t_s == t_close_s):
                    break
                self.evaluate(recorder, params, t_s, completed)
                self.n_timed_evals += 1
        elif not before_close and completed % run.eval_every_rounds == 0:
            self.evaluate(recorder, params, t_close_s, completed)

    def last(self, recorder: RunRecorder, params: Any, t_s: float, completed: int) -> None:
        """The end-of-run evaluation, unless one was recorded at ``t_s`` already."""
        rows = recorder.eval_rows
        if not rows or rows[-1][0] < t_s:
            self.evaluate(recorder, params, t_s, completed)

    def evaluate(self, recorder: RunRecorder, params: Any, t_s: float, completed: int) -> None:
        """Record the test scores of the model ``params`` at simulated time ``t_s``."""
        extra = self.sessions.extra
        if self._scored is None or self._scored[0] is not params or self._scored[1] != extra:
            self._scored = (params, extra, self.sessions.score(params),
                            self.class_accuracy(params) if self.run.per_class_accuracy else ())
        accuracy, loss = self._scored[2]
        self.accuracy = accuracy
        self.best.offer(accuracy, params)
        if self.diverged is None and not (math.isfinite(loss) and _finite(params)):
            self.diverged = [completed, t_s, loss]
        recorder.evaluation(t_s, completed, accuracy, loss, *extra, *self._scored[3])

    def warnings(self) -> list[str]:
        """The warning of a model that became NaN or infinite (none otherwise)."""
        return divergence(self.diverged)

    def snapshot(self) -> dict[str, Any]:
        """Where the schedule stands, the latest and best scores, the divergence found."""
        return {"accuracy": self.accuracy, "n_timed_evals": self.n_timed_evals,
                "diverged": self.diverged, "best": self.best.snapshot()}

    def restore(self, state: dict[str, Any]) -> None:
        self.accuracy, self.n_timed_evals = state["accuracy"], state["n_timed_evals"]
        self.diverged = state.get("diverged")
        self.best.restore(state["best"])
        self._scored = None


def divergence(diverged: list[float] | None) -> list[str]:
    """The warning for a model that became NaN or infinite: ``diverged`` is
    :attr:`EvalSchedule.diverged`. The run goes on (its timing and energy tables stay
    valid), but every later score is of a broken model."""
    if diverged is None:
        return []
    completed, t_s, loss = diverged
    if completed == 0:
        return [f"the initial model's test loss is {loss}, not a finite number: the data "
                "set holds NaN or infinite values (or the model cannot score it); every "
                "evaluation is meaningless"]
    return [f"the global model diverged: at the evaluation after round {int(completed)} "
            f"(t = {t_s:g} s) its parameters or its test loss ({loss}) were no longer "
            "finite, and every later score is meaningless; lower task.lr or the server's "
            "step size, or look for NaN or infinite values in the data set"]


def _finite(params: Any) -> bool:
    """Whether every tensor of the model ``params`` holds only finite numbers."""
    return all(bool(v.isfinite().all()) for v in params.values())
