"""What the work costs: exact training FLOPs of a simfl model, those of the reference
workload (with the 6 x parameters rule beside them), and the machine's fp32 matmul peak."""

from __future__ import annotations

import time

from .reference import reference_task


def training_flop_per_sample(net) -> int:
    """Floating-point operations of one training sample of ``net`` (a simfl model):
    forward, weight gradient, and input gradient of every layer but the first (the
    data need no gradient). A linear layer out x in costs 2 out in for each of the
    three; a convolution 2 C_out C_in k^2 H_out W_out. Biases, ReLU and pooling are
    left out (under 1% here). The usual 6 x parameters also counts the first layer's
    input gradient: 1.5 times this for the MLP 784-100-10, whose first layer holds 99%
    of its weights."""
    shapes = net.param_shapes()
    layers = []  # forward multiply-adds per sample, in order
    if hasattr(net, "convs"):
        _, height, width = net.input_shape
        for i, (_, kernel, pad) in enumerate(net.convs):
            height, width = height + 2 * pad - kernel + 1, width + 2 * pad - kernel + 1
            out, cin, k, _ = shapes[f"conv{i}.weight"]
            layers.append(out * cin * k * k * height * width)
            height, width = height // 2, width // 2
    layers += [shape[0] * shape[1] for name, shape in shapes.items()
               if len(shape) == 2 and name.endswith(".weight")]
    return 2 * (3 * sum(layers) - layers[0])


def reference_flop(model: str, samples: int) -> int:
    """Training FLOPs of ``samples`` samples of the reference ``model``."""
    from simfl.train.models import build_model

    return training_flop_per_sample(build_model(reference_task(model).model, (784,), 10)) * samples


def reference_flop_6p(model: str, samples: int) -> int:
    """The 6 x parameters x samples rule, for comparison."""
    from simfl.train.models import model_bytes

    return 6 * model_bytes(reference_task(model).model, (784,), 10) // 4 * samples


def matmul_peak_gflops(threads: int, n: int = 2048, repeats: int = 10) -> float:
    """Best fp32 GEMM rate through torch at ``threads`` threads (the physical limit)."""
    import torch

    torch.set_num_threads(threads)
    a, b = torch.randn(n, n), torch.randn(n, n)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * n ** 3 / best / 1e9
