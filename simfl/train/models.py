"""Classifiers as pure functions of a parameter dict (no nn.Module state).

A model here is a recipe: ``init(generator)`` makes a ``{name: tensor}`` dict and
``forward(params, x)`` computes logits. Keeping parameters outside the model lets the
executor train any version of them without copying modules.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from simfl.core.config import Logreg, Mlp, Model

Params = dict[str, torch.Tensor]


class DenseNet:
    """Linear layers with ReLU between them; ``widths = (in, hidden..., out)``."""

    def __init__(self, widths: tuple[int, ...]) -> None:
        self.widths = widths

    def init(self, generator: torch.Generator) -> Params:
        """Uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) weights and biases (PyTorch's default)."""
        params: Params = {}
        for i, (n_in, n_out) in enumerate(zip(self.widths[:-1], self.widths[1:])):
            bound = 1.0 / math.sqrt(n_in)
            params[f"layer{i}.weight"] = (torch.rand(n_out, n_in, generator=generator) * 2 - 1) * bound
            params[f"layer{i}.bias"] = (torch.rand(n_out, generator=generator) * 2 - 1) * bound
        return params

    def forward(self, params: Params, x: torch.Tensor) -> torch.Tensor:
        n_layers = len(self.widths) - 1
        for i in range(n_layers):
            x = F.linear(x, params[f"layer{i}.weight"], params[f"layer{i}.bias"])
            if i + 1 < n_layers:
                x = F.relu(x)
        return x


#: plug-in models (:func:`simfl.register`): config class -> builder(cfg, input_shape, n_classes)
BUILDERS: dict = {}


def build_model(cfg: Model, n_features: int, n_classes: int) -> DenseNet:
    if type(cfg) in BUILDERS:
        return BUILDERS[type(cfg)](cfg, (n_features,), n_classes)
    if isinstance(cfg, Logreg):
        return DenseNet((n_features, n_classes))
    if isinstance(cfg, Mlp):
        return DenseNet((n_features, *cfg.hidden, n_classes))
    raise TypeError(f"no model for {cfg!r}")
