"""The model protocol and the parameter helpers every model family shares.

A model is a recipe whose parameters live outside it, as a ``{name: tensor}`` dict
(:data:`Params`) of the shapes its ``param_shapes()`` names (:data:`Shapes`); the
families (:mod:`simfl.train.models` dense, :mod:`simfl.train.conv_net` convolutional,
:mod:`simfl.train.lstm_net` recurrent) draw their initial values with
:func:`uniform_init`. No torch at import time.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import torch

Params = dict[str, "torch.Tensor"]
Shapes = dict[str, tuple[int, ...]]

#: bytes of one parameter (float32)
PARAM_BYTES = 4


class Net(Protocol):
    """What every model provides (see :mod:`simfl.train.models`).

    A model may also have ``trainable`` (the names local training differentiates and
    steps; all of them without it), ``train_forward`` (the forward pass of local training;
    ``forward`` without it), ``randomness(seed)`` (a context in which a job's random
    draws are seeded), ``local_buffers`` with ``client_start``/``keep`` (state each
    client keeps between jobs) and ``state_dict(params)`` (what ``model.pt`` holds):
    :class:`simfl.train.torch_net.TorchNet` has them all.
    """

    #: ``"dense"``, ``"stacked"`` or None: how the batched executor can train it
    batching: str | None
    #: test samples per forward pass when evaluating (bounds the activations' memory)
    eval_rows: int

    def param_shapes(self) -> Shapes: ...

    def init(self, generator: "torch.Generator") -> Params: ...

    def forward(self, params: Params, x: "torch.Tensor") -> "torch.Tensor": ...


def uniform_init(shapes: Shapes, bounds: dict[str, float], generator) -> Params:
    """Uniform(-bound, bound) draws, in the order of ``shapes`` (one stream)."""
    import torch

    return {name: (torch.rand(shape, generator=generator) * 2 - 1) * bounds[name]
            for name, shape in shapes.items()}


def fan_in_bounds(shapes: Shapes) -> dict[str, float]:
    """1/sqrt(fan_in) for a layer's weight and bias, fan_in being the weight's input size
    (``in`` of a linear layer, ``in_channels * k * k`` of a convolution): PyTorch's default
    initialisation of ``nn.Linear`` and ``nn.Conv2d``."""
    bounds = {}
    for name in shapes:
        layer = name.rsplit(".", 1)[0]
        bounds[name] = 1.0 / math.sqrt(math.prod(shapes[f"{layer}.weight"][1:]))
    return bounds
