"""The reference workload's Flower arm (child side): Flower's simulation engine on Ray, and
whether Flower is installed at all (the ``bench`` extra)."""

from __future__ import annotations

import os
import time

from .reference import BATCH, LR, N_CLIENTS, SEED, reference_data, torch_module


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


def flower_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("flwr") is not None and importlib.util.find_spec("ray") is not None
