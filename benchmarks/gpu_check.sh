#!/usr/bin/env bash
# The GPU measurements in one sitting, on a machine with a CUDA device, from the
# repository root with simfl (and, for its arm, pfl) installed:
#   1. the CUDA tests, selected by their marker;
#   2. the pfl workload on the GPU (pfl, simfl batched and inline, simfl with a network,
#      the plain loop), one repetition of 4 rounds;
#   3. the CIFAR-shaped CNN throughput of the batched executor in client updates/s.
# Prints the device, the date and each step's output; about 5 minutes on one GPU.
set -u
date -u +"%Y-%m-%d %H:%M UTC"
python -c "import torch; print('device:', torch.cuda.get_device_name() if torch.cuda.is_available() else 'no CUDA device')"
python -m pytest -q -m cuda tests/ -p no:cacheprovider
python benchmarks/bench.py --arms pfl,gpu --pfl-device cuda --gpu-device cuda --pfl-repeats 1 \
    --pfl-rounds 4 --threads 1 --json "${OUT:-.}/gpu_bench.json"
