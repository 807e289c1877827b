"""What the work costs: exact training FLOPs of a simfl model, those of the reference
workload (with the 6 x parameters rule beside them), and the machine's fp32 matmul peak."""

from __future__ import annotations

import time

from .reference import reference_task


def training_flop_per_sample(net) -> int:
    """Floating-point operations of one training sample of ``net`` (a simfl model), by
    simfl's own count (:func:`simfl.train.flops.counted_flop_per_sample`: forward, weight
    gradient, and input gradient of every layer but the first). The usual 6 x parameters
    also counts the first layer's input gradient: 1.5 times this for the MLP 784-100-10,
    whose first layer holds 99% of its weights."""
    from simfl.train.flops import counted_flop_per_sample

    return counted_flop_per_sample(net)


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
