"""The contracts of the training side's extension points, for every registered kind.

datasets     ``load_samples(cfg, n, rngs)`` gives rows of ``prod(input_shape())`` numbers
             (float32, or int64 token ids when the kind is tagged ``tokens``), int64
             labels below ``shape()[1]`` (float32 targets of that width for the
             ``squared`` loss), the same arrays for the same seed, and as many
             samples as ``sample_counts`` says without loading. Capability tags are read
             from the config and must hold: ``needs_path`` (a ``path`` field: without one
             the load stops with a SimflError naming ``path``), ``own_test_split`` (a test
             split comes with the samples), ``natural_clients`` (``groups``: one natural
             client per sample, one count per client from ``sample_counts``).
partitions   ``split_clients`` gives each client disjoint indices into the labels, the
             same for the same stream, and ``client_sizes`` (where a size model exists)
             the same counts from the same stream.
models       for every input it accepts (``input_problem`` None: feature vectors, 1- or
             3-channel images, token ids; at least one), ``build_model(cfg, shape,
             n_classes)``: ``init(generator)`` gives float tensors by name with the shapes
             of ``param_shapes()``, the same for the same generator; ``forward`` one row
             of ``n_classes`` finite logits per sample, differentiable in the parameters.
local_rules  every registered payload has an implementation; one job trained with its
             default payload gives a finite delta shaped like the model, the same twice,
             and reports only fields of its ``result`` record.
executors    every ``run.executor`` choice but ``auto`` trains exactly the given jobs
             (one update per job, in order, named by client and base round) and agrees
             with ``inline`` on the same jobs.
lr_schedules ``scale(t)`` is finite and positive for every round, the same every time.
initialisers a session initialiser keeps the model's names, shapes and dtypes across
             sessions, never mutates what it is given, and is deterministic.
"""

import dataclasses
import math
import tempfile
import typing
from pathlib import Path

import numpy as np
import pytest

import simfl
import torch

from simfl.core.config import (Blobs, Cifar10, Cifar100, Idx, Iid, Leaf, Logreg, Native, Npz,
                               Run, Sessions, Task)
from simfl.core.config import TorchModule
from simfl.core.errors import SimflError
from simfl.core.records import LocalPayload, ScaffoldPayload, TrainJob
from simfl.core.registry import REGISTRIES, has_implementation
from simfl.core.rng import RngTree
from simfl.train import datasets
from simfl.train.batched import BatchedExecutor
from simfl.train.data import build_data
from simfl.train.executor import InlineExecutor
from simfl.train.models import build_model
from simfl.train.partition import client_sizes, has_size_model, split_clients
import simfl.train.rules  # noqa: F401  (names the built-in rules' implementations)

from test_readers import cifar_folder, leaf_folder, mnist_folder, npz_arrays, write_npz

from .kinds import config_of, kinds, registered_for_now

#: generated data files, removed when the test process ends
_FILES = tempfile.TemporaryDirectory(prefix="simfl-contracts-")
FILES = Path(_FILES.name)
N_CLIENTS = 3


def _made(name: str, make) -> str:
    where = FILES / name
    if not where.exists():
        make(where)
    return str(where)


DATASET_CASES = {
    "arrays": lambda: simfl.ArrayData(*npz_arrays().values()),
    "idx": lambda: Idx(path=_made("idx", mnist_folder)),
    "cifar10": lambda: Cifar10(path=_made("cifar10", cifar_folder)),
    "cifar100": lambda: Cifar100(path=_made("cifar100", lambda p: cifar_folder(p, hundred=True))),
    "leaf": lambda: Leaf(path=_made("leaf", leaf_folder)),
    "npz": lambda: Npz(path=_made("d.npz", lambda p: write_npz(p, **npz_arrays()))),
}
#: further cases of a kind (``name/variant``), e.g. a tagged capability the defaults miss
DATASET_VARIANTS = {
    "leaf/shakespeare": lambda: Leaf(benchmark="shakespeare", path=_made(
        "shakespeare", lambda p: leaf_folder(p, benchmark="shakespeare"))),
}


def tags(cfg) -> set[str]:
    out = {t for t in ("tokens", "own_test_split") if getattr(cfg, t)}
    if "path" in type(cfg).field_names():
        out.add("needs_path")
    return out


def dataset_contract(cfg) -> None:
    loaded = datasets.load_samples(cfg, N_CLIENTS, RngTree(4))
    n_features, n_classes = cfg.shape()
    tagged = tags(cfg)
    x, y = loaded.x, loaded.y
    assert x.ndim == 2 and x.shape[1] == math.prod(cfg.input_shape()) == n_features
    assert x.dtype == (np.int64 if "tokens" in tagged else np.float32), x.dtype
    if cfg.loss == "cross_entropy":
        assert y.dtype == np.int64 and y.shape == (len(x),)
        assert 0 <= y.min() and y.max() < n_classes
    else:  # squared loss: one float target of n_classes numbers per sample
        assert y.dtype == np.float32 and y.shape == (len(x), n_classes)
    assert (loaded.test is not None) == ("own_test_split" in tagged), "own_test_split tag"
    if loaded.test is not None:
        assert loaded.test.x.shape[1] == n_features and loaded.test.x.dtype == x.dtype
    again = datasets.load_samples(cfg, N_CLIENTS, RngTree(4))
    assert np.array_equal(again.x, x) and np.array_equal(again.y, y), "same seed, other samples"
    counts = datasets.sample_counts(cfg, N_CLIENTS, RngTree(4))
    if loaded.groups is not None:  # natural clients
        assert loaded.groups.shape == (len(y),) and loaded.groups.min() >= 0
        assert np.array_equal(counts, np.bincount(loaded.groups, minlength=len(counts)))
    else:
        assert int(np.sum(counts)) == len(y)
    if "needs_path" in tagged:
        with pytest.raises(SimflError, match="path"):
            datasets.load_samples(dataclasses.replace(cfg, path=""), N_CLIENTS, RngTree(4))


@pytest.mark.parametrize("name", kinds("datasets") + list(DATASET_VARIANTS))
def test_dataset_contract(name):
    if name in DATASET_VARIANTS:
        dataset_contract(DATASET_VARIANTS[name]())
    else:
        dataset_contract(config_of("datasets", name, DATASET_CASES))


def test_every_capability_tag_is_exercised():
    seen = set().union(*(tags(config_of("datasets", n, DATASET_CASES)) for n in kinds("datasets")),
                       *(tags(v()) for v in DATASET_VARIANTS.values()))
    assert seen >= {"tokens", "own_test_split", "needs_path"}


# ---------------------------------------------------------------------------------
# partitions

PARTITION_CASES: dict = {}
LABELS = np.random.default_rng(0).integers(0, 5, 240)
GROUPS = np.repeat(np.arange(6), 40)


def partition_contract(cfg) -> None:
    n_clients = 6 if type(cfg) is Native else 4
    parts = split_clients(cfg, LABELS, GROUPS, n_clients, np.random.default_rng(9))
    assert len(parts) == n_clients
    joined = np.concatenate(parts)
    assert joined.dtype.kind in "iu" and len(np.unique(joined)) == len(joined), "shared samples"
    assert joined.min() >= 0 and joined.max() < len(LABELS)
    again = split_clients(cfg, LABELS, GROUPS, n_clients, np.random.default_rng(9))
    assert all(np.array_equal(a, b) for a, b in zip(parts, again)), "same stream, other split"
    if has_size_model(cfg):
        sizes = client_sizes(cfg, len(LABELS), np.bincount(GROUPS), n_clients,
                             np.random.default_rng(9))
        assert np.array_equal(sizes, [len(p) for p in parts]), "size model disagrees"


@pytest.mark.parametrize("name", kinds("partitions"))
def test_partition_contract(name):
    partition_contract(config_of("partitions", name, PARTITION_CASES))


# ---------------------------------------------------------------------------------
# models

def _tiny_module(input_shape, n_classes):
    """A module with a parameter, a float buffer and an integer buffer (BatchNorm), that
    reads any sample shape, numbers or token ids."""

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.BatchNorm1d(math.prod(input_shape))
            self.fc = torch.nn.Linear(math.prod(input_shape), n_classes)

        def forward(self, x):
            return self.fc(self.norm(x.float().flatten(1)))

    return Tiny()


MODEL_CASES: dict = {"torch_module": lambda: TorchModule(factory=_tiny_module)}
N_CLASSES = 10
#: the kinds of input a model may read: (shape of one sample, token ids?)
INPUTS = [((12,), False), ((1, 28, 28), False), ((3, 32, 32), False), ((20,), True)]


def _batch(shape, tokens, n=3):
    gen = torch.Generator().manual_seed(1)
    if tokens:
        return torch.randint(0, N_CLASSES, (n, *shape), generator=gen)
    return torch.rand(n, math.prod(shape), generator=gen)


def model_contract(cfg) -> None:
    readable = [(shape, tokens) for shape, tokens in INPUTS
                if cfg.input_problem(shape, tokens) is None]
    assert readable, f"{cfg.kind} reads none of the sample shapes {INPUTS}"
    for shape, tokens in readable:
        net = build_model(cfg, shape, N_CLASSES)
        params = net.init(torch.Generator().manual_seed(0))
        assert params and all(isinstance(k, str) and p.is_floating_point()
                              for k, p in params.items())
        assert {k: tuple(v.shape) for k, v in params.items()} == {
            k: tuple(v) for k, v in net.param_shapes().items()}, "param_shapes disagrees"
        twin = net.init(torch.Generator().manual_seed(0))
        assert list(twin) == list(params) and all(torch.equal(params[k], twin[k]) for k in params)
        leaves = {k: p.clone().requires_grad_(True) for k, p in params.items()}
        out = net.forward(leaves, _batch(shape, tokens))
        assert out.shape == (3, N_CLASSES) and torch.isfinite(out).all()
        out.sum().backward()
        trainable = getattr(net, "trainable", list(leaves))  # a module's buffers get none
        assert all(leaves[k].grad is not None for k in trainable), "a parameter gets no gradient"


@pytest.mark.parametrize("name", kinds("models"))
def test_model_contract(name):
    model_contract(config_of("models", name, MODEL_CASES))


# ---------------------------------------------------------------------------------
# local rules and executors

TASK = Task(dataset=Blobs(n_samples=120, n_features=6, centers=3), partition=Iid(),
            model=Logreg(), n_clients=4, batch_size=8, local_steps=3, lr=0.1)
RULE_CASES = {"scaffold": lambda: ScaffoldPayload(c=_zeros(), c_i=_zeros())}


def _zeros():
    _, params = _setup()
    return {k: torch.zeros_like(v) for k, v in params.items()}


def _setup(executor=InlineExecutor):
    rngs = RngTree(6)
    data = build_data(TASK, rngs)
    net = build_model(TASK.model, data.n_features, data.n_classes)
    params = net.init(torch.Generator().manual_seed(2))
    return executor(net, data, TASK, rngs, torch.device("cpu")), params


def _finite_like(delta, params) -> bool:
    return (list(delta) == list(params) and all(
        delta[k].shape == params[k].shape and delta[k].dtype == params[k].dtype
        and torch.isfinite(delta[k]).all() for k in params))


def local_rule_contract(payload: LocalPayload) -> None:
    assert has_implementation(payload), f"{payload.kind}: no implementation registered"
    fields = {f.name for f in dataclasses.fields(type(payload).result)}
    outputs = []
    for _ in range(2):
        executor, params = _setup()
        [update] = executor.submit([TrainJob(1, 0, 0, payload)], {0: params})
        assert _finite_like(update.delta, params)
        assert set(update.extra or {}) <= fields, (
            f"{payload.kind} reports {set(update.extra or {}) - fields}, not in its result")
        outputs.append(update)
    assert all(torch.equal(outputs[0].delta[k], outputs[1].delta[k]) for k in outputs[0].delta)


@pytest.mark.parametrize("name", kinds("local_rules"))
def test_local_rule_contract(name):
    local_rule_contract(config_of("local_rules", name, RULE_CASES))


#: each ``run.executor`` choice (but ``auto``) and its implementation
EXECUTORS = {"inline": InlineExecutor, "batched": BatchedExecutor}


def test_every_executor_choice_has_a_contract():
    choices = set(typing.get_args(typing.get_type_hints(Run)["executor"])) - {"auto"}
    assert choices == set(EXECUTORS)


def executor_contract(executor_class) -> None:
    jobs = [TrainJob(3, 1, 2), TrainJob(0, 0, 2), TrainJob(2, 1, 2)]
    executor, params = _setup(executor_class)
    versions = {0: params, 1: {k: v + 0.01 for k, v in params.items()}}
    updates = executor.submit(jobs, versions)
    assert [(u.client, u.base_round) for u in updates] == [(j.client, j.base_round) for j in jobs]
    assert [u.n_samples for u in updates] == [len(executor.client_indices[j.client]) for j in jobs]
    reference = _setup(InlineExecutor)[0].submit(jobs, versions)
    for got, want in zip(updates, reference):
        assert _finite_like(got.delta, params)
        assert all(torch.allclose(got.delta[k], want.delta[k], rtol=1e-4, atol=1e-6)
                   for k in params), "differs from inline training"
    assert executor.submit([], versions) == []


@pytest.mark.parametrize("name", sorted(EXECUTORS))
def test_executor_contract(name):
    executor_contract(EXECUTORS[name])


# ---------------------------------------------------------------------------------
# learning-rate schedules and session initialisers

@pytest.mark.parametrize("name", kinds("lr_schedules"))
def test_lr_schedule_contract(name):
    schedule = config_of("lr_schedules", name, {})
    scales = [schedule.scale(t) for t in range(200)]
    assert all(math.isfinite(s) and s > 0 for s in scales)
    assert scales == [schedule.scale(t) for t in range(200)]


INITIALISER_CASES: dict = {}


def initialiser_contract(rule) -> None:
    from simfl.algorithms.session_init import SessionInitialiser

    initial = {"w": torch.arange(6.0).reshape(2, 3), "b": torch.zeros(3)}

    def gradient_rounds(params, session):
        return {k: v - 0.1 * (session + 1) for k, v in params.items()}

    def sessions():
        init = SessionInitialiser(Sessions(groups=2, rounds_per_session=2, pilot_sessions=1,
                                           init=rule))
        state = init.init(initial)
        params, out = initial, []
        for session in range(4):
            params_before = {k: v.clone() for k, v in params.items()}
            given = {k: v.clone() for k, v in params.items()}
            params, state = init.start(state, session, given, gradient_rounds)
            assert all(torch.equal(given[k], v) for k, v in params_before.items()), \
                "the initialiser changed the model it was given"
            assert list(params) == list(initial) and all(
                params[k].shape == initial[k].shape and params[k].dtype == initial[k].dtype
                for k in initial)
            params = {k: v + 0.5 for k, v in params.items()}  # the session's training
            out.append(params)
        return out

    first, second = sessions(), sessions()
    assert all(torch.equal(a[k], b[k]) for a, b in zip(first, second) for k in a)
    assert torch.equal(initial["w"], torch.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("name", kinds("initialisers"))
def test_initialiser_contract(name):
    initialiser_contract(config_of("initialisers", name, INITIALISER_CASES))


# ---------------------------------------------------------------------------------
# a kind that breaks its contract is caught


def test_a_data_set_with_labels_out_of_range_fails_the_contract():
    with registered_for_now("datasets"):
        @dataclasses.dataclass(frozen=True)
        class Overflow(Blobs):
            """Blobs whose labels run one past the classes it declares."""
            kind = "overflow_for_test"

        simfl.register(Overflow, lambda cfg, n, rngs: datasets.Samples(
            np.zeros((4, cfg.n_features), np.float32), np.arange(4, dtype=np.int64) + cfg.centers))
        with pytest.raises(AssertionError):
            dataset_contract(config_of("datasets", "overflow_for_test", {}))


def test_a_local_rule_without_an_implementation_fails_the_contract():
    with registered_for_now("local_rules"):
        @dataclasses.dataclass(frozen=True, eq=False)
        class Unbuilt(LocalPayload):
            """A rule nobody implemented."""
            kind = "unbuilt_for_test"

        with pytest.raises(AssertionError, match="no implementation"):
            local_rule_contract(config_of("local_rules", "unbuilt_for_test", {}))
