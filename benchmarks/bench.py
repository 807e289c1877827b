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
* ``gpu`` (only with a CUDA device): 1,000 users x 50 samples of random 3x32x32 images
  (CIFAR-10's shape, 10 classes), FedAvg's CNN, cohort 50, 5 local steps at batch 10,
  the batched executor on the GPU with data and stacked models on the device: client
  updates per second (training and summing the updates; no simulator).

Run it quietly (nothing else on the machine), from the repository root::

    /work/venv-bench/bin/python benchmarks/bench.py            # everything, about 10 minutes
    python benchmarks/bench.py --quick --arms simfl_batched,plain   # a smoke test

Every simfl run is checked for ``trained_updates == aggregated_updates``. The
harness measures; it asserts nothing else.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

REFERENCE_ARMS = ("simfl_batched", "simfl_inline", "plain", "flower")
ALL_ARMS = REFERENCE_ARMS + ("cnn", "scale", "gpu")
CNN_ARMS = ("batched", "inline", "plain")
MODELS = {"logreg": (), "mlp": (100,)}
COHORTS = (10, 100)
N_CLIENTS, BATCH, LR, SEED = 100, 32, 0.05, 0
WARMUP_ROUNDS = 2


# ---------------------------------------------------------------- shared by the arms
def reference_task(model: str):
    from simfl.core.config import Iid, Logreg, Mlp, Mnist5k, Task

    net = Logreg() if model == "logreg" else Mlp(hidden=MODELS[model])
    return Task(dataset=Mnist5k(), partition=Iid(), model=net, n_clients=N_CLIENTS,
                batch_size=BATCH, local_epochs=1, lr=LR, test_fraction=0.2)


@functools.lru_cache(maxsize=None)
def reference_data(model: str):
    """The reference split as simfl makes it (the same arrays for every arm)."""
    from simfl.core.rng import RngTree
    from simfl.train.data import build_data

    return build_data(reference_task(model), RngTree(SEED))


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


def torch_module(model: str):
    import torch

    widths = (784, *MODELS[model], 10)
    layers = []
    for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(torch.nn.Linear(a, b))
        if i + 2 < len(widths):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def steady_median_ms(round_s: list[float]) -> float:
    steady = round_s[WARMUP_ROUNDS:] or round_s
    return 1e3 * statistics.median(steady)


# ---------------------------------------------------------------- the arms (child side)
def arm_simfl(executor: str, model: str, cohort: int, rounds: int) -> dict:
    import torch

    import simfl
    from simfl.experiment import run_scenario

    scenario = simfl.Scenario(  # at the harness's thread count, as the other arms
        name=f"bench_{executor}", seed=SEED, task=reference_task(model),
        server=simfl.Server(algorithm=simfl.FedAvg(), sampler=simfl.Uniform(),
                            clients_per_round=cohort, deadline_s=1e6),
        run=simfl.Run(rounds=rounds, eval_every_rounds=1, executor=executor, device="cpu",
                      threads=torch.get_num_threads()))
    stamps = [time.perf_counter()]
    with tempfile.TemporaryDirectory() as tmp:
        result = run_scenario(scenario, Path(tmp) / "run",
                              progress=lambda r, t_s, acc: stamps.append(time.perf_counter()))
    summary = result.summary
    return {"round_s": [b - a for a, b in zip(stamps[:-1], stamps[1:])],
            "accuracy": summary["final_accuracy"], "trained_updates": summary["trained_updates"],
            "aggregated_updates": summary["aggregated_updates"]}


def plain_round(net, state: dict, clients, client_indices, x, y, rng) -> dict:
    """One round of the plain loop: each client loads ``state`` into the one module, runs
    an epoch of ``optim.SGD`` on its samples, and its parameters are summed."""
    import torch
    import torch.nn.functional as F

    total = {k: torch.zeros_like(v) for k, v in state.items()}
    for client in clients:
        idx = client_indices[client]
        net.load_state_dict(state)
        optimizer = torch.optim.SGD(net.parameters(), lr=LR)
        order = idx[rng.permutation(len(idx))]
        for i in range(0, len(order), BATCH):
            batch = torch.from_numpy(order[i:i + BATCH])
            optimizer.zero_grad()
            F.cross_entropy(net(x[batch]), y[batch]).backward()
            optimizer.step()
        for k, v in net.state_dict().items():
            total[k] += v
    return total


def arm_plain(model: str, cohort: int, rounds: int) -> dict:
    """FedAvg as a plain sequential PyTorch loop: no simulator, one module reused."""
    import numpy as np
    import torch

    data = reference_data(model)
    x, y = torch.from_numpy(data.x_train), torch.from_numpy(data.y_train)
    x_test, y_test = torch.from_numpy(data.x_test), torch.from_numpy(data.y_test)
    torch.manual_seed(SEED)  # the arm's own process: seeds only its module's init
    net = torch_module(model)
    global_state = {k: v.clone() for k, v in net.state_dict().items()}
    rng = np.random.default_rng(SEED)
    round_s, accuracy = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        chosen = rng.choice(N_CLIENTS, size=cohort, replace=False)
        total = plain_round(net, global_state, chosen, data.client_indices, x, y, rng)
        global_state = {k: v / cohort for k, v in total.items()}
        with torch.no_grad():
            net.load_state_dict(global_state)
            accuracy = float((net(x_test).argmax(1) == y_test).float().mean())
        round_s.append(time.perf_counter() - start)
    return {"round_s": round_s, "accuracy": accuracy}


def _flower_train(msg, context):
    """Flower ClientApp ``train``: 1 local epoch of SGD on this node's client."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    from flwr.app import ArrayRecord, Message, MetricRecord, RecordDict

    torch.set_num_threads(1)
    model = str(msg.content["config"]["model"])
    data = reference_data(model)
    client = int(context.node_config["partition-id"])
    idx = data.client_indices[client]
    net = torch_module(model)
    net.load_state_dict(msg.content["arrays"].to_torch_state_dict())
    optimizer = torch.optim.SGD(net.parameters(), lr=LR)
    x, y = torch.from_numpy(data.x_train), torch.from_numpy(data.y_train)
    order = idx[np.random.default_rng([SEED, client, int(msg.content["config"]["server-round"])])
                .permutation(len(idx))]
    for i in range(0, len(order), BATCH):
        batch = torch.from_numpy(order[i:i + BATCH])
        optimizer.zero_grad()
        F.cross_entropy(net(x[batch]), y[batch]).backward()
        optimizer.step()
    content = RecordDict({"arrays": ArrayRecord(net.state_dict()),
                          "metrics": MetricRecord({"num-examples": len(idx)})})
    return Message(content=content, reply_to=msg)


def arm_flower(model: str, cohort: int, rounds: int) -> dict:
    """Flower's simulation engine (Message API, Ray backend, 1 CPU per client)."""
    import torch
    from flwr.app import ArrayRecord, ConfigRecord, MetricRecord
    from flwr.clientapp import ClientApp
    from flwr.serverapp import ServerApp
    from flwr.serverapp.strategy import FedAvg
    from flwr.simulation import run_simulation

    stamps: list[float] = []
    accuracy: list[float] = []
    data = reference_data(model)
    x_test, y_test = torch.from_numpy(data.x_test), torch.from_numpy(data.y_test)

    def evaluate(server_round: int, arrays: ArrayRecord) -> MetricRecord:
        net = torch_module(model)
        net.load_state_dict(arrays.to_torch_state_dict())
        with torch.no_grad():
            accuracy.append(float((net(x_test).argmax(1) == y_test).float().mean()))
        stamps.append(time.perf_counter())
        return MetricRecord({"accuracy": accuracy[-1]})

    client_app = ClientApp()
    client_app.train()(_flower_train)
    server_app = ServerApp()

    @server_app.main()
    def main(grid, context) -> None:
        torch.manual_seed(SEED)
        strategy = FedAvg(fraction_train=cohort / N_CLIENTS, fraction_evaluate=0.0,
                          min_train_nodes=cohort, min_available_nodes=N_CLIENTS)
        strategy.start(grid=grid, initial_arrays=ArrayRecord(torch_module(model).state_dict()),
                       num_rounds=rounds, train_config=ConfigRecord({"model": model}),
                       evaluate_fn=evaluate)

    cpus = os.cpu_count() or 1
    run_simulation(server_app=server_app, client_app=client_app, num_supernodes=N_CLIENTS,
                   backend_config={"client_resources": {"num_cpus": 1, "num_gpus": 0.0},
                                   "init_args": {"num_cpus": cpus, "include_dashboard": False}})
    return {"round_s": [b - a for a, b in zip(stamps[:-1], stamps[1:])],
            "accuracy": accuracy[-1] if accuracy else None}


def scale_scenario(n_clients: int, contending: int, rounds: int, mac: str):
    import simfl
    from simfl.core.config import apply_overrides, parse_override
    from simfl.core.registry import registry

    scenario = simfl.Scenario(
        name="bench_scale", seed=SEED,
        task=simfl.Task(dataset=simfl.Synthetic(), partition=simfl.Iid(), n_clients=n_clients),
        server=simfl.Server(clients_per_round=contending, deadline_s=60.0),
        run=simfl.Run(rounds=rounds, timing_only=True))
    if mac.startswith("slotted_aloha") and "slotted_aloha" in registry("macs"):
        contention = "vectorised" if mac.endswith("_vectorised") else "per_event"
        scenario = apply_overrides(scenario, [parse_override(s) for s in (
            "network.mac.kind=slotted_aloha", f"network.mac.access_prob={1.0 / contending}",
            "network.mac.slot_s=0.001", "network.mac.channels=4",
            f"network.mac.contention={contention}")])
    return scenario


def arm_scale(n_clients: int, contending: int, rounds: int, mac: str) -> dict:
    from simfl.experiment import run_scenario

    scenario = scale_scenario(n_clients, contending, rounds, mac)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        summary = run_scenario(scenario, Path(tmp) / "run").summary
    wall_s = time.perf_counter() - start
    return {"wall_s": wall_s, "events": summary["events"], "mac": scenario.network.mac.kind,
            "rounds": summary["rounds"], "trained_updates": summary["trained_updates"],
            "aggregated_updates": summary["aggregated_updates"]}


def cnn_module(channels: int, side: int):
    """FedAvg's CNN as torch.nn modules (the plain loop's model)."""
    import torch

    nn = torch.nn
    flat = 64 * (side // 4) ** 2
    return nn.Sequential(nn.Conv2d(channels, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(flat, 512), nn.ReLU(), nn.Linear(512, 10))


def _summed(updates, names):
    """The sum of the updates' deltas (what FedAvg's aggregation needs)."""
    import torch

    total = [torch.zeros_like(updates[0].delta[k]) for k in names]
    for u in updates:
        torch._foreach_add_(total, [u.delta[k] for k in names])
    return total


def arm_cnn(cohorts: list[int], repeats: int) -> dict:
    """One round of training for each cohort size: simfl batched, simfl inline and a plain
    loop, interleaved; the first repetition is a warm-up and is dropped."""
    import numpy as np
    import torch

    import simfl
    from simfl.core.records import TrainJob
    from simfl.core.rng import RngTree
    from simfl.train.batched import BatchedExecutor
    from simfl.train.data import build_data
    from simfl.train.executor import InlineExecutor
    from simfl.train.models import build_model

    task = simfl.Task(dataset=simfl.Mnist5k(), partition=simfl.Iid(), model=simfl.Cnn(),
                      n_clients=N_CLIENTS, batch_size=BATCH, local_epochs=1, lr=LR,
                      test_fraction=0.2)
    rngs = RngTree(SEED)
    data = build_data(task, rngs)
    cpu = torch.device("cpu")
    net = build_model(task.model, data.input_shape, data.n_classes)
    params = net.init(torch.Generator().manual_seed(SEED))
    names = list(params)
    executors = {"batched": BatchedExecutor(net, data, task, rngs, cpu),
                 "inline": InlineExecutor(net, data, task, rngs, cpu)}
    module = cnn_module(data.input_shape[0], data.input_shape[1])
    x = torch.from_numpy(data.x_train).view(-1, *data.input_shape)
    y = torch.from_numpy(data.y_train)
    state = dict(zip(module.state_dict(), (params[k] for k in names)))  # same order
    rng = np.random.default_rng(SEED)

    def plain(clients) -> None:
        plain_round(module, state, clients, data.client_indices, x, y, rng)

    times: dict = {f"{k}/{arm}": [] for k in cohorts for arm in CNN_ARMS}
    for rep in range(repeats + 1):
        for cohort in cohorts:
            clients = rng.choice(N_CLIENTS, size=cohort, replace=False).tolist()
            jobs = [TrainJob(c, 0, rep) for c in clients]
            for arm in CNN_ARMS:
                start = time.perf_counter()
                if arm == "plain":
                    plain(clients)
                else:
                    _summed(executors[arm].submit(jobs, {0: params}), names)
                if rep:
                    times[f"{cohort}/{arm}"].append(time.perf_counter() - start)
    flop = training_flop_per_sample(net) * 40  # per client: 40 samples, 1 epoch
    return {"round_s": times, "flop_per_client": flop,
            "peak_gflops": matmul_peak_gflops(1, repeats=5)}


def arm_gpu(rounds: int, device: str, users: int) -> dict:
    """Client updates per second of FedAvg's CNN on CIFAR-10-shaped images (random pixels
    and labels: the speed does not depend on them), batched executor on ``device``."""
    import numpy as np
    import torch

    import simfl
    from simfl.core.records import TrainJob
    from simfl.core.rng import RngTree
    from simfl.train.batched import BatchedExecutor
    from simfl.train.data import FederatedData
    from simfl.train.models import build_model

    if device == "cuda" and not torch.cuda.is_available():
        return {"skipped": "no CUDA device"}
    cohort, per_user, shape = 50, 50, (3, 32, 32)
    rng = np.random.default_rng(SEED)
    n = users * per_user
    x = rng.random((n + 1000, 3 * 32 * 32), dtype=np.float32)
    y = rng.integers(0, 10, n + 1000)
    parts = tuple(np.arange(u * per_user, (u + 1) * per_user) for u in range(users))
    data = FederatedData(x[:n], y[:n], parts, x[n:], y[n:], x.shape[1], 10, shape)
    # the task gives the local work (5 steps of 10), the step size and the loss
    task = simfl.Task(dataset=simfl.Digits(), model=simfl.Cnn(), n_clients=users,
                      batch_size=10, local_steps=5, lr=LR)
    dev = torch.device(device)
    net = build_model(task.model, shape, 10)
    params = {k: v.to(dev) for k, v in net.init(torch.Generator().manual_seed(SEED)).items()}
    executor = BatchedExecutor(net, data, task, RngTree(SEED), dev)
    names = list(params)
    round_s = []
    for r in range(rounds):
        jobs = [TrainJob(int(c), 0, r) for c in rng.choice(users, size=cohort, replace=False)]
        if dev.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        _summed(executor.submit(jobs, {0: params}), names)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        round_s.append(time.perf_counter() - start)
    return {"round_s": round_s, "updates_per_s": cohort / (steady_median_ms(round_s) / 1e3),
            "device": torch.cuda.get_device_name() if device == "cuda" else device}


def worker(argv: list[str]) -> None:
    """Child entry point: run one arm, print its result as the last line (JSON)."""
    import resource

    args = json.loads(argv[0])
    import torch

    torch.set_num_threads(args["threads"])
    arm = args["arm"]
    if arm in ("simfl_batched", "simfl_inline"):
        out = arm_simfl(arm.split("_")[1], args["model"], args["cohort"], args["rounds"])
    elif arm == "plain":
        out = arm_plain(args["model"], args["cohort"], args["rounds"])
    elif arm == "flower":
        out = arm_flower(args["model"], args["cohort"], args["rounds"])
    elif arm == "cnn":
        out = arm_cnn(args["cohorts"], args["repeats"])
    elif arm == "scale":
        out = arm_scale(args["n_clients"], args["contending"], args["rounds"], args["mac"])
    else:
        out = arm_gpu(args["rounds"], args["device"], args["users"])
    out["self_max_rss_b"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print("\n" + json.dumps(out), flush=True)


# ---------------------------------------------------------------- the parent side
def _tree_rss_b(root: int) -> int:
    """Resident memory of ``root`` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry)
        children.setdefault(int(fields[1]), []).append(pid)  # fields[1] is the parent pid
        rss[pid] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")  # resident pages
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


def run_arm(spec: dict, timeout_s: float) -> dict:
    """Run one arm in a child process; add its peak process-tree memory."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(HERE), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-c", "import sys, bench; bench.worker(sys.argv[1:])", json.dumps(spec)]
    if spec.get("core") is not None and shutil.which("taskset"):
        cmd = ["taskset", "-c", str(spec["core"])] + cmd  # pinned to one core
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    peak = [0]
    done = threading.Event()

    def poll() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], _tree_rss_b(proc.pid))

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        stdout, stderr = proc.communicate()
        return {"error": f"timed out after {timeout_s:.0f} s"}
    finally:
        done.set()
        poller.join()
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (stderr or stdout).strip().splitlines()[-3:]
        return {"error": f"exit {proc.returncode}: " + " | ".join(tail)}
    out = json.loads(lines[-1])
    out["peak_b"] = max(peak[0], out["self_max_rss_b"])
    return out


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


def flower_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("flwr") is not None and importlib.util.find_spec("ray") is not None


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def _ratio(reference_ms: float | None, ms: float) -> str:
    return "-" if reference_ms is None else f"{reference_ms / ms:.2f}x"


def reference_table(results: dict, peak: float) -> list[str]:
    lines = [f"{'model':<7} {'K':>4} {'arm':<14} {'ms/round':>9} {'peak MB':>8} "
             f"{'GFLOP/s':>8} {'%peak':>6} {'vs plain':>9} {'vs flower':>10} {'acc':>6}"]
    for (model, cohort), arms in results.items():
        gflop = reference_flop(model, cohort * 40) / 1e9  # 40 samples per client, 1 epoch
        lines.append(f"{model:<7} {cohort:>4} {'FLOP floor':<14} {1e3 * gflop / peak:>9.1f}  "
                     f"({gflop:.3f} GFLOP of training at the matmul peak; 6 x parameters "
                     f"would say {reference_flop_6p(model, cohort * 40) / 1e9:.3f})")
        plain = arms.get("plain", {}).get("ms")
        flower = arms.get("flower", {}).get("ms")
        for arm, r in arms.items():
            if "error" in r or "skipped" in r:
                lines.append(f"{model:<7} {cohort:>4} {arm:<14} {r.get('error') or r['skipped']}")
                continue
            rate = gflop / (r["ms"] / 1e3)
            lines.append(
                f"{model:<7} {cohort:>4} {arm:<14} {r['ms']:>9.1f} {r['peak_b'] / 2**20:>8.0f} "
                f"{rate:>8.1f} {100 * rate / peak:>6.1f} "
                f"{_ratio(plain, r['ms']):>9} {_ratio(flower, r['ms']):>10} "
                f"{r.get('accuracy') or float('nan'):>6.3f}")
    return lines


def cnn_table(r: dict, cohorts: list[int], core: int) -> list[str]:
    peak, flop = r["peak_gflops"], r["flop_per_client"]
    lines = [f"cnn workload: FedAvg's CNN (1,663,370 parameters), mnist5k, 1 local epoch of 40 "
             f"samples at batch 32, one round of training + summing the updates; one thread, "
             f"pinned to core {core}, repetitions interleaved; one-thread matmul peak "
             f"{peak:.0f} GFLOP/s",
             f"{'K':>4} {'arm':<8} {'min ms':>9} {'median':>9} {'max':>9} {'GFLOP/s':>8} "
             f"{'vs plain':>9}"]
    for cohort in cohorts:
        gflop = flop * cohort / 1e9
        plain = statistics.median(r["round_s"][f"{cohort}/plain"])
        for arm in CNN_ARMS:
            t = r["round_s"][f"{cohort}/{arm}"]
            med = statistics.median(t)
            lines.append(f"{cohort:>4} {arm:<8} {1e3 * min(t):>9.1f} {1e3 * med:>9.1f} "
                         f"{1e3 * max(t):>9.1f} {gflop / med:>8.1f} {plain / med:>8.2f}x")
        lines.append(f"{cohort:>4} {'floor':<8} {1e3 * gflop / peak:>9.1f}  ({gflop:.1f} GFLOP of "
                     "training at the one-thread matmul peak)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", default=",".join(ALL_ARMS),
                        help=f"comma-separated subset of {','.join(ALL_ARMS)}")
    parser.add_argument("--models", default="logreg,mlp")
    parser.add_argument("--cohorts", default="10,100")
    parser.add_argument("--rounds", type=int, default=20, help="reference rounds (default 20)")
    parser.add_argument("--scale-rounds", type=int, default=100)
    parser.add_argument("--scale-clients", type=int, default=10**6)
    parser.add_argument("--scale-contending", type=int, default=10**4)
    parser.add_argument("--scale-mac", default="slotted_aloha",
                        choices=("slotted_aloha", "slotted_aloha_vectorised", "ideal"),
                        help="uplink access of the scale workload (ideal if aloha is not "
                             "registered; _vectorised: the cohort contention model)")
    parser.add_argument("--gpu-device", default="cuda", help="device of the gpu workload")
    parser.add_argument("--cnn-repeats", type=int, default=3,
                        help="measured repetitions of each cnn cell (after one warm-up)")
    parser.add_argument("--cnn-core", type=int, default=0,
                        help="the core the cnn workload is pinned to")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="torch threads of each arm (default: every core)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: 6 reference rounds, 3 scale rounds, 3 gpu rounds of 100 users")
    parser.add_argument("--timeout-s", type=float, default=900.0, help="per reference/gpu arm")
    parser.add_argument("--scale-timeout-s", type=float, default=300.0,
                        help="of the scale workload (its target is 60 s)")
    parser.add_argument("--json", type=Path, help="also write every result here")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing simfl
    arms = [a for a in args.arms.split(",") if a]
    unknown = set(arms) - set(ALL_ARMS)
    if unknown:
        parser.error(f"unknown arms {sorted(unknown)}; choose from {', '.join(ALL_ARMS)}")
    rounds = 6 if args.quick else args.rounds
    scale_rounds = 3 if args.quick else args.scale_rounds
    import torch

    peak = matmul_peak_gflops(args.threads)
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, python {platform.python_version()}, "
          f"torch {torch.__version__}, {args.threads} torch threads per arm")
    print(f"fp32 matmul peak (2048^3 GEMM, best of 10): {peak:.0f} GFLOP/s")
    # with every core given to torch, any other busy process stalls each multi-threaded
    # op (seen: 10x and more); the load average says whether the machine was quiet
    print(f"load average at start (1/5/15 min): {_load()}\n")
    report: dict = {"matmul_peak_gflops": peak, "threads": args.threads, "reference": {},
                    "load_at_start": os.getloadavg()}
    problems = []

    reference = [a for a in arms if a in REFERENCE_ARMS]
    if "flower" in reference and not flower_available():
        print("flower: skipped (flwr[simulation] not installed: pip install -e '.[bench]' "
              "into a separate environment)\n")
        reference.remove("flower")
    results: dict = {}
    for model in args.models.split(","):
        for cohort in (int(c) for c in args.cohorts.split(",")):
            for arm in reference:
                spec = {"arm": arm, "model": model, "cohort": cohort, "rounds": rounds,
                        "threads": args.threads}
                r = run_arm(spec, args.timeout_s)
                if "round_s" in r:
                    r["ms"] = steady_median_ms(r["round_s"])
                if arm.startswith("simfl") and "error" not in r and \
                        r["trained_updates"] != r["aggregated_updates"]:
                    problems.append(f"{arm} {model} K={cohort}: trained {r['trained_updates']} "
                                    f"!= aggregated {r['aggregated_updates']}")
                results.setdefault((model, cohort), {})[arm] = r
                took = r.get("error") or f"{r['ms']:.1f} ms/round"
                print(f"  done: {model} K={cohort} {arm}: {took}", file=sys.stderr)
    if results:
        print(f"reference workload: FedAvg, mnist5k, {N_CLIENTS} clients x 40 samples, batch {BATCH}, "
              f"1 local epoch, {rounds} rounds; median ms per round after {WARMUP_ROUNDS} warm-up "
              "rounds, evaluation included; 'vs X' = X's time / this arm's time")
        print("\n".join(reference_table(results, peak)) + "\n")
        report["reference"] = {f"{m}/{k}": v for (m, k), v in results.items()}

    if "cnn" in arms:
        cohorts = [int(c) for c in args.cohorts.split(",")]
        repeats = 1 if args.quick else args.cnn_repeats
        r = run_arm({"arm": "cnn", "cohorts": cohorts, "repeats": repeats, "threads": 1,
                     "core": args.cnn_core}, args.timeout_s)
        report["cnn"] = r
        if "error" in r:
            print(f"cnn workload: {r['error']}\n")
        else:
            print("\n".join(cnn_table(r, cohorts, args.cnn_core)) + "\n")

    if "scale" in arms:
        r = run_arm({"arm": "scale", "n_clients": args.scale_clients, "threads": args.threads,
                     "contending": args.scale_contending, "rounds": scale_rounds,
                     "mac": args.scale_mac}, args.scale_timeout_s)
        report["scale"] = r
        if "error" in r:
            print(f"scale workload (MAC {args.scale_mac} if registered): {r['error']}\n")
        else:
            if r["trained_updates"] != r["aggregated_updates"]:
                problems.append("scale: trained_updates != aggregated_updates")
            print(f"scale workload: timing only, {args.scale_clients:,} registered clients, "
                  f"{args.scale_contending:,} invited per round, MAC {r['mac']}, {r['rounds']} rounds")
            print(f"  wall {r['wall_s']:.1f} s, {r['events']:,} events, "
                  f"{r['events'] / r['wall_s']:,.0f} events/s, peak {r['peak_b'] / 2**30:.2f} GB\n")

    if "gpu" in arms:
        users = 100 if args.quick else 1000
        r = run_arm({"arm": "gpu", "rounds": 3 if args.quick else 20, "device": args.gpu_device,
                     "users": users, "threads": args.threads}, args.timeout_s)
        report["gpu"] = r
        if "error" in r or "skipped" in r:
            print(f"gpu workload: {r.get('error') or 'skipped: ' + r['skipped']}\n")
        else:
            print(f"gpu workload ({r['device']}): {users} users x 50 random 3x32x32 images, "
                  f"FedAvg's CNN, cohort 50, 5 steps at batch 10, batched executor: "
                  f"{r['updates_per_s']:,.1f} client updates/s "
                  f"({steady_median_ms(r['round_s']):.1f} ms/round)\n")

    print(f"load average at end (1/5/15 min): {_load()}")
    report["load_at_end"] = os.getloadavg()
    print("trained_updates == aggregated_updates in every simfl run:",
          "yes" if not problems else "NO\n  " + "\n  ".join(problems))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
