"""Convolutional classifiers (FedAvg's CNN, LeNet-5) as pure functions of their parameters.

:class:`ConvNet` also has ``stacked_forward``, which trains K clients' models in one
pass by grouped convolutions (see :mod:`simfl.train.models` on ``batching``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simfl.train.net import Params, Shapes, fan_in_bounds, uniform_init

if TYPE_CHECKING:
    import torch


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
        return uniform_init(shapes, fan_in_bounds(shapes), generator)

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
