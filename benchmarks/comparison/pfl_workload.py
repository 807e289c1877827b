"""The pfl workload (child side): pfl-research's own CIFAR-10 benchmark setting, run by
pfl, by simfl (inline, batched, and with a lossy OFDMA network) and by a plain PyTorch
loop, on the same synthetic CIFAR-shaped data with the same module.

The setting of pfl-research's image-classification baseline: 1,000 users of 50 images
each (3x32x32, channels last as pfl stores them), a cohort of 50 per central iteration,
one local epoch at batch 10 (5 SGD steps) with local learning rate 0.1, FedAvg weighted
by user with central SGD at learning rate 1.0, and its ``simple_cnn`` (two 3x3
convolutions of 32 and 64 channels, 2x2 max-pooling, dropout, a dense layer of 128:
1,626,442 parameters). Each arm counts the SGD steps it took, so the table can show
that every arm did the whole work.
"""

from __future__ import annotations

import time

USERS, PER_USER, COHORT, BATCH, LOCAL_LR, SEED = 1000, 50, 50, 10, 0.1, 0
SHAPE = (32, 32, 3)  # one image, channels last
PFL_ARMS = ("pfl", "simfl_inline", "simfl_batched", "simfl_network", "plain")


def synthetic_cifar(n: int, seed: int):
    """``n`` random channels-last images and labels (speed does not depend on them)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, *SHAPE), dtype=np.float32),
            rng.integers(0, 10, n).astype(np.int64))


def simple_cnn(input_shape=SHAPE, n_classes: int = 10):
    """The benchmark's CNN as a torch module taking channels-last images."""
    import torch

    nn = torch.nn

    class ChannelsFirst(nn.Module):
        def forward(self, x):
            return x.permute(0, 3, 1, 2)

    side = (input_shape[0] - 4) // 2
    net = nn.Sequential(ChannelsFirst(), nn.Conv2d(input_shape[-1], 32, 3), nn.ReLU(),
                        nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.25),
                        nn.Flatten(), nn.Linear(side * side * 64, 128), nn.ReLU(),
                        nn.Dropout(0.5), nn.Linear(128, n_classes))
    for m in net.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_uniform_(m.weight)
    return net


def _per_round(stamps: list[tuple[float, float]]) -> dict:
    """CPU and wall seconds of each round from (cpu, wall) stamps at round ends."""
    return {"cpu_s": [b[0] - a[0] for a, b in zip(stamps[:-1], stamps[1:])],
            "round_s": [b[1] - a[1] for a, b in zip(stamps[:-1], stamps[1:])]}


def _stamp() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def arm_plain(rounds: int, device: str = "cpu") -> dict:
    """FedAvg as a plain sequential loop: one module, each user's slice, SGD."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    x, y = (torch.from_numpy(a).to(device) for a in synthetic_cifar(USERS * PER_USER, SEED))
    torch.manual_seed(SEED)
    net = simple_cnn().to(device)
    server = {k: v.clone() for k, v in net.state_dict().items()}
    rng = np.random.default_rng(SEED)
    steps, stamps = 0, [_stamp()]
    for _ in range(rounds):
        total = {k: torch.zeros_like(v) for k, v in server.items()}
        for user in rng.choice(USERS, size=COHORT, replace=False):
            net.load_state_dict(server)
            net.train()
            optimizer = torch.optim.SGD(net.parameters(), lr=LOCAL_LR)
            order = (user * PER_USER + torch.from_numpy(rng.permutation(PER_USER))).to(device)
            for i in range(0, PER_USER, BATCH):
                batch = order[i:i + BATCH]
                optimizer.zero_grad()
                F.cross_entropy(net(x[batch]), y[batch]).backward()
                optimizer.step()
                steps += 1
            for k, v in net.state_dict().items():
                total[k] += v
        server = {k: v / COHORT for k, v in total.items()}  # central lr 1: the mean
        _sync(device)
        stamps.append(_stamp())
    return {**_per_round(stamps), "steps": steps, "updates": rounds * COHORT}


def arm_simfl(executor: str, rounds: int, network: bool = False, device: str = "cpu") -> dict:
    """A whole simfl run of the setting; with ``network``, the clients are placed in a
    200 m disc around one access point and upload over OFDMA (equal shares of 20 MHz) on
    the shared radio with shadowing and Rayleigh fading, an attempt lost below 5 dB SINR,
    and the server waits at most 30 s (steps counted: the ones trained, i.e. aggregated)."""
    import tempfile
    from pathlib import Path

    import torch

    import simfl

    x, y = synthetic_cifar(USERS * PER_USER, SEED)
    x_test, y_test = synthetic_cifar(1000, SEED + 1)
    task = simfl.Task(dataset=simfl.ArrayData(x, y, x_test, y_test), partition=simfl.Iid(),
                      model=simfl.TorchModule(factory=simple_cnn), n_clients=USERS,
                      batch_size=BATCH, local_epochs=1, lr=LOCAL_LR)
    radio = {"bandwidth_hz": 20e6, "shadowing_db": 8.0, "fading": {"kind": "rayleigh"}}
    overrides = [("population.placement", {"kind": "disc", "radius_m": 200.0}),
                 ("network.radio", radio), ("network.mac", {"kind": "ofdma"}),
                 ("network.uplink", "ideal"), ("network.sinr_threshold_db", 5.0),
                 ("server.deadline_s", 30.0)] if network else []
    scenario = simfl.Scenario(
        name=f"pfl_{executor}", seed=SEED, task=task,
        server=simfl.Server(clients_per_round=COHORT, deadline_s=1e6),
        run=simfl.Run(rounds=rounds, eval_every_rounds=10**6, executor=executor,
                      device=device, threads=torch.get_num_threads()))
    if overrides:
        from simfl.core.config.scenario import apply_overrides

        scenario = apply_overrides(scenario, overrides)
    stamps = [_stamp()]
    with tempfile.TemporaryDirectory() as tmp:
        result = simfl.run(scenario, Path(tmp) / "run",
                           progress=lambda r, t_s, acc: stamps.append(_stamp()))
    summary = result.summary
    return {**_per_round(stamps), "steps": summary["trained_updates"] * PER_USER // BATCH,
            "updates": summary["aggregated_updates"],
            "trained_updates": summary["trained_updates"]}


def pfl_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("pfl") is not None


def arm_pfl(rounds: int, device: str = "cpu") -> dict:
    """pfl's FedAvg on its simulated backend, with the benchmark's hyperparameters (pfl
    puts the model and data on its default device: the GPU when there is one)."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    from pfl.aggregate.simulate import SimulatedBackend
    from pfl.aggregate.weighting import WeightByUser
    from pfl.algorithm import FederatedAveraging, NNAlgorithmParams
    from pfl.callback.base import TrainingProcessCallback
    from pfl.data import FederatedDataset
    from pfl.data.sampling import get_user_sampler
    from pfl.hyperparam import NNEvalHyperParams, NNTrainHyperParams
    from pfl.metrics import Metrics, Weighted
    from pfl.model.pytorch import PyTorchModel

    x, y = (torch.from_numpy(a) for a in synthetic_cifar(USERS * PER_USER, SEED))
    slices = [(x[u * PER_USER:(u + 1) * PER_USER], y[u * PER_USER:(u + 1) * PER_USER])
              for u in range(USERS)]
    np.random.seed(SEED)  # pfl's user sampler draws from numpy's global generator
    torch.manual_seed(SEED)
    data = FederatedDataset.from_slices(slices, get_user_sampler("random", range(USERS)))
    net = simple_cnn()
    steps = [0]

    def loss(self, inputs, targets, eval=False):
        self.eval() if eval else self.train()
        if not eval:
            steps[0] += 1
        return F.cross_entropy(self(inputs), targets)

    def metrics(self, inputs, targets, eval=True):
        with torch.no_grad():
            return {"loss": Weighted(float(loss(self, inputs, targets, True)), len(inputs))}

    net.loss = loss.__get__(net)
    net.metrics = metrics.__get__(net)
    model = PyTorchModel(model=net, local_optimizer_create=torch.optim.SGD,
                         central_optimizer=torch.optim.SGD(net.parameters(), 1.0))
    stamps = [_stamp()]

    class Stamp(TrainingProcessCallback):
        def after_central_iteration(self, aggregate_metrics, model, *, central_iteration):
            _sync(device)
            stamps.append(_stamp())
            return False, Metrics()

    backend = SimulatedBackend(training_data=data, val_data=None,
                               postprocessors=[WeightByUser()])
    FederatedAveraging().run(
        algorithm_params=NNAlgorithmParams(central_num_iterations=rounds,
                                           evaluation_frequency=10**6,
                                           train_cohort_size=COHORT, val_cohort_size=0),
        backend=backend, model=model,
        model_train_params=NNTrainHyperParams(local_learning_rate=LOCAL_LR,
                                              local_num_epochs=1, local_batch_size=BATCH),
        model_eval_params=NNEvalHyperParams(local_batch_size=10000), callbacks=[Stamp()])
    return {**_per_round(stamps), "steps": steps[0], "updates": rounds * COHORT}


def run_pfl_arm(arm: str, rounds: int, device: str = "cpu") -> dict:
    import torch

    if device.startswith("cuda") and not torch.cuda.is_available():
        return {"skipped": "no CUDA device"}
    if arm == "pfl":
        return arm_pfl(rounds, device) if pfl_available() else {"skipped": "pfl not installed"}
    if arm == "plain":
        return arm_plain(rounds, device)
    if arm == "simfl_network":
        return arm_simfl("inline", rounds, network=True, device=device)
    return arm_simfl(arm.split("_")[1], rounds, device=device)
