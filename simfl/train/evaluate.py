"""Evaluation of a global model on the held-out test split."""

from __future__ import annotations

import torch

from simfl.train.local import LossFn, cross_entropy
from simfl.train.models import Net, Params


class Evaluator:
    """Test accuracy and mean loss; ``loss`` (per sample) defaults to cross-entropy.

    The test split stays on the device; each evaluation is one batched forward pass per
    ``chunk_rows`` test samples (by default the model's ``eval_rows``: 16,384 for dense
    nets, fewer for convolutional and recurrent ones, whose activations are larger), so
    memory stays bounded for large test splits. Real-valued targets (the ``quadratic``
    data set) have no accuracy: it is NaN.
    """

    def __init__(self, net: Net, x_test, y_test, device: torch.device,
                 loss: LossFn | None = None, chunk_rows: int | None = None) -> None:
        self.net = net
        self.x = torch.from_numpy(x_test).to(device)
        self.y = torch.from_numpy(y_test).to(device)
        self.loss = loss or cross_entropy
        self.chunk_rows = chunk_rows or getattr(net, "eval_rows", 16384)

    def __call__(self, params: Params) -> tuple[float, float]:
        """Test accuracy and mean loss of ``params``."""
        n = len(self.y)
        classify = not self.y.is_floating_point()
        loss_sum = torch.zeros((), dtype=torch.float64, device=self.y.device)
        correct = torch.zeros((), dtype=torch.int64, device=self.y.device)
        with torch.no_grad():
            for start in range(0, n, self.chunk_rows):
                x, y = self.x[start:start + self.chunk_rows], self.y[start:start + self.chunk_rows]
                out = self.net.forward(params, x)
                loss_sum += self.loss(out, y).sum(dtype=torch.float64)
                if classify:
                    correct += (out.argmax(dim=1) == y).sum()
        accuracy = float(correct) / n if classify else float("nan")
        return accuracy, float(loss_sum) / n

    def class_accuracy(self, params: Params, n_classes: int) -> tuple[float, ...]:
        """Accuracy of ``params`` on the test samples of each class 0 … ``n_classes`` - 1.

        Entry k is the fraction of test samples labelled k that the model labels k (NaN
        when the test split holds no sample of class k, and for real-valued targets).
        """
        if self.y.is_floating_point():
            return (float("nan"),) * n_classes
        correct = torch.zeros(n_classes, dtype=torch.int64, device=self.y.device)
        with torch.no_grad():
            for start in range(0, len(self.y), self.chunk_rows):
                x, y = self.x[start:start + self.chunk_rows], self.y[start:start + self.chunk_rows]
                hit = self.net.forward(params, x).argmax(dim=1) == y
                correct += torch.bincount(y[hit], minlength=n_classes)[:n_classes]
        total = torch.bincount(self.y, minlength=n_classes)[:n_classes]
        return tuple(float(c) / float(t) if t > 0 else float("nan")
                     for c, t in zip(correct.tolist(), total.tolist()))
