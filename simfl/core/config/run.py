"""How long to run, when to evaluate, and how to execute training."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from simfl.core.config.node import Node, at_most, positive, require

#: the most torch threads a run may ask for
MAX_THREADS = 1024


@dataclass(frozen=True)
class Run(Node):
    """Stopping rule, evaluation schedule and execution settings.

    The run stops after ``rounds`` rounds or once simulated time reaches ``horizon_s``,
    whichever comes first (at least one must be set). The global model is evaluated
    every ``eval_every_rounds`` rounds (default 1) or every ``eval_every_s`` simulated
    seconds, on the held-out test split, and once more at the end.

    ``executor``: ``inline`` trains a round's updates one after another, ``batched``
    trains them together as one stacked network (same results up to float rounding;
    a model that cannot be stacked, ``char_lstm``, is still trained one update at a
    time), ``auto`` picks per model what measured faster: batched for ``logreg`` and
    ``mlp``, inline for ``cnn`` and ``lenet5`` on a CPU (their convolutions already
    keep a core busy) and batched on a GPU, inline for ``char_lstm``.

    ``checkpoint_every_rounds``: after every that many rounds, the run's state is written
    to its folder's ``checkpoint/`` (atomically; the previous one is replaced), and
    ``simfl resume FOLDER`` continues a run that was stopped from its latest one, with
    the same tables as an uninterrupted run. Null: no checkpoints.

    ``threads``: torch's thread count for training. Null (default): one thread for a
    model below 1,000,000 parameters (small operations run slower when shared between
    threads, on a busy machine most of all), torch's own count (one per core) for a
    larger one; with ``OMP_NUM_THREADS`` set, torch follows that. ``summary.json``
    records the count used (``torch_threads``).

    ``per_class_accuracy``: ``evals.csv`` gains the columns ``acc_class_0`` …
    ``acc_class_{C-1}``, the accuracy on the test samples of each of the C classes
    (training runs only; off by default, so the table keeps its usual columns).

    ``mobility_csv``: write ``mobility.csv`` (t_s, client, x_m, y_m, ap of every client
    at the start and at every refresh of the positions; needs ``network.radio``).
    """

    exclusive = (("eval_every_rounds", "eval_every_s"),)

    rounds: int | None = 20
    horizon_s: float | None = None
    eval_every_rounds: int | None = None
    eval_every_s: float | None = None
    target_accuracy: float | None = None
    timing_only: bool = False
    executor: Literal["auto", "inline", "batched"] = "auto"
    device: Literal["cpu", "cuda", "auto"] = "cpu"
    events: bool = False
    checkpoint_every_rounds: int | None = None
    per_class_accuracy: bool = False
    threads: int | None = None
    mobility_csv: bool = False

    def validate(self) -> None:
        positive(self, "rounds", "horizon_s", "eval_every_rounds", "eval_every_s",
                 "checkpoint_every_rounds", "threads")
        at_most(self, MAX_THREADS, "threads")
        require(self.rounds is not None or self.horizon_s is not None, "rounds", self.rounds,
                "a positive integer when horizon_s is null")
        require(self.eval_every_rounds is None or self.eval_every_s is None, "eval_every_s",
                self.eval_every_s, "null when eval_every_rounds is set (set only one of them)")
        if self.eval_every_rounds is None and self.eval_every_s is None:
            self._set_default("eval_every_rounds", 1)
        if self.target_accuracy is not None:
            require(0.0 <= self.target_accuracy <= 1.0, "target_accuracy",
                    self.target_accuracy, "a fraction in [0, 1]")
