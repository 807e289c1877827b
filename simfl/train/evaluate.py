"""Evaluation of a global model on the held-out test split."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from simfl.train.models import DenseNet, Params


class Evaluator:
    def __init__(self, net: DenseNet, x_test, y_test, device: torch.device) -> None:
        self.net = net
        self.x = torch.from_numpy(x_test).to(device)
        self.y = torch.from_numpy(y_test).to(device)

    def __call__(self, params: Params) -> tuple[float, float]:
        """Test accuracy and mean cross-entropy loss."""
        with torch.no_grad():
            logits = self.net.forward(params, self.x)
            loss = F.cross_entropy(logits, self.y)
            accuracy = (logits.argmax(dim=1) == self.y).float().mean()
        return float(accuracy), float(loss)
