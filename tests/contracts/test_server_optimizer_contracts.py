"""The contract of every registered server optimiser (``server.optimizer.kind``).

server_optimizers  the kind builds from its defaults (or its declared case) and has an
                   implementation: a transform, or None for the identity. A transform's
                   ``init`` and ``update`` are pure (inputs never mutated, the same answer
                   twice); the step has the model's names, shapes and dtypes; a zero
                   pseudo-gradient from a fresh state gives a zero step (the server stays
                   where the aggregator left it); the first step from a fresh state points
                   along Delta, coordinate by coordinate; the state keeps its structure
                   across updates and survives a save and load (a checkpoint), after
                   which the next step is the same as without it.
"""

import copy
import dataclasses
import io

import pytest
import torch

from simfl.algorithms import server_optimizers as so
from simfl.core import registry as registry_module
from simfl.core.config import ServerOptimizer
from simfl.core.errors import ConfigError

from .kinds import config_of, kinds, registered_for_now

CASES: dict = {}


def params():
    g = torch.Generator().manual_seed(0)
    return {"layer.w": torch.randn(3, 4, generator=g), "layer.b": torch.randn(4, generator=g)}


def like(p, seed):
    g = torch.Generator().manual_seed(seed)
    return {k: torch.randn(v.shape, generator=g, dtype=v.dtype) for k, v in p.items()}


def tensors_of(tree):
    """The tensors of a state (nested tuples and dicts) in a fixed order."""
    if isinstance(tree, torch.Tensor):
        return [tree]
    if isinstance(tree, dict):
        return [t for k in sorted(tree) for t in tensors_of(tree[k])]
    if isinstance(tree, tuple):
        return [t for item in tree for t in tensors_of(item)]
    raise AssertionError(f"a state holds tensors, dicts and tuples only, not {type(tree)}")


def structure(tree):
    if isinstance(tree, torch.Tensor):
        return ("tensor", tuple(tree.shape), tree.dtype)
    if isinstance(tree, dict):
        return {k: structure(v) for k, v in tree.items()}
    return (type(tree).__name__, tuple(structure(v) for v in tree))


def same(a, b):
    ta, tb = tensors_of(a), tensors_of(b)
    return len(ta) == len(tb) and all(torch.equal(x, y) for x, y in zip(ta, tb))


def optimizer_contract(config) -> None:
    try:
        transform = so.build_server_optimizer(config)
    except ConfigError as err:
        raise AssertionError(f"{config.kind}: no implementation ({err})") from None
    if transform is None:  # the identity: the server keeps the aggregator's model
        return
    assert isinstance(transform, so.Transform)
    w = params()
    w_copy = copy.deepcopy(w)
    fresh = transform.init(w)
    assert same(w, w_copy), "init changed the parameters"
    assert same(fresh, transform.init(w)), "init is not deterministic"
    zero = {k: torch.zeros_like(v) for k, v in w.items()}
    step, _ = transform.update(zero, fresh, w)
    assert all(torch.equal(step[k], zero[k]) for k in w), "a zero Delta moved the model"

    g1, g2 = like(w, 1), like(w, 2)
    inputs = copy.deepcopy((g1, fresh, w))
    step1, state1 = transform.update(g1, fresh, w)
    assert same((g1, fresh, w), inputs), "update changed its inputs"
    again = transform.update(g1, fresh, w)
    assert same(step1, again[0]) and same(state1, again[1]), "update is not deterministic"
    assert set(step1) == set(w)
    for k in w:
        assert step1[k].shape == w[k].shape and step1[k].dtype == w[k].dtype, k
        assert torch.all(torch.isfinite(step1[k])), k
        assert torch.all(torch.sign(step1[k]) == torch.sign(g1[k])), f"{k}: not along Delta"
    assert structure(state1) == structure(fresh), "the state changed its structure"

    buffer = io.BytesIO()
    torch.save(state1, buffer)
    buffer.seek(0)
    restored = torch.load(buffer, weights_only=False)
    step2, state2 = transform.update(g2, state1, w)
    step2r, state2r = transform.update(g2, restored, w)
    assert same(step2, step2r) and same(state2, state2r), "a restored state steps differently"


@pytest.mark.parametrize("name", kinds("server_optimizers"))
def test_server_optimizer_contract(name):
    optimizer_contract(config_of("server_optimizers", name, CASES))


def test_a_kind_without_an_implementation_fails_the_contract():
    with registered_for_now("server_optimizers"):
        @dataclasses.dataclass(frozen=True)
        class Unbuilt(ServerOptimizer):
            """An optimiser nobody implemented."""
            kind = "unbuilt_for_test"

        with pytest.raises(AssertionError, match="no implementation"):
            optimizer_contract(config_of("server_optimizers", "unbuilt_for_test", {}))


def test_a_transform_that_mutates_its_state_fails_the_contract(monkeypatch):
    def trace_in_place(beta):
        def update(g, state, p):
            for k in g:
                state.m[k].mul_(beta).add_(g[k])
            return dict(state.m), state
        return so.Transform(lambda p: so.TraceState(so._zeros(p)), update)

    monkeypatch.setitem(registry_module._IMPLEMENTATIONS, so.cfg.FedAvgM,
                        lambda c: trace_in_place(c.beta))
    with pytest.raises(AssertionError, match="changed its inputs"):
        optimizer_contract(config_of("server_optimizers", "fedavgm", CASES))
