"""The contract every registered aggregation rule must meet, each built from its defaults.

Order of updates does not matter; inputs are never mutated; the same inputs and state
give the same outputs; an empty round does what the rule documents; float64 stays float64;
the payload it sends names the local rule its config declares. The rules are read from
the registry, plug-ins included: the installed ``simfl.plugins`` entry points and the
example scenario ``custom_rule`` are loaded first.
"""

import copy
import dataclasses
import math

import numpy as np
import pytest
import torch

from simfl.algorithms import build_aggregator
from simfl.core.config import FedAvgSWait, load_scenario
from simfl.core.records import Arrival, ClientUpdate, LocalPayload, RoundOutcome
from simfl.core.registry import REGISTRIES
from simfl.plugins import load_plugins

load_plugins()
load_scenario("custom_rule")  # registers the example plug-in aggregator "median"

N_CLIENTS = 4
LOCAL_LR = 0.1
N_SAMPLES = np.array([5, 10, 20, 40])
ROUNDS = [(3, 0, 1, 2), (2, 0), (), (1,), (3, 1)]
#: registered rules from their defaults
NAMES = REGISTRIES["aggregators"].names()

#: What an empty round does once every client has reported once (in round 0, all
#: clients), as a multiple f of that round's mean normalised update: the model moves by
#: -eta_g * local_lr * f * mean_i U_i. 0 means "unchanged".
EMPTY_ROUND_FACTOR = {
    "fedavg": 0.0,        # nothing received, nothing to average
    "fedavg_is": 0.0,
    "fedavg_s": 0.0,
    "fedavg_s_wait": 0.0,  # the group (S = N) reported in round 0 and was applied then
    "scaffold": 0.0,      # neither x nor c moves
    "mifa": 1.0,          # mean of the stored table
    "fedlaavg": 1.0,      # stale G_bar, applied every round
    "fedvarp": 1.0,       # v = ybar
    "fedar": math.sqrt(2.0),  # every tau = 1: psi = 2^0.5 for all, N_t = N
    "fedprox": 0.0,       # FedAvg on the server
    "aircomp": 0.0,       # nothing superposed, nothing to apply
    "cvar": 0.0,          # no relayed pair: neither the model nor t moves
    "median": 0.0,        # the example plug-in (scenarios/custom_rule.py): nothing to take
}


def build(name, dtype=torch.float64):
    if name == "fedavg_s_wait":  # built with its group size S
        agg = build_aggregator(FedAvgSWait(), LOCAL_LR, clients_per_round=N_CLIENTS)
    else:
        agg = build_aggregator(REGISTRIES["aggregators"].get(name)(), LOCAL_LR)
    gen = torch.Generator().manual_seed(0)
    params = {"w": torch.randn(3, 2, generator=gen, dtype=dtype),
              "b": torch.randn(2, generator=gen, dtype=dtype)}
    return agg, params, agg.init(params, N_SAMPLES)


def outcome(r, clients):
    return RoundOutcome(round=r, t_open_s=float(r), t_deadline_s=r + 1.0, t_close_s=r + 1.0,
                        n_available=len(clients), selected=tuple(clients),
                        received=tuple(Arrival(c, r, r + 0.5, int(N_SAMPLES[c]))
                                       for c in clients), missing=())


def updates_for(r, clients, params):
    gen = torch.Generator().manual_seed(100 + r)
    out = []
    for c in clients:
        delta = {k: 0.1 * torch.randn(v.shape, generator=gen, dtype=v.dtype)
                 for k, v in params.items()}
        delta_c = {k: torch.randn(v.shape, generator=gen, dtype=v.dtype) for k, v in params.items()}
        out.append(ClientUpdate(c, r, int(N_SAMPLES[c]), delta, train_loss=0.5,
                                extra={"delta_c": delta_c, "t": 0.5 + 0.1 * c}))
    return out


def rounds(params):
    for r, clients in enumerate(ROUNDS):
        yield outcome(r, clients), updates_for(r, clients, params)


def same(a, b, exact=True):
    """Deep equality of params, states, updates and metrics (allclose when not exact)."""
    if isinstance(a, torch.Tensor):
        if not (isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape
                and a.device == b.device):
            return False
        return torch.equal(a, b) if exact else torch.allclose(a, b, rtol=1e-12, atol=1e-14)
    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
                and (np.array_equal(a, b) if exact else np.allclose(a, b, rtol=1e-12, atol=1e-14)))
    if isinstance(a, dict):
        return (isinstance(b, dict) and list(a) == list(b)
                and all(same(a[k], b[k], exact) for k in a))
    if isinstance(a, (list, tuple)):
        return (type(a) is type(b) and len(a) == len(b)
                and all(same(x, y, exact) for x, y in zip(a, b)))
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(
            same(getattr(a, f.name), getattr(b, f.name), exact) for f in dataclasses.fields(a))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def test_every_rule_declares_its_empty_round():
    built_in = {e.name for e in REGISTRIES["aggregators"] if not e.plugin}
    assert built_in <= set(EMPTY_ROUND_FACTOR) <= set(NAMES), (
        "declare each rule's empty-round behaviour here")


@pytest.mark.parametrize("name", NAMES)
def test_order_of_updates_does_not_matter(name):
    agg, params, state = build(name)
    for out, ups in rounds(params):
        expected = agg.aggregate(state, params, out, ups)
        for shuffled in (ups[::-1], ups[1:] + ups[:1]):
            got = agg.aggregate(state, params, out, shuffled)
            assert same(got, expected, exact=False)
        params, state, _ = expected


@pytest.mark.parametrize("name", NAMES)
def test_inputs_are_never_mutated(name):
    agg, params, state = build(name)
    for out, ups in rounds(params):
        before = copy.deepcopy((state, params, out, ups))
        for c in range(N_CLIENTS):
            agg.client_payload(state, c)
        new_params, new_state, _ = agg.aggregate(state, params, out, ups)
        assert same((state, params, out, ups), before)
        params, state = new_params, new_state


@pytest.mark.parametrize("name", NAMES)
def test_same_inputs_and_state_give_same_outputs(name):
    agg, params, state = build(name)
    twin, _, twin_state = build(name)
    for out, ups in rounds(params):
        first = agg.aggregate(state, params, out, ups)
        assert same(agg.aggregate(state, params, out, ups), first)
        assert same(twin.aggregate(twin_state, params, out, copy.deepcopy(ups)), first)
        for c in range(N_CLIENTS):
            assert same(agg.client_payload(first[1], c), twin.client_payload(first[1], c))
        params, state, _ = first
        twin_state = copy.deepcopy(state)


@pytest.mark.parametrize("name", NAMES)
def test_empty_round_before_anything_arrived_leaves_model_unchanged(name):
    agg, params, state = build(name)
    new, _, _ = agg.aggregate(state, params, outcome(0, ()), [])
    assert same(new, params)


@pytest.mark.parametrize("name", NAMES)
def test_empty_round_after_everyone_reported(name):
    agg, params, state = build(name)
    everyone = tuple(range(N_CLIENTS))
    ups = updates_for(0, everyone, params)
    params, state, _ = agg.aggregate(state, params, outcome(0, everyone), ups)
    new, new_state, _ = agg.aggregate(state, params, outcome(1, ()), [])
    if name not in EMPTY_ROUND_FACTOR:
        pytest.skip(f"plug-in {name!r}: its empty-round behaviour is not declared here")
    factor = EMPTY_ROUND_FACTOR[name]
    if factor == 0.0:
        assert same(new, params) and same(new_state, state)
        return
    for k, v in params.items():
        mean_u = -torch.stack([u.delta[k] for u in ups]).mean(dim=0) / LOCAL_LR
        assert torch.allclose(new[k], v - LOCAL_LR * factor * mean_u, rtol=0, atol=1e-12)


def tensors(tree):
    if isinstance(tree, torch.Tensor):
        yield tree
    elif isinstance(tree, dict):
        for v in tree.values():
            yield from tensors(v)
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            yield from tensors(v)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_dtype_is_preserved(name, dtype):
    agg, params, state = build(name, dtype)
    for out, ups in rounds(params):
        params, state, metrics = agg.aggregate(state, params, out, ups)
        assert all(v.dtype == dtype for v in params.values())
        assert all(t.dtype == dtype for t in tensors(state) if t.is_floating_point())
        assert all(isinstance(v, float) for v in metrics.values())


@pytest.mark.parametrize("name", NAMES)
def test_every_rule_reports_the_updates_it_used_and_whether_it_stepped(name):
    """The round loop records ``n_aggregated`` as aggregated_updates (checked against the
    executor's count) and warns when no round ever ``stepped``: both must be true."""
    agg, params, state = build(name)
    for out, ups in rounds(params):
        new, state, metrics = agg.aggregate(state, params, out, ups)
        assert metrics["n_aggregated"] == len(ups)
        moved = any(not torch.equal(new[k], params[k]) for k in params)
        assert metrics["stepped"] == float(moved)
        params = new


@pytest.mark.parametrize("name", NAMES)
def test_payload_names_the_declared_local_rule(name):
    agg, params, state = build(name)
    config = REGISTRIES["aggregators"].get(name)()
    for out, ups in rounds(params):
        for c in range(N_CLIENTS):
            payload = agg.client_payload(state, c)
            assert payload is None or isinstance(payload, LocalPayload)
            assert (payload.kind if payload is not None else "sgd") == config.local_rule
        params, state, _ = agg.aggregate(state, params, out, ups)
    assert config.local_rule in REGISTRIES["local_rules"]
