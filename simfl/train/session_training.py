"""What training does for sessions: the similarity rule's gradient rounds and
evaluation on a session's label set (docs/algorithms.md §3)."""

from __future__ import annotations

import numpy as np
import torch

from simfl.core.records import TrainJob
from simfl.train.evaluate import Evaluator
from simfl.train.local import LossFn
from simfl.train.models import DenseNet, Params


def gradient_rounds(executor, start: Params, clients: np.ndarray, n_samples: np.ndarray,
                    rounds: int, first_id: int) -> Params:
    """``rounds`` rounds of FL from ``start`` with every one of ``clients`` (full participation).

    Each round trains all clients from the current model with ``executor`` (built with
    the halved local lr of §3 step 2) and moves to the average of their local models
    weighted by n_i / sum_j n_j. Round v uses the job round id ``first_id - v`` (negative,
    so these minibatch streams never coincide with a simulated round's). These rounds
    are a side computation at a session start: not charged simulated time or energy,
    and not counted in ``trained_updates``.
    """
    params = start
    weights = n_samples[clients].astype(np.float64)
    weights = weights / weights.sum()
    for v in range(rounds):
        jobs = [TrainJob(int(c), -1, first_id - v) for c in clients]
        updates = executor.submit(jobs, {-1: params})
        params = {name: value + sum(float(w) * u.delta[name] for w, u in zip(weights, updates))
                  for name, value in params.items()}
    return params


class SessionEvaluator:
    """Test accuracy and loss on the test samples whose label is in a given set.

    One :class:`Evaluator` (with per-sample ``loss``, default cross-entropy) per label
    set, built on first use; ``labels=None`` scores the whole test split.
    """

    def __init__(self, net: DenseNet, x_test: np.ndarray, y_test: np.ndarray,
                 device: torch.device, loss: LossFn | None = None) -> None:
        self.net, self.x, self.y, self.device, self.loss = net, x_test, y_test, device, loss
        self._by_labels: dict[tuple[int, ...] | None, Evaluator] = {}

    def __call__(self, params: Params, labels: tuple[int, ...] | None = None) -> tuple[float, float]:
        if labels not in self._by_labels:
            keep = np.ones(len(self.y), dtype=bool) if labels is None else np.isin(self.y, labels)
            self._by_labels[labels] = Evaluator(self.net, self.x[keep], self.y[keep], self.device,
                                                self.loss)
        return self._by_labels[labels](params)
