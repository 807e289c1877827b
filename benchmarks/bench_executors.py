"""Micro-benchmark: wall time of one round of client training, inline vs batched executor.

Digits (IID split), MLP 64-100-10 (``--model mlp``, the default), or mnist5k with
FedAvg's CNN or LeNet-5 (``--model cnn`` / ``lenet5``), plain SGD, 1 local epoch, batch
32; every client of the population trains each round from the same global model. Prints
the median milliseconds per round for each executor and their ratio. It measures, it
asserts nothing::

    python benchmarks/bench_executors.py [--model mlp|cnn|lenet5] [--repeats 30]
                                       [--device cpu|cuda] [--threads N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from simfl.core.config import Cnn, Digits, Iid, Lenet5, Mlp, Mnist5k, Task
from simfl.core.records import TrainJob
from simfl.core.rng import RngTree
from simfl.train.batched import BatchedExecutor
from simfl.train.data import build_data
from simfl.train.executor import InlineExecutor
from simfl.train.models import build_model


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_rounds(executor, params, n_clients: int, repeats: int, device: torch.device) -> list[float]:
    """Milliseconds of each of ``repeats`` rounds (after two warm-up rounds)."""
    times = []
    for r in range(repeats + 2):
        jobs = [TrainJob(client=c, base_round=0, round=r) for c in range(n_clients)]
        _sync(device)
        start = time.perf_counter()
        updates = executor.submit(jobs, {0: params})
        _sync(device)
        if r >= 2:
            times.append((time.perf_counter() - start) * 1e3)
        assert len(updates) == n_clients
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mlp", choices=("mlp", "cnn", "lenet5"))
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, device {device}")
    print(f"{'clients':>8} {'samples/client':>15} {'inline ms':>10} {'batched ms':>11} {'inline/batched':>15}")
    for n_clients in (10, 100):
        model = {"mlp": Mlp(hidden=(100,)), "cnn": Cnn(), "lenet5": Lenet5()}[args.model]
        dataset = Digits() if args.model == "mlp" else Mnist5k()
        task = Task(dataset=dataset, partition=Iid(), model=model, n_clients=n_clients,
                    batch_size=32, local_epochs=1, lr=0.05)
        rngs = RngTree(0)
        data = build_data(task, rngs)
        net = build_model(task.model, data.input_shape, data.n_classes)
        params = {k: v.to(device) for k, v in net.init(torch.Generator().manual_seed(0)).items()}
        medians = {}
        for name, cls in (("inline", InlineExecutor), ("batched", BatchedExecutor)):
            executor = cls(net, data, task, rngs, device)
            medians[name] = statistics.median(time_rounds(executor, params, n_clients, args.repeats, device))
        print(f"{n_clients:>8} {data.n_samples.mean():>15.1f} {medians['inline']:>10.2f} "
              f"{medians['batched']:>11.2f} {medians['inline'] / medians['batched']:>15.2f}")
    print("torch._dynamo imported:", "torch._dynamo" in sys.modules)


if __name__ == "__main__":
    main()
