"""Benchmark: simfl against a plain PyTorch loop and Flower, measured side by side in one run.

Workloads (each arm runs in its own child process, so its peak memory is its own):

* ``reference``: FedAvg on ``mnist5k`` (4,000 training images split IID over 100 clients
  of 40, 1,000 held out), 10 and 100 clients per round, 1 local epoch of plain SGD
  (lr 0.05, batch 32: steps of 32 and 8 samples), logistic regression and an MLP
  784-100-10, central evaluation after every round, 20 rounds. Arms: ``simfl_batched``,
  ``simfl_inline`` (whole simfl runs: simulation, training, aggregation, evaluation,
  run directory), ``plain`` (a sequential PyTorch loop with no simulator: one
  ``nn.Module``, ``load_state_dict`` + ``optim.SGD`` per client) and ``flower``
  (Flower's ``run_simulation`` on Ray, one CPU per client; needs the ``bench`` extra).
  Reported: steady-state median wall time per round (rounds after the first two),
  peak resident memory of the arm's whole process tree, and training GFLOP/s (the
  exact floating-point operations of training, :func:`training_flop_per_sample`, per
  second of round time) against the machine's fp32 matmul peak measured at the start
  of the same run, and the floor: the round's training FLOPs at that peak.
* ``cnn``: FedAvg's CNN on the same mnist5k split, 10 and 100 clients per round, one
  round of training (1 local epoch, batch 32, lr 0.05) plus summing the updates: simfl's
  batched executor, its inline executor and a plain PyTorch loop (an ``nn.Module``,
  ``load_state_dict`` + ``optim.SGD`` per client), all in one child process pinned to
  one core (``taskset``) with one torch thread, repetitions interleaved (arm A, B, C,
  A, B, C, ...); min / median / max ms per round and the FLOP floor at the one-thread
  matmul peak.
* ``scale``: timing only, 10^6 registered synthetic clients, 10^4 invited per round,
  slotted-ALOHA uplink access when that MAC is registered (else the ideal MAC; the
  table says which), 100 rounds: wall time, simulated events per second, peak memory.
* ``multicell``: timing only, 10^5 clients in 19 UMa sites x 3 sectors (57 cells) with
  fractional power control, 285 invited per round on OFDMA, inter-cell interference
  ``average`` and ``none`` interleaved, pinned to one core, 3 repetitions: events and
  rounds per CPU second, min / median / max.
* ``gpu`` (only with a CUDA device): 1,000 users x 50 samples of random 3x32x32 images
  (CIFAR-10's shape, 10 classes), FedAvg's CNN, cohort 50, 5 local steps at batch 10,
  the batched executor on the GPU with data and stacked models on the device: client
  updates per second (training and summing the updates; no simulator).

Run it quietly (nothing else on the machine), from the repository root::

    /work/venv-bench/bin/python benchmarks/bench.py            # everything, about 10 minutes
    python benchmarks/bench.py --quick --arms simfl_batched,plain   # a smoke test

Every simfl run is checked for ``trained_updates == aggregated_updates``. The
harness measures; it asserts nothing else.

This script is the command line; the workloads, their arms, the timing harness and the
tables live in the package ``benchmarks/comparison/``.
"""

import sys
from pathlib import Path

# the benchmark's parts live in the package beside this script (benchmarks/comparison)
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from comparison.cli import main  # noqa: E402
from comparison.worker import worker  # noqa: E402  (the child's entry point)

__all__ = ["main", "worker"]

if __name__ == "__main__":
    main(__doc__.splitlines()[0])
