import numpy as np
import pytest
import torch

from simfl.core.config import Digits, Dirichlet, Iid, Logreg, Mlp, Native, Shards, Synthetic, Task
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree
from simfl.train.data import build_data
from simfl.train.local import minibatch_plan, sgd
from simfl.train.models import build_model
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


@pytest.mark.parametrize("model", [Logreg(), Mlp(hidden=(7, 5))])
def test_parameter_count_matches_built_model(model):
    net = build_model(model, 12, 4)
    params = net.init(torch.Generator().manual_seed(0))
    assert sum(p.numel() for p in params.values()) == model.n_params(12, 4)
    assert net.forward(params, torch.zeros(3, 12)).shape == (3, 4)


def test_sgd_lowers_the_loss_and_leaves_the_start_untouched():
    data = build_data(Task(n_clients=2), RngTree(0))
    net = build_model(Logreg(), 64, 10)
    start = net.init(torch.Generator().manual_seed(0))
    before = {k: v.clone() for k, v in start.items()}
    x, y = torch.from_numpy(data.x_train), torch.from_numpy(data.y_train)
    plan = minibatch_plan(len(y), Task(batch_size=32, local_epochs=3), np.random.default_rng(0))
    local, _ = sgd(net, start, x, y, plan, lr=0.5, weight_decay=0.0)
    loss = lambda p: torch.nn.functional.cross_entropy(net.forward(p, x), y).item()
    assert loss(local) < 0.5 * loss(start)
    assert all(torch.equal(before[k], start[k]) for k in start)
