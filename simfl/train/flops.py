"""Training FLOPs per sample of a model: what a job costs a device that states its speed
in FLOP/s (``population.compute.flops_per_s`` or ``device``).

Convention (docs/local-training.md): one training sample costs its forward pass, the
weight gradient and the input gradient of every layer but the first (the data need no
gradient), each ``2 x multiply-adds`` of the layer's forward pass: a linear layer out x in
costs 2 out in for each of the three, a convolution 2 C_out C_in k^2 H_out W_out. So
training is about 3 x the forward pass's 2 x multiply-adds, less the first layer's input
gradient. Biases, activations, pooling and the loss are left out (under 1 % for the
built-ins). The built-in dense and convolutional models are counted exactly from their
layer shapes (no torch); any other model is measured once with
``torch.utils.flop_counter.FlopCounterMode`` on one forward and backward pass, which
counts the same matrix products and convolutions.
"""

from __future__ import annotations

import math
from typing import Any

from simfl.train.conv_net import ConvNet
from simfl.train.models import DenseNet, build_model


def forward_macs(net: DenseNet | ConvNet) -> list[int]:
    """Multiply-adds of one sample's forward pass, layer by layer (convolutions first)."""
    shapes = net.param_shapes()
    layers = []
    if isinstance(net, ConvNet):
        _, height, width = net.input_shape
        for i, (_, kernel, pad) in enumerate(net.convs):
            height, width = height + 2 * pad - kernel + 1, width + 2 * pad - kernel + 1
            out, cin, k, _ = shapes[f"conv{i}.weight"]
            layers.append(out * cin * k * k * height * width)
            height, width = height // 2, width // 2  # 2 x 2 max-pooling
    layers += [shape[0] * shape[1] for name, shape in shapes.items()
               if len(shape) == 2 and name.endswith(".weight")]
    return layers


def counted_flop_per_sample(net: DenseNet | ConvNet) -> int:
    """Training FLOPs of one sample of a built-in dense or convolutional net, exactly."""
    layers = forward_macs(net)
    return 2 * (3 * sum(layers) - layers[0])


def measured_flop_per_sample(net: Any, input_shape: tuple[int, ...], tokens: bool = False,
                             batch: int = 2) -> float:
    """Training FLOPs of one sample of any model with ``init`` and ``forward``, counted by
    ``FlopCounterMode`` on one forward and backward pass of ``batch`` zero samples, given
    as the executors give them: rows of ``prod(input_shape)`` features (token ids with
    ``tokens``)."""
    import torch
    import torch.nn.functional as F
    from torch.utils.flop_counter import FlopCounterMode

    params = {k: v.requires_grad_(True)
              for k, v in net.init(torch.Generator().manual_seed(0)).items()}
    x = torch.zeros(batch, math.prod(input_shape), dtype=torch.long if tokens else torch.float32)
    y = torch.zeros(batch, dtype=torch.long)
    with FlopCounterMode(display=False) as counter:
        out = net.forward(params, x)
        F.cross_entropy(out.reshape(-1, out.shape[-1]), y.expand(out.shape[:-1]).reshape(-1)
                        ).backward()
    return counter.get_total_flops() / batch


def flop_per_sample(task: Any) -> float:
    """Training FLOPs of one sample of ``task``'s model on its data set (once per run)."""
    dataset = task.dataset
    shape = tuple(dataset.input_shape())
    net: Any = build_model(task.model, shape, dataset.shape()[1])
    if type(net) in (DenseNet, ConvNet):  # exactly: a subclass may change the layers
        return float(counted_flop_per_sample(net))
    return measured_flop_per_sample(net, shape, bool(getattr(dataset, "tokens", False)))
