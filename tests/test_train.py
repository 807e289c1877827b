import numpy as np
import pytest
import torch

from simfl.core.config import Digits, Dirichlet, Iid, Logreg, Mlp, Native, Shards, Synthetic, Task
from simfl.core.errors import ConfigError
from simfl.core.records import (CVaRPayload, CVaRResult, LocalResult, ProxPayload, ScaffoldPayload,
                                ScaffoldResult, ScaledSgdPayload, SgdPayload)
from simfl.core.rng import RngTree
from simfl.train.data import build_data
from simfl.train.local import minibatch_plan, sgd
from simfl.train.models import build_model, model_bytes
from simfl.train.partition import split_clients


@pytest.mark.parametrize("partition", [Iid(), Dirichlet(alpha=0.3), Shards(per_client=2)])
def test_partitions_use_every_training_sample_once(partition):
    y = np.repeat(np.arange(10), 40)
    parts = split_clients(partition, y, None, 20, np.random.default_rng(0))
    assert len(parts) == 20
    assert sorted(np.concatenate(parts).tolist()) == list(range(len(y)))


def test_shards_give_few_labels_per_client():
    y = np.repeat(np.arange(10), 40)
    parts = split_clients(Shards(per_client=2), y, None, 20, np.random.default_rng(0))
    assert max(len(np.unique(y[p])) for p in parts) <= 2


def test_dirichlet_small_alpha_skews_labels():
    y = np.repeat(np.arange(10), 100)
    skewed = split_clients(Dirichlet(alpha=0.05), y, None, 10, np.random.default_rng(1))
    even = split_clients(Dirichlet(alpha=100.0), y, None, 10, np.random.default_rng(1))
    def top_share(parts):
        return np.mean([np.bincount(y[p], minlength=10).max() / len(p) for p in parts])
    assert top_share(skewed) > 0.5 > top_share(even)


def test_native_needs_groups():
    with pytest.raises(ConfigError, match="task.partition"):
        split_clients(Native(), np.zeros(10, dtype=int), None, 2, np.random.default_rng(0))


def test_digits_data_split_and_shapes():
    data = build_data(Task(dataset=Digits(), n_clients=10, test_fraction=0.25), RngTree(0))
    assert data.x_train.shape[1] == 64 and data.n_classes == 10
    assert len(data.y_test) == round(0.25 * 1797)
    assert data.n_samples.sum() == len(data.y_train)


def test_synthetic_is_grouped_by_client():
    task = Task(dataset=Synthetic(), partition=Native(), n_clients=5)
    data = build_data(task, RngTree(0))
    assert data.x_train.shape[1] == 60 and data.n_samples.min() >= 40
    assert data.y_train.max() < 10


def test_too_many_clients_is_a_config_error():
    with pytest.raises(ConfigError, match="task.n_clients"):
        build_data(Task(n_clients=5000), RngTree(0))


def test_minibatch_plans():
    rng = np.random.default_rng(0)
    epochs = minibatch_plan(10, Task(batch_size=4, local_epochs=2), rng)
    assert [len(b) for b in epochs] == [4, 4, 2, 4, 4, 2]
    assert sorted(np.concatenate(epochs[:3]).tolist()) == list(range(10))
    steps = minibatch_plan(3, Task(batch_size=4, local_steps=5), rng)
    assert [len(b) for b in steps] == [3] * 5
    assert minibatch_plan(0, Task(), rng) == []


@pytest.mark.parametrize("model, count", [(Logreg(), 12 * 4 + 4),
                                          (Mlp(hidden=(7, 5)), 12 * 7 + 7 + 7 * 5 + 5 + 5 * 4 + 4)])
def test_parameter_count_matches_built_model(model, count):
    net = build_model(model, 12, 4)
    params = net.init(torch.Generator().manual_seed(0))
    assert sum(p.numel() for p in params.values()) == count
    assert model_bytes(model, (12,), 4) == 4 * count
    assert net.forward(params, torch.zeros(3, 12)).shape == (3, 4)


def test_sgd_lowers_the_loss_and_leaves_the_start_untouched():
    data = build_data(Task(n_clients=2), RngTree(0))
    net = build_model(Logreg(), 64, 10)
    start = net.init(torch.Generator().manual_seed(0))
    before = {k: v.clone() for k, v in start.items()}
    x, y = torch.from_numpy(data.x_train), torch.from_numpy(data.y_train)
    plan = minibatch_plan(len(y), Task(batch_size=32, local_epochs=3), np.random.default_rng(0))
    local, _, extra = sgd(net, start, x, y, plan, lr=0.5, weight_decay=0.0)
    assert extra == LocalResult()
    loss = lambda p: torch.nn.functional.cross_entropy(net.forward(p, x), y).item()
    assert loss(local) < 0.5 * loss(start)
    assert all(torch.equal(before[k], start[k]) for k in start)


@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
def test_plain_sgd_is_torch_optim_sgd_on_a_module(weight_decay):
    """A job without a payload (the fast path) ends where nn.Module + optim.SGD ends."""
    data = build_data(Task(n_clients=2), RngTree(0))
    net = build_model(Mlp(hidden=(16,)), 64, 10)
    start = net.init(torch.Generator().manual_seed(0))
    x, y = torch.from_numpy(data.x_train), torch.from_numpy(data.y_train)
    plan = minibatch_plan(50, Task(batch_size=16, local_epochs=2), np.random.default_rng(0))
    local, mean_loss, _ = sgd(net, start, x, y, plan, lr=0.3, weight_decay=weight_decay)
    module = torch.nn.Sequential(torch.nn.Linear(64, 16), torch.nn.ReLU(), torch.nn.Linear(16, 10))
    names = ("layer0.weight", "layer0.bias", "layer1.weight", "layer1.bias")
    module.load_state_dict(dict(zip(("0.weight", "0.bias", "2.weight", "2.bias"),
                                    (start[k] for k in names))))
    optimizer = torch.optim.SGD(module.parameters(), lr=0.3, weight_decay=weight_decay)
    losses = []
    for batch in plan:
        optimizer.zero_grad()
        value = torch.nn.functional.cross_entropy(module(x[batch]), y[batch])
        value.backward()
        optimizer.step()
        losses.append(value.item())
    for name, p in zip(names, module.parameters()):
        torch.testing.assert_close(local[name], p.detach(), rtol=0, atol=1e-6)
    assert mean_loss == pytest.approx(np.mean(losses), abs=1e-6)


# ------------------------------------------------------------------ quadratic task, local rules

def quadratic_setup(targets, curvature=2.0, steps=1, lr=0.1):
    """Noise-free quadratic clients f_k(w) = (curvature / 2)(w - e_k)^2, w = the bias."""
    from simfl.core.config import Quadratic

    task = Task(dataset=Quadratic(targets=targets, curvature=curvature, samples_per_client=5),
                partition=Native(), model=Logreg(), n_clients=len(targets), batch_size=4,
                local_steps=steps, lr=lr)
    rngs = RngTree(0)
    data = build_data(task, rngs)
    return task, rngs, data, build_model(task.model, data.input_shape, data.n_classes)


def point(w):
    return {"layer0.weight": torch.zeros(1, 1), "layer0.bias": torch.tensor([float(w)])}


def train_both(task, rngs, data, net, jobs, w0):
    """The same jobs through both executors, from the model w0 (round 0)."""
    from simfl.train.batched import BatchedExecutor
    from simfl.train.executor import InlineExecutor

    return [ex(net, data, task, rngs, torch.device("cpu")).submit(jobs, {0: point(w0)})
            for ex in (InlineExecutor, BatchedExecutor)]


def job(client, payload=None):
    from simfl.core.records import TrainJob

    return TrainJob(client, 0, 0, payload)


def test_quadratic_data_and_loss():
    from simfl.core.config import Quadratic
    from simfl.train.local import sample_loss

    task, _, data, _ = quadratic_setup((0.0, 1.0, 3.0))
    assert data.n_features == 1 and data.n_classes == 1
    assert np.all(data.x_train == 0) and data.y_train.dtype == np.float32
    for k, e in enumerate((0.0, 1.0, 3.0)):
        assert np.all(data.y_train[data.client_indices[k]] == e)
    loss = sample_loss(Quadratic(curvature=3.0))
    assert loss(torch.tensor([[2.0, 1.0]]), torch.tensor([[0.0, 0.0]])).item() == pytest.approx(7.5)
    with pytest.raises(ConfigError, match="native"):
        Task(dataset=Quadratic(), partition=Iid())


def test_cvar_local_steps_worked_example():
    """docs/algorithms.md §2: f = (theta - 1)^2, lam = alpha = 0.3, lrs 0.1 / 0.01, three steps."""
    task, rngs, data, net = quadratic_setup((1.0,), steps=3, lr=0.1)
    payload = CVaRPayload(t=0.0, alpha=0.3, lam=0.3, lr_t=0.01)
    for (u,) in train_both(task, rngs, data, net, [job(0, payload)], 0.0):
        assert u.delta["layer0.bias"].item() == pytest.approx(0.89395230, abs=1e-6)
        assert u.extra["t"] == pytest.approx(0.049, abs=1e-6)
    # one step: step 1 of the example
    task, rngs, data, net = quadratic_setup((1.0,), steps=1, lr=0.1)
    for (u,) in train_both(task, rngs, data, net, [job(0, payload)], 0.0):
        assert u.delta["layer0.bias"].item() == pytest.approx(0.52666667, abs=1e-6)
        assert u.extra["t"] == pytest.approx(0.01633333, abs=1e-6)


def test_cvar_at_or_above_the_loss_takes_the_lower_branch():
    # t >= f: theta moves with lam * grad only, t with 1 - lam
    task, rngs, data, net = quadratic_setup((1.0,), steps=1, lr=0.1)
    payload = CVaRPayload(t=1.0, alpha=0.3, lam=0.3, lr_t=0.01)
    for (u,) in train_both(task, rngs, data, net, [job(0, payload)], 0.0):
        assert u.delta["layer0.bias"].item() == pytest.approx(0.3 * 0.1 * 2, abs=1e-6)
        assert u.extra["t"] == pytest.approx(1.0 - 0.01 * 0.7, abs=1e-6)


def test_prox_pulls_towards_the_start_model():
    # f = (1/2)(w - 0)^2 from w0 = 1, lr 0.1, mu 0.5: 1 -> 0.9 -> 0.9 - 0.1 (0.9 + 0.5 (0.9 - 1))
    task, rngs, data, net = quadratic_setup((0.0,), curvature=1.0, steps=2, lr=0.1)
    for (u,) in train_both(task, rngs, data, net, [job(0, ProxPayload(0.5))], 1.0):
        assert 1.0 + u.delta["layer0.bias"].item() == pytest.approx(0.815, abs=1e-6)
        assert u.extra == LocalResult()


def test_scaled_sgd_scales_the_gradient_not_the_reported_loss():
    task, rngs, data, net = quadratic_setup((0.0,), curvature=1.0, steps=1, lr=0.1)
    for (u,) in train_both(task, rngs, data, net, [job(0, ScaledSgdPayload(2.0))], 1.0):
        assert 1.0 + u.delta["layer0.bias"].item() == pytest.approx(0.8, abs=1e-6)
        assert u.train_loss == pytest.approx(0.5, abs=1e-6)


def test_scaffold_local_rule_first_round_of_the_worked_example():
    """docs/algorithms.md §1.6: f_i = (1/2)(x - a_i)^2, a = (0, 4), x = 1, K = 2, lr 0.1."""
    task, rngs, data, net = quadratic_setup((0.0, 4.0), curvature=1.0, steps=2, lr=0.1)
    zero = {k: torch.zeros_like(v) for k, v in point(0).items()}
    jobs = [job(i, ScaffoldPayload(zero, zero)) for i in (0, 1)]
    for ups in train_both(task, rngs, data, net, jobs, 1.0):
        assert [u.delta["layer0.bias"].item() for u in ups] == pytest.approx([-0.19, 0.57], abs=1e-6)
        assert [u.extra["delta_c"]["layer0.bias"].item() for u in ups] == pytest.approx(
            [0.95, -2.85], abs=1e-6)
        assert all(u.extra["delta_c"]["layer0.weight"].item() == 0 for u in ups)


def test_plain_dict_payloads_become_typed_records():
    from simfl.train.local import as_payload

    zero = {"w": torch.zeros(1)}
    assert as_payload(None) is None
    assert as_payload({}) is None
    assert as_payload({"lr_scale": 0.5}) == SgdPayload(lr_scale=0.5)
    assert as_payload({"mu": 0.1, "lr_scale": 2}) == ProxPayload(0.1, lr_scale=2.0)
    assert as_payload({"loss_scale": 3.0}) == ScaledSgdPayload(3.0)
    assert as_payload({"c": zero, "c_i": zero}).kind == "scaffold"
    assert as_payload({"cvar": {"t": 0.0, "alpha": 0.3, "lam": 0.3, "lr_t": 0.01}}) == CVaRPayload(
        t=0.0, alpha=0.3, lam=0.3, lr_t=0.01)
    with pytest.raises(ValueError, match="one local rule"):
        as_payload({"mu": 0.1, "loss_scale": 2.0})


def test_each_rule_reports_its_result_record_from_both_executors():
    task, rngs, data, net = quadratic_setup((0.0, 4.0), curvature=1.0, steps=2, lr=0.1)
    zero = {k: torch.zeros_like(v) for k, v in point(0).items()}
    cases = [(ScaffoldPayload(zero, zero, lr_scale=0.5), ScaffoldResult),
             (CVaRPayload(t=0.0, alpha=0.3, lam=0.3, lr_t=0.01), CVaRResult),
             (ProxPayload(0.5, lr_scale=0.5), LocalResult), (None, LocalResult)]
    for payload, result in cases:
        for ups in train_both(task, rngs, data, net, [job(0, payload), job(1, payload)], 1.0):
            assert all(type(u.extra) is result for u in ups)
            scale = None if payload is None else payload.lr_scale
            assert all(u.extra.lr_scale == scale for u in ups)


def test_a_stack_mixing_scaffold_with_plain_jobs_is_refused():
    from simfl.train.local import StepRule

    start = {"w": torch.zeros(2, 3)}
    zero = {"w": torch.zeros(3)}
    with pytest.raises(ValueError, match="scaffold: every client"):
        StepRule([ScaffoldPayload(zero, zero), None], start, 0.1, 0.0)


def test_a_payload_without_an_implementation_names_its_rule():
    from dataclasses import dataclass

    from simfl.core.records import LocalPayload
    from simfl.core.registry import REGISTRIES
    from simfl.train.local import StepRule

    registry = REGISTRIES["local_rules"]
    entries = dict(registry._entries)
    try:
        @dataclass(frozen=True, eq=False)
        class Unbuilt(LocalPayload):
            """A rule nobody implemented."""
            kind = "unbuilt"

        with pytest.raises(ConfigError, match="local_rule = 'unbuilt' is not allowed.*register"):
            StepRule([Unbuilt()], {"w": torch.zeros(1, 3)}, 0.1, 0.0)
    finally:
        registry._entries = entries
