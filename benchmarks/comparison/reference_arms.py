"""The reference workload's simfl and plain arms (child side): whole simfl runs with the
batched or inline executor, and FedAvg as a plain sequential PyTorch loop."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from .reference import BATCH, LR, N_CLIENTS, SEED, reference_data, reference_task, torch_module


def arm_simfl(executor: str, model: str, cohort: int, rounds: int) -> dict:
    import simfl
    import torch
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
