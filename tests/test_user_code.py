"""A user's torch_module factory or task.loss that does something wrong is one line naming
it and what it did, exit status 2: at validate when a check can see it, else in the run."""

import uuid

import pytest

from simfl.cli import main

MODULE = '''
import math
import torch
from torch import nn


class NoParams(nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0], -1)[:, :10] * 1.0


class Unused(nn.Module):
    def __init__(self, n, c):
        super().__init__()
        self.used, self.spare = nn.Linear(n, c), nn.Linear(3, 3)

    def forward(self, x):
        return self.used(x.reshape(x.shape[0], -1))


class Embedded(nn.Module):
    """Reads its input as integer token ids: fine on zeros, not on pixel values."""
    def __init__(self, c):
        super().__init__()
        self.emb = nn.Embedding(17, c)

    def forward(self, x):
        return self.emb(x.reshape(x.shape[0], -1)).sum(1)


class ItemIndexed(nn.Module):
    """Slices with a number read from a tensor: fine one job at a time, not under vmap."""
    def __init__(self, n, c):
        super().__init__()
        self.lin = nn.Linear(n, c)

    def forward(self, x):
        flat = x.reshape(x.shape[0], -1)
        return self.lin(flat)[:, :int(flat[0].argmax()) + 10]


def no_params(shape, c):
    return NoParams()


def unused(shape, c):
    return Unused(math.prod(shape), c)


def lazy(shape, c):
    return nn.Sequential(nn.Flatten(), nn.LazyLinear(c))


def embedded(shape, c):
    return Embedded(c)


def item_indexed(shape, c):
    return ItemIndexed(math.prod(shape), c)


def vector_loss(logits, targets):
    return torch.nn.functional.cross_entropy(logits, targets, reduction="none")


def raising_loss(logits, targets):
    raise RuntimeError("the loss broke")


def int_loss(logits, targets):
    return 3


def no_arguments():
    return torch.tensor(1.0)
'''

#: a short training run whose clients all make the deadline
TRAIN = ["--set", "run.rounds=1", "--set", "task.n_clients=4", "--set",
         "server.deadline_s=1000", "--quiet"]


@pytest.fixture
def module(tmp_path, monkeypatch):
    name = f"user_code_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def model(module, factory):
    return f'task.model={{"kind":"torch_module","factory":"{module}:{factory}"}}'


def one_line(capsys, *words):
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err, err
    return err


@pytest.mark.parametrize("factory, words", [
    ("no_params", "has none"), ("unused", "'spare.weight' gets no gradient"),
    ("lazy", "lazy module")])
def test_a_factory_validate_can_see_through_is_one_line_at_validate(module, capsys, factory,
                                                                      words):
    assert main(["validate", "quickstart", "--set", model(module, factory)]) == 2
    one_line(capsys, f"{module}:{factory}", words)


@pytest.mark.parametrize("factory, executor, words", [
    ("embedded", "inline", "float32"), ("item_indexed", "batched", "vmap")])
def test_a_module_that_fails_in_training_is_one_line_in_the_run(module, tmp_path, capsys,
                                                                factory, executor, words):
    assert main(["run", "quickstart", *TRAIN, "--set", f"run.executor={executor}", "--set",
                 model(module, factory), "--out", str(tmp_path / "r")]) == 2
    one_line(capsys, f"{module}:{factory}", words)


@pytest.mark.parametrize("loss, words", [
    ("vector_loss", "shape [16]"), ("raising_loss", "RuntimeError: the loss broke"),
    ("int_loss", "returned an int")])
def test_a_loss_that_misbehaves_is_one_line_in_the_run(module, tmp_path, capsys, loss, words):
    assert main(["run", "quickstart", *TRAIN, "--set", f"task.loss={module}:{loss}",
                 "--out", str(tmp_path / "r")]) == 2
    one_line(capsys, "task.loss", f"{module}:{loss}", words)


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("loss", ["NAME:no_arguments", "os:getcwd"])
def test_a_loss_that_takes_no_arguments_is_refused_before_training(module, tmp_path, capsys,
                                                                     command, loss):
    out = ["--out", str(tmp_path / "r")] if command == "run" else []
    assert main([command, "quickstart", "--set",
                 f"task.loss={loss.replace('NAME', module)}", *out]) == 2
    one_line(capsys, "task.loss", "fn(logits, targets)", "it takes ()")
    assert not (tmp_path / "r").exists()
