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

``BUILDERS`` maps each model config class to a builder ``(cfg, input_shape, n_classes)
-> model``; :func:`build_model` looks a config up there (a subclass of a known config
uses its base's builder unless it has its own).

How a model can be batched across clients (``batching``): ``"dense"`` (linear layers
only: the batched executor's hand-written backward pass), ``"stacked"`` (the model has
``stacked_forward``, a forward pass over K clients' parameters stacked along a new first
axis; autograd gives each client its own gradient) or None (trained one client at a
time).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Protocol

from simfl.core.config import CharLstm, Cnn, Lenet5, Logreg, Mlp, Model

if TYPE_CHECKING:
    import torch

Params = dict[str, "torch.Tensor"]
Shapes = dict[str, tuple[int, ...]]

#: bytes of one parameter (float32)
PARAM_BYTES = 4


class Net(Protocol):
    """What every model provides (see the module docstring)."""

    #: ``"dense"``, ``"stacked"`` or None: how the batched executor can train it
    batching: str | None
    #: test samples per forward pass when evaluating (bounds the activations' memory)
    eval_rows: int

    def param_shapes(self) -> Shapes: ...

    def init(self, generator: "torch.Generator") -> Params: ...

    def forward(self, params: Params, x: "torch.Tensor") -> "torch.Tensor": ...


def _uniform(shapes: Shapes, bounds: dict[str, float], generator) -> Params:
    """Uniform(-bound, bound) draws, in the order of ``shapes`` (one stream)."""
    import torch

    return {name: (torch.rand(shape, generator=generator) * 2 - 1) * bounds[name]
            for name, shape in shapes.items()}


def _fan_in_bounds(shapes: Shapes) -> dict[str, float]:
    """1/sqrt(fan_in) for a layer's weight and bias, fan_in being the weight's input size
    (``in`` of a linear layer, ``in_channels * k * k`` of a convolution): PyTorch's default
    initialisation of ``nn.Linear`` and ``nn.Conv2d``."""
    bounds = {}
    for name in shapes:
        layer = name.rsplit(".", 1)[0]
        bounds[name] = 1.0 / math.sqrt(math.prod(shapes[f"{layer}.weight"][1:]))
    return bounds


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
        return _uniform(shapes, _fan_in_bounds(shapes), generator)

    def forward(self, params: Params, x: "torch.Tensor") -> "torch.Tensor":
        import torch.nn.functional as F

        n_layers = len(self.widths) - 1
        for i in range(n_layers):
            x = F.linear(x, params[f"layer{i}.weight"], params[f"layer{i}.bias"])
            if i + 1 < n_layers:
                x = F.relu(x)
        return x


class ConvNet:
    """Convolutions (each followed by ReLU and 2x2 max-pooling), then dense ReLU layers
    and a linear output layer.

    Parameters
    ----------
    input_shape
        ``(channels, height, width)`` of one sample (rows of x are flattened images).
    convs
        ``(out_channels, kernel, padding)`` of each convolution (stride 1).
    hidden
        Widths of the dense ReLU layers after the convolutions.
    n_classes
        Outputs of the last layer.
    """

    batching = "stacked"
    eval_rows = 512

    def __init__(self, input_shape: tuple[int, ...], convs: tuple[tuple[int, int, int], ...],
                 hidden: tuple[int, ...], n_classes: int) -> None:
        self.input_shape = tuple(input_shape)
        self.convs = tuple(convs)
        channels, height, width = self.input_shape
        for out, kernel, pad in self.convs:
            height = (height + 2 * pad - kernel + 1) // 2
            width = (width + 2 * pad - kernel + 1) // 2
            channels = out
        if height < 1 or width < 1:
            raise ValueError(f"images of shape {self.input_shape} are too small for {convs}")
        self.flat = channels * height * width
        self.widths = (self.flat, *hidden, n_classes)

    def param_shapes(self) -> Shapes:
        shapes: Shapes = {}
        channels = self.input_shape[0]
        for i, (out, kernel, _) in enumerate(self.convs):
            shapes[f"conv{i}.weight"] = (out, channels, kernel, kernel)
            shapes[f"conv{i}.bias"] = (out,)
            channels = out
        for i, (n_in, n_out) in enumerate(zip(self.widths[:-1], self.widths[1:])):
            shapes[f"fc{i}.weight"] = (n_out, n_in)
            shapes[f"fc{i}.bias"] = (n_out,)
        return shapes

    def init(self, generator: "torch.Generator") -> Params:
        """Uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) for every layer (PyTorch's default)."""
        shapes = self.param_shapes()
        return _uniform(shapes, _fan_in_bounds(shapes), generator)

    def forward(self, params: Params, x: "torch.Tensor") -> "torch.Tensor":
        import torch.nn.functional as F

        h = x.reshape(-1, *self.input_shape)
        for i, (_, _, pad) in enumerate(self.convs):
            h = F.conv2d(h, params[f"conv{i}.weight"], params[f"conv{i}.bias"], padding=pad)
            h = F.max_pool2d(F.relu(h), 2)
        h = h.flatten(1)
        n_dense = len(self.widths) - 1
        for i in range(n_dense):
            h = F.linear(h, params[f"fc{i}.weight"], params[f"fc{i}.bias"])
            if i + 1 < n_dense:
                h = F.relu(h)
        return h

    def stacked_forward(self, params: Params, x: "torch.Tensor") -> "torch.Tensor":
        """Logits ``[K, B, classes]`` of K clients' models (``params``: ``[K, ...]`` stacks)
        on their own batches ``x``: ``[K, B, prod(input_shape)]``.

        Client k's images become channel group k of one batch of B images with K times
        the channels, and each convolution runs with ``groups=K`` on the stacked kernels,
        so group k only ever sees client k's kernels; the dense layers are batched
        matrix products. Client k's logits depend on client k's parameters alone.
        """
        import torch
        import torch.nn.functional as F

        k, b = x.shape[:2]
        channels, height, width = self.input_shape
        h = x.reshape(k, b, channels, height, width).transpose(0, 1).reshape(
            b, k * channels, height, width)
        for i, (_, _, pad) in enumerate(self.convs):
            w, bias = params[f"conv{i}.weight"], params[f"conv{i}.bias"]
            h = F.conv2d(h, w.reshape(-1, *w.shape[2:]), bias.reshape(-1), padding=pad, groups=k)
            h = F.max_pool2d(F.relu(h), 2)
        h = h.reshape(b, k, -1).transpose(0, 1)  # [K, B, flat]
        n_dense = len(self.widths) - 1
        for i in range(n_dense):
            w, bias = params[f"fc{i}.weight"], params[f"fc{i}.bias"]
            h = torch.baddbmm(bias.unsqueeze(1), h, w.transpose(1, 2))
            if i + 1 < n_dense:
                h = F.relu(h)
        return h


class LstmNet:
    """Token embedding, stacked LSTM layers, and a linear layer on the last step's output.

    Parameter names and gate order (input, forget, cell, output) are those of
    ``nn.LSTM``; the recurrence runs in ``torch.lstm``, the op ``nn.LSTM`` itself calls,
    with the parameters passed in (no module state). Initialisation follows PyTorch's
    defaults: N(0, 1) embeddings, Uniform(-1/sqrt(hidden), 1/sqrt(hidden)) for the LSTM
    and the output layer.
    """

    batching = None
    eval_rows = 1024

    def __init__(self, vocab: int, embed: int, hidden: int, layers: int, n_classes: int) -> None:
        self.vocab, self.embed, self.hidden, self.layers = vocab, embed, hidden, layers
        self.n_classes = n_classes

    def param_shapes(self) -> Shapes:
        shapes: Shapes = {"embed.weight": (self.vocab, self.embed)}
        n_in = self.embed
        for i in range(self.layers):
            shapes[f"lstm{i}.weight_ih"] = (4 * self.hidden, n_in)
            shapes[f"lstm{i}.weight_hh"] = (4 * self.hidden, self.hidden)
            shapes[f"lstm{i}.bias_ih"] = (4 * self.hidden,)
            shapes[f"lstm{i}.bias_hh"] = (4 * self.hidden,)
            n_in = self.hidden
        shapes["out.weight"] = (self.n_classes, self.hidden)
        shapes["out.bias"] = (self.n_classes,)
        return shapes

    def init(self, generator: "torch.Generator") -> Params:
        import torch

        shapes = self.param_shapes()
        bound = 1.0 / math.sqrt(self.hidden)
        params = _uniform(shapes, {name: bound for name in shapes}, generator)
        params["embed.weight"] = torch.randn(shapes["embed.weight"], generator=generator)
        return params

    def forward(self, params: Params, x: "torch.Tensor") -> "torch.Tensor":
        import torch
        import torch.nn.functional as F

        h = F.embedding(x.long(), params["embed.weight"])  # [N, T, embed]
        flat = [params[f"lstm{i}.{kind}"] for i in range(self.layers)
                for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        zeros = h.new_zeros(self.layers, len(h), self.hidden)
        out, _, _ = torch.lstm(h, (zeros, zeros), flat, True, self.layers, 0.0, False, False, True)
        return F.linear(out[:, -1], params["out.weight"], params["out.bias"])


def _flat(input_shape: tuple[int, ...]) -> int:
    return math.prod(input_shape)


#: model config class -> builder(cfg, input_shape, n_classes)
BUILDERS: dict[type[Model], Callable[..., Net]] = {
    Logreg: lambda cfg, shape, n_classes: DenseNet((_flat(shape), n_classes)),
    Mlp: lambda cfg, shape, n_classes: DenseNet((_flat(shape), *cfg.hidden, n_classes)),
    # FedAvg's CNN: "same" 5x5 convolutions (padding 2), so 28x28 reaches the dense layer as 7x7
    Cnn: lambda cfg, shape, n_classes: ConvNet(shape, tuple((c, 5, 2) for c in cfg.channels),
                                               (cfg.hidden,), n_classes),
    # LeNet-5: the first convolution padded (28x28 in, 16x5x5 out of the second pooling)
    Lenet5: lambda cfg, shape, n_classes: ConvNet(shape, ((6, 5, 2), (16, 5, 0)), (120, 84),
                                                  n_classes),
    # the characters are both the input tokens and the classes
    CharLstm: lambda cfg, shape, n_classes: LstmNet(n_classes, cfg.embed, cfg.hidden, cfg.layers,
                                                    n_classes),
}


def build_model(cfg: Model, input_shape: tuple[int, ...] | int, n_classes: int) -> Net:
    """The model ``cfg`` describes, for samples of ``input_shape`` (an int: feature vectors
    of that length) and ``n_classes`` outputs."""
    shape = (input_shape,) if isinstance(input_shape, int) else tuple(input_shape)
    for cls in type(cfg).__mro__:
        if cls in BUILDERS:
            return BUILDERS[cls](cfg, shape, n_classes)
    raise TypeError(f"no model builder for {type(cfg).__name__}")


def param_shapes(cfg: Model, input_shape: tuple[int, ...] | int, n_classes: int) -> Shapes:
    """Every parameter's name and shape, without torch."""
    return build_model(cfg, input_shape, n_classes).param_shapes()


def model_bytes(cfg: Model, input_shape: tuple[int, ...] | int, n_classes: int) -> int:
    """Size of the model's parameters in float32: what one transfer of the model carries."""
    shapes = param_shapes(cfg, input_shape, n_classes)
    return PARAM_BYTES * sum(math.prod(shape) for shape in shapes.values())
