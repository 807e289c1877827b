"""The side-by-side benchmark's parts: simfl against a plain PyTorch loop and Flower.

``benchmarks/bench.py`` is the command line; what it is made of lives here:

* :mod:`.reference`: the arms' names and the reference workload every arm shares (its
  constants, task, data split, plain torch model, steady-state round time);
* :mod:`.flops`: what the work costs: exact training FLOPs and the machine's matmul peak;
* :mod:`.reference_arms` and :mod:`.flower_arm`: the reference workload's arms (whole
  simfl runs, the plain loop, Flower's simulation engine);
* :mod:`.cnn`, :mod:`.scale`, :mod:`.multicell` and :mod:`.gpu`: the other workloads;
* :mod:`.worker`: the child process's entry point, which runs one arm;
* :mod:`.harness`: the parent side, one child process per arm with its peak memory;
* :mod:`.tables` and :mod:`.cli`: the printed tables and the command line.
"""
