"""Classifiers as pure functions of a parameter dict (no nn.Module state).

A model here is a recipe built for one data set: ``param_shapes()`` names every
parameter tensor and its shape, ``init(generator)`` makes a ``{name: tensor}`` dict of
exactly those shapes, and ``forward(params, x)`` computes logits from a batch of
flattened samples (``[N, prod(input_shape)]`` floats, or ``[N, length]`` token ids).
Keeping parameters outside the model lets the executor train any version of them
without copying modules.

``param_shapes`` needs no torch (this module imports torch only inside the methods that
compute), so a timing-only run gets a model's transfer size (:func:`model_bytes`) from
the same shapes that training would allocate.

Each model config class names its builder ``(cfg, input_shape, n_classes) -> model``
with :func:`simfl.core.registry.implements`; :func:`build_model` looks a config up there
(a subclass of a known config uses its base's builder unless it has its own).

How a model can be batched across clients (``batching``): ``"dense"`` (linear layers
only: the batched executor's hand-written backward pass), ``"stacked"`` (the model has
``stacked_forward``, a forward pass over K clients' parameters stacked along a new first
axis; autograd gives each client its own gradient) or None (trained one client at a
time).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from simfl.core.config import CharLstm, Cnn, Lenet5, Logreg, Mlp, Model, TorchModule
from simfl.core.registry import implementation_of, implements
from simfl.train.conv_net import ConvNet
from simfl.train.lstm_net import LstmNet
from simfl.train.net import PARAM_BYTES, Net, Params, Shapes, fan_in_bounds, uniform_init
from simfl.train.torch_net import TorchNet

if TYPE_CHECKING:
    import torch

__all__ = ["PARAM_BYTES", "ConvNet", "DenseNet", "LstmNet", "Net", "Params", "Shapes",
           "TorchNet", "build_model", "model_bytes", "param_shapes"]


class DenseNet:
    """Linear layers with ReLU between them; ``widths = (in, hidden..., out)``."""

    batching = "dense"
    eval_rows = 16384

    def __init__(self, widths: tuple[int, ...]) -> None:
        self.widths = tuple(widths)

    def param_shapes(self) -> Shapes:
        shapes: Shapes = {}
        for i, (n_in, n_out) in enumerate(zip(self.widths[:-1], self.widths[1:])):
            shapes[f"layer{i}.weight"] = (n_out, n_in)
            shapes[f"layer{i}.bias"] = (n_out,)
        return shapes

    def init(self, generator: "torch.Generator") -> Params:
        """Uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) weights and biases (PyTorch's default)."""
        shapes = self.param_shapes()
        return uniform_init(shapes, fan_in_bounds(shapes), generator)

    def forward(self, params: Params, x: "torch.Tensor") -> "torch.Tensor":
        import torch.nn.functional as F

        n_layers = len(self.widths) - 1
        for i in range(n_layers):
            x = F.linear(x, params[f"layer{i}.weight"], params[f"layer{i}.bias"])
            if i + 1 < n_layers:
                x = F.relu(x)
        return x

def _flat(input_shape: tuple[int, ...]) -> int:
    return math.prod(input_shape)


# each model config's builder(cfg, input_shape, n_classes) (``simfl.register`` adds more)
implements(Logreg, lambda cfg, shape, n_classes: DenseNet((_flat(shape), n_classes)))
implements(Mlp, lambda cfg, shape, n_classes: DenseNet((_flat(shape), *cfg.hidden, n_classes)))
# FedAvg's CNN: "same" 5x5 convolutions (padding 2), so 28x28 reaches the dense layer as 7x7
implements(Cnn, lambda cfg, shape, n_classes: ConvNet(
    shape, tuple((c, 5, 2) for c in cfg.channels), (cfg.hidden,), n_classes))
# LeNet-5: the first convolution padded (28x28 in, 16x5x5 out of the second pooling)
implements(Lenet5, lambda cfg, shape, n_classes: ConvNet(shape, ((6, 5, 2), (16, 5, 0)),
                                                         (120, 84), n_classes))
# the characters are both the input tokens and the classes
implements(CharLstm, lambda cfg, shape, n_classes: LstmNet(n_classes, cfg.embed, cfg.hidden,
                                                           cfg.layers, n_classes))
# any nn.Module, from the config's factory (simfl.train.torch_net)
implements(TorchModule, lambda cfg, shape, n_classes: TorchNet(cfg, shape, n_classes))


def build_model(cfg: Model, input_shape: tuple[int, ...] | int, n_classes: int) -> Net:
    """The model ``cfg`` describes, for samples of ``input_shape`` (an int: feature vectors
    of that length) and ``n_classes`` outputs."""
    shape = (input_shape,) if isinstance(input_shape, int) else tuple(input_shape)
    net: Net = implementation_of(cfg, "task.model.kind")(cfg, shape, n_classes)
    return net


def param_shapes(cfg: Model, input_shape: tuple[int, ...] | int, n_classes: int) -> Shapes:
    """Every parameter's name and shape, without torch."""
    return build_model(cfg, input_shape, n_classes).param_shapes()


def model_bytes(cfg: Model, input_shape: tuple[int, ...] | int, n_classes: int) -> int:
    """Size of the model's parameters in float32: what one transfer of the model carries."""
    shapes = param_shapes(cfg, input_shape, n_classes)
    return PARAM_BYTES * sum(math.prod(shape) for shape in shapes.values())
