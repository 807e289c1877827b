"""The torch_module model kind: a user's nn.Module trained, federated, scored and saved."""

import csv
import json
import math
from pathlib import Path

import pytest
import torch
from torch import nn

import simfl
from simfl.cli import main
from simfl.core.config import load_scenario
from simfl.core.records import TrainJob
from simfl.core.rng import RngTree
from simfl.train.batched import BatchedExecutor
from simfl.train.data import build_data
from simfl.train.evaluate import Evaluator
from simfl.train.executor import InlineExecutor
from simfl.train.minibatch import job_plan
from simfl.train.models import build_model

ROOT = Path(__file__).resolve().parents[1]
OWN_MODEL = ROOT / "scenarios" / "own_model.py"


@pytest.fixture(autouse=True)
def one_thread():
    """Small modules train fastest on one thread (and the test machine is shared)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def accuracy_of(net, data):
    """Test accuracy of a plain nn.Module in eval mode, counted in integers."""
    net.eval()
    with torch.no_grad():
        logits = net(torch.from_numpy(data.x_test).reshape(-1, 1, 8, 8))
    return int((logits.argmax(1) == torch.from_numpy(data.y_test)).sum()) / len(data.y_test)


def conv_bn_dropout(input_shape, n_classes):
    """Conv2d + BatchNorm2d + Dropout + Linear, for (C, H, W) images."""
    c, h, w = input_shape
    return nn.Sequential(nn.Conv2d(c, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.Flatten(), nn.Dropout(0.3), nn.Linear(4 * h * w, n_classes))


def norm_first(input_shape, n_classes):
    """BatchNorm on the raw pixels first: its running statistics follow from the data
    alone, whatever the weights."""
    n = math.prod(input_shape)
    return nn.Sequential(nn.Flatten(), nn.BatchNorm1d(n), nn.Linear(n, n_classes))


def no_buffers(input_shape, n_classes):
    return nn.Sequential(nn.Flatten(), nn.Linear(math.prod(input_shape), 8), nn.Tanh(),
                         nn.Linear(8, n_classes))


def task(factory, **model):
    return simfl.Task(dataset=simfl.Digits(), model=simfl.TorchModule(factory=factory, **model),
                      n_clients=4, batch_size=16, local_epochs=1, lr=0.05)


def test_the_scenario_script_runs_from_the_cli_and_model_pt_reproduces_its_accuracy(tmp_path):
    out = tmp_path / "run"
    assert main(["run", str(OWN_MODEL), "--set", "run.rounds=2", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    scenario = load_scenario(str(OWN_MODEL))
    data = build_data(scenario.task, RngTree(scenario.seed))
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("own_model_for_test", OWN_MODEL)
    script = module_from_spec(spec)
    spec.loader.exec_module(script)
    net = script.make_net((1, 8, 8), 10)  # a fresh module, as a user would make it
    net.load_state_dict(torch.load(out / "model.pt", weights_only=True))
    assert accuracy_of(net, data) == pytest.approx(summary["final_accuracy"], abs=1e-12)
    net.load_state_dict(torch.load(out / "model_best.pt", weights_only=True))
    rows = list(csv.DictReader(open(out / "evals.csv")))
    assert accuracy_of(net, data) == pytest.approx(max(float(r["accuracy"]) for r in rows),
                                                   abs=1e-12)


def test_evaluation_does_not_depend_on_the_evaluation_batch_size():
    t = task(conv_bn_dropout)
    data = build_data(t, RngTree(0))
    net = build_model(t.model, (1, 8, 8), 10)
    params = net.init(torch.Generator().manual_seed(0))
    executor = InlineExecutor(net, data, t, RngTree(0), torch.device("cpu"))
    update = executor.submit([TrainJob(0, 0, 0)], {0: params})[0]
    trained = {k: params[k] + update.delta[k] for k in params}
    assert not torch.equal(trained["1.running_mean"], params["1.running_mean"])
    small = Evaluator(net, data.x_test, data.y_test, torch.device("cpu"), chunk_rows=8)
    large = Evaluator(net, data.x_test, data.y_test, torch.device("cpu"), chunk_rows=1000)
    assert small(trained)[0] == large(trained)[0]
    assert small(trained)[1] == pytest.approx(large(trained)[1], rel=1e-5)


def _hand_running_stats(x, batches, mean, var, momentum=0.1):
    """BatchNorm's running mean and (unbiased) variance after ``batches``, by hand."""
    for batch in batches:
        xb = x[batch].double()
        mean = (1 - momentum) * mean + momentum * xb.mean(0)
        var = (1 - momentum) * var + momentum * xb.var(0, unbiased=True)
    return mean, var


def _two_client_run(tmp_path, rounds, local_buffers):
    t = simfl.Task(dataset=simfl.Digits(), partition=simfl.Dirichlet(alpha=0.5),
                   model=simfl.TorchModule(factory=norm_first, local_buffers=local_buffers),
                   n_clients=2, batch_size=64, local_epochs=1, lr=0.05)
    scenario = simfl.Scenario(name="buffers", seed=3, task=t,
                              server=simfl.Server(clients_per_round=2),
                              run=simfl.Run(rounds=rounds))
    result = simfl.run(scenario, tmp_path / f"run{rounds}{local_buffers}")
    assert result.summary["aggregated_updates"] == 2 * rounds
    return t, result


def _expected_buffers(t, rounds, keep_own):
    data = build_data(t, RngTree(3))
    x = torch.from_numpy(data.x_train)
    n = data.n_samples
    assert n[0] != n[1]  # unequal weights, so a plain mean would not pass
    glob = (torch.zeros(64, dtype=torch.float64), torch.ones(64, dtype=torch.float64), 0.0)
    own = [glob, glob]
    for r in range(rounds):
        ends = []
        for c in range(2):
            plan = job_plan(TrainJob(c, r, r), int(n[c]), t, RngTree(3))
            mean, var, count = own[c] if keep_own else glob
            ends.append((*_hand_running_stats(x, [data.client_indices[c][b] for b in plan],
                                              mean, var), count + len(plan)))
        own = ends
        w = n / n.sum()
        glob = tuple(w[0] * ends[0][i] + w[1] * ends[1][i] for i in range(3))
    return glob


def test_buffers_are_averaged_with_fedavg_weights(tmp_path):
    t, result = _two_client_run(tmp_path, 1, False)
    mean, var, count = _expected_buffers(t, 1, keep_own=False)
    assert torch.allclose(result.params["1.running_mean"].double(), mean, atol=1e-5)
    assert torch.allclose(result.params["1.running_var"].double(), var, atol=1e-5)
    # the batch counter is averaged too (a weighted mean of the clients' batch counts)
    assert float(result.params["1.num_batches_tracked"]) == pytest.approx(count, rel=1e-6)


def test_local_buffers_stay_with_each_client(tmp_path):
    t, result = _two_client_run(tmp_path, 2, True)
    mean, _, _ = _expected_buffers(t, 2, keep_own=True)
    assert torch.allclose(result.params["1.running_mean"].double(), mean, atol=1e-5)
    shared, _, _ = _expected_buffers(t, 2, keep_own=False)
    assert not torch.allclose(shared, mean, atol=1e-5)  # the test tells the two apart


def test_dropout_draws_are_reproducible_and_buffers_get_no_gradient():
    t = task(conv_bn_dropout)
    data = build_data(t, RngTree(0))
    net = build_model(t.model, (1, 8, 8), 10)
    params = net.init(torch.Generator().manual_seed(0))
    assert set(net.buffer_names) == {"1.running_mean", "1.running_var", "1.num_batches_tracked"}
    assert params["1.num_batches_tracked"].is_floating_point() and net.batching is None
    assert set(net.trainable) == {"0.weight", "0.bias", "1.weight", "1.bias", "5.weight",
                                  "5.bias"}
    runs = [InlineExecutor(net, data, t, RngTree(0), torch.device("cpu")).submit(
        [TrainJob(1, 0, 0)], {0: params})[0].delta for _ in range(2)]
    assert all(torch.equal(runs[0][k], runs[1][k]) for k in params)


def test_a_module_without_buffers_trains_batched_as_inline():
    t = task(no_buffers)
    data = build_data(t, RngTree(0))
    net = build_model(t.model, (1, 8, 8), 10)
    assert net.batching == "stacked"
    params = net.init(torch.Generator().manual_seed(0))
    jobs = [TrainJob(c, 0, 0) for c in range(4)]
    cpu = torch.device("cpu")
    inline = InlineExecutor(net, data, t, RngTree(0), cpu).submit(jobs, {0: params})
    batched = BatchedExecutor(net, data, t, RngTree(0), cpu).submit(jobs, {0: params})
    for a, b in zip(inline, batched):
        for k in params:
            assert torch.allclose(a.delta[k], b.delta[k], atol=1e-5)


@pytest.mark.parametrize("factory, words", [
    ("no_such_package.nets:make_net", "ModuleNotFoundError"),
    ("os:sep", "cannot be called"),
    ("make_net", "package.module:function"),
])
def test_a_bad_factory_is_one_line_and_exit_2(capsys, factory, words):
    status = main(["validate", str(OWN_MODEL), "--set", f"task.model.factory={factory}"])
    err = capsys.readouterr().err
    assert status == 2 and "task.model.factory" in err and words in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_factory_whose_module_cannot_read_the_samples_is_one_line():
    def wrong(input_shape, n_classes):
        return nn.Linear(3, n_classes)

    with pytest.raises(simfl.ConfigError, match="task.model.factory.*shape"):
        build_model(simfl.TorchModule(factory=wrong), (1, 8, 8), 10)


def test_built_in_models_are_saved_as_their_named_parameters(tmp_path):
    scenario = simfl.Scenario(name="saved", seed=1, task=simfl.Task(
        dataset=simfl.Digits(), model=simfl.Logreg(), n_clients=4), run=simfl.Run(rounds=1))
    result = simfl.run(scenario, tmp_path / "run")
    saved = torch.load(result.out_dir / "model.pt", weights_only=True)
    assert list(saved) == list(result.params)
    assert all(torch.equal(saved[k], result.params[k].cpu()) for k in saved)
    timing = simfl.run(simfl.apply_overrides(scenario, [("run.timing_only", True)]),
                       tmp_path / "timing")
    assert not (timing.out_dir / "model.pt").exists()


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_a_module_trains_on_cuda(tmp_path):
    scenario = simfl.Scenario(name="cuda", seed=1, task=task(conv_bn_dropout),
                              run=simfl.Run(rounds=2, device="cuda"))
    result = simfl.run(scenario, tmp_path / "run")
    assert result.params["1.running_mean"].is_cuda
    assert (result.out_dir / "model.pt").exists()


def test_the_docs_example_runs(tmp_path, monkeypatch):
    import re

    text = (ROOT / "docs" / "torch-module.md").read_text()
    (example,) = re.findall(r"```python\n(.*?)```", text, re.S)
    monkeypatch.chdir(tmp_path)
    space = {"__name__": "torch_module_docs_example"}
    exec(compile(example, "docs/torch-module.md", "exec"), space)
    result = space["result"]
    assert 0.0 <= result.summary["final_accuracy"] <= 1.0
    assert "1.running_mean" in result.params and (result.out_dir / "model.pt").exists()


def test_a_resumed_run_keeps_each_clients_buffers(tmp_path):
    import shutil

    from simfl.experiment import resume_run

    t = simfl.Task(dataset=simfl.Digits(), partition=simfl.Dirichlet(alpha=0.5),
                   model=simfl.TorchModule(factory=norm_first, local_buffers=True),
                   n_clients=2, batch_size=64, local_epochs=1, lr=0.05)
    scenario = simfl.Scenario(name="resumed", seed=3, task=t,
                              server=simfl.Server(clients_per_round=2), run=simfl.Run(rounds=3))
    plain = simfl.run(scenario, tmp_path / "plain")
    kept = simfl.run(simfl.apply_overrides(scenario, [("run.checkpoint_every_rounds", 2)]),
                     tmp_path / "kept").out_dir
    for name in ("summary.json", "clients.csv", "model.pt", "model_best.pt"):
        (kept / name).unlink()
    resumed = resume_run(kept, named_code=[t.model.factory])  # named again: imported
    assert resumed.summary["resumed_after_round"] == 2
    for k, v in plain.params.items():
        assert torch.equal(resumed.params[k], v), k
    best = torch.load(kept / "model_best.pt", weights_only=True)
    assert all(torch.equal(best[k], v) for k, v in torch.load(
        plain.out_dir / "model_best.pt", weights_only=True).items())
