"""task.loss (label smoothing, a user function) and task.augment (random crop and flip)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from simfl.core.config import Digits, Iid, Logreg, Task
from simfl.core.config.augment import Augment
from simfl.core.errors import ConfigError
from simfl.core.records import TrainJob
from simfl.core.rng import RngTree
from simfl.train.augment import augment_rows, augment_stream
from simfl.train.batched import BatchedExecutor
from simfl.train.data import build_data
from simfl.train.executor import InlineExecutor
from simfl.train.losses import smoothed_cross_entropy
from simfl.train.models import build_model

CPU = torch.device("cpu")


def mean_squared_logit(logits, targets):
    """A user loss for the tests: a batch mean, as a user function returns."""
    return (logits ** 2).mean() + F.cross_entropy(logits, targets)


def test_label_smoothing_matches_torch():
    g = torch.Generator().manual_seed(0)
    out, y = torch.randn(6, 5, generator=g), torch.randint(0, 5, (6,), generator=g)
    ours = smoothed_cross_entropy(out, y, 0.1)
    # by hand: (1 - s) CE + s * mean over classes of -log p
    logp = out.log_softmax(-1)
    by_hand = 0.9 * -logp[torch.arange(6), y] + 0.1 * -logp.mean(-1)
    assert torch.allclose(ours, by_hand, atol=1e-6)
    assert torch.allclose(ours.mean(), torch.nn.CrossEntropyLoss(label_smoothing=0.1)(out, y))


def setup(**fields):
    task = Task(dataset=Digits(), partition=Iid(), model=Logreg(), n_clients=6, batch_size=16,
                lr=0.1, local_epochs=1, **fields)
    rngs = RngTree(0)
    data = build_data(task, rngs)
    net = build_model(task.model, data.input_shape, data.n_classes)
    return task, rngs, data, net, net.init(torch.Generator().manual_seed(0))


def deltas(executor_cls, task, rngs, data, net, params):
    jobs = [TrainJob(c, 0, 0) for c in range(task.n_clients)]
    return [u.delta for u in executor_cls(net, data, task, rngs, CPU).submit(jobs, {0: params})]


@pytest.mark.parametrize("fields", [{"label_smoothing": 0.2}, {"augment": Augment(2)},
                                    {"loss": "tests.test_loss_augment:mean_squared_logit"}],
                         ids=["smoothing", "augment", "user_loss"])
def test_changes_training_and_executors_agree(fields):
    task, rngs, data, net, params = setup(**fields)
    inline = deltas(InlineExecutor, task, rngs, data, net, params)
    batched = deltas(BatchedExecutor, task, rngs, data, net, params)
    plain = deltas(InlineExecutor, *setup()[:4], params)
    for a, b, p in zip(inline, batched, plain):
        for k in a:
            assert torch.allclose(a[k], b[k], atol=1e-5)
        assert max((a[k] - p[k]).abs().max().item() for k in a) > 1e-4


def test_augmentation_is_reproducible_and_differs_across_clients():
    rows = torch.arange(2 * 3 * 8 * 8, dtype=torch.float32).reshape(2, -1)
    rngs = RngTree(5)
    cfg = Augment(crop_padding=2)
    one = augment_rows(rows, (3, 8, 8), cfg, augment_stream(TrainJob(1, 0, 4), rngs))
    again = augment_rows(rows, (3, 8, 8), cfg, augment_stream(TrainJob(1, 0, 4), RngTree(5)))
    other = augment_rows(rows, (3, 8, 8), cfg, augment_stream(TrainJob(2, 0, 4), rngs))
    assert torch.equal(one, again) and not torch.equal(one, other)


def test_crop_and_flip_move_pixels_as_drawn():
    image = torch.arange(16, dtype=torch.float32).reshape(1, 16)  # 1 x 4 x 4
    rng = np.random.default_rng(3)
    out = augment_rows(image, (1, 4, 4), Augment(crop_padding=1, horizontal_flip=True),
                       np.random.default_rng(3)).reshape(4, 4)
    dy, dx = rng.integers(0, 3, size=(1, 2))[0]
    flip = rng.random(1)[0] < 0.5
    padded = np.pad(np.arange(16.0).reshape(4, 4), 1)
    expected = padded[dy:dy + 4, dx:dx + 4]
    expected = expected[:, ::-1] if flip else expected
    assert np.array_equal(out.numpy(), expected)


def test_bad_loss_and_augment_settings():
    with pytest.raises(ConfigError, match="loss"):
        setup(loss="not a path")
    with pytest.raises(ConfigError, match="label_smoothing"):
        setup(label_smoothing=1.5)
    task, rngs, data, net, _ = setup(loss="no_such_module_here:fn")
    with pytest.raises(ConfigError, match="task.loss"):
        InlineExecutor(net, data, task, rngs, CPU)


def test_array_data_and_a_map_style_dataset_train_the_same(tmp_path):
    import simfl

    rng = np.random.default_rng(0)
    x = rng.random((120, 1, 6, 6)).astype(np.float32)
    y = rng.integers(0, 3, 120)

    class Pairs(torch.utils.data.Dataset):
        def __init__(self, lo, hi):
            self.lo, self.hi = lo, hi

        def __len__(self):
            return self.hi - self.lo

        def __getitem__(self, i):
            return torch.from_numpy(x[self.lo + i]), int(y[self.lo + i])

    arrays = simfl.ArrayData(x[:100], y[:100], x[100:], y[100:])
    from_torch = simfl.ArrayData(Pairs(0, 100), Pairs(100, 120))
    assert arrays == from_torch and arrays.input_shape() == (1, 6, 6)
    assert arrays.shape() == (36, 3)
    scenario = simfl.Scenario(task=Task(dataset=arrays, model=Logreg(), n_clients=4,
                                        batch_size=10, augment=Augment(1)),
                              run=simfl.Run(rounds=2))
    result = simfl.run(scenario, tmp_path / "arrays")
    assert result.summary["final_accuracy"] is not None
    with pytest.raises(ConfigError, match="ArrayData"):
        simfl.ArrayData(x[:100], y[:99], x[100:], y[100:])
    with pytest.raises(ConfigError, match="digest"):
        simfl.Arrays(digest="0" * 32).shape()
