"""The worked examples of docs/algorithms.md §1.1-§1.6 and §5, reproduced exactly.

Client sides are computed here with plain tensor arithmetic; the aggregators only see
the resulting ``ClientUpdate`` objects. Parameters are one vector ``{"w": ...}``.
"""

import math

import numpy as np
import pytest
import torch
from conftest import outcome, vec

from simfl.algorithms import build_aggregator
from simfl.algorithms.fedar import rectification_weights
from simfl.core.config.server import (FedAR, FedAvgIS, FedAvgSWait, FedLaAvg, FedVARP, Mifa,
                                      Scaffold)
from simfl.core.errors import ConfigError
from simfl.core.records import ClientUpdate, CVaRPayload

TOL = 1e-6


def update(client, delta, r=0, n_samples=10, **extra):
    return ClientUpdate(client=client, base_round=r, n_samples=n_samples, delta={"w": delta},
                        extra=extra)


def from_normalised(client, u, local_lr, r=0):
    """The update of a client whose normalised update (w - y) / lr is ``u``."""
    return update(client, -local_lr * u, r)


def run_round(agg, state, params, r, updates):
    return agg.aggregate(state, params, outcome(r, [u.client for u in updates]), updates)


def close(actual, expected):
    return torch.allclose(actual, torch.as_tensor(expected, dtype=actual.dtype), atol=TOL, rtol=0)


# ---------------------------------------------------------------- §1.1 FedAR

def test_fedar_cap_check():
    psi = rectification_weights(np.arange(6), np.ones(6, bool), 0.5, None, 2.0)
    assert np.allclose(psi, [1, 1.41421356, 1.73205081, 2, 2, 2], atol=TOL)
    assert np.allclose(rectification_weights(np.arange(6), np.ones(6, bool), 0.5, 3, 2.0),
                       [1, 1.41421356, 1.73205081, 2, 0, 0], atol=TOL)


def test_fedar_worked_example():
    # G_3 = (4,4) arrives in round 0, G_2 = (0,2) in round 4, G_1 = (1,0) in round 5:
    # in round 5 tau = (0, 1, 5). Clients are 0-based here.
    lr = 0.1
    agg = build_aggregator(FedAR(rho=0.5, cutoff_rounds=3), lr)
    w = {"w": vec(0, 0)}
    state = agg.init(w, np.full(3, 10))
    _, state, _ = run_round(agg, state, w, 0, [from_normalised(2, vec(4, 4), lr)])
    for r in (1, 2, 3):
        _, state, _ = run_round(agg, state, w, r, [])
    _, state, _ = run_round(agg, state, w, 4, [from_normalised(1, vec(0, 2), lr, r=4)])
    new, state, metrics = run_round(agg, state, w, 5, [from_normalised(0, vec(1, 0), lr, r=5)])
    assert close(new["w"], [-0.05, -0.14142136])
    assert metrics["n_contributing"] == 2
    assert list(5 - state["last_round"]) == [0, 1, 5]


def test_fedar_nothing_contributing_leaves_model_unchanged():
    agg = build_aggregator(FedAR(cutoff_rounds=1), 0.1)
    w = {"w": vec(1, 2)}
    state = agg.init(w, np.full(2, 10))
    new, state, _ = run_round(agg, state, w, 0, [])
    assert new["w"].equal(w["w"])
    _, state, _ = run_round(agg, state, w, 1, [from_normalised(0, vec(1, 1), 0.1, r=1)])
    new, state, _ = run_round(agg, state, w, 3, [])   # tau = 2 > cutoff 1
    assert new["w"].equal(w["w"])


def test_fedar_with_zero_cutoff_is_fedavg_of_received():
    lr = 0.1
    agg = build_aggregator(FedAR(cutoff_rounds=0), lr)
    w = {"w": vec(0, 0)}
    state = agg.init(w, np.full(3, 10))
    _, state, _ = run_round(agg, state, w, 0, [from_normalised(2, vec(9, 9), lr)])
    new, _, _ = run_round(agg, state, w, 1, [from_normalised(0, vec(1, 0), lr, r=1),
                                             from_normalised(1, vec(0, 2), lr, r=1)])
    assert close(new["w"], [-0.05, -0.1])


def test_fedar_counts_staleness_from_the_base_round():
    # an update computed on the model of round 2 and received in round 4 enters with tau = 2
    lr = 0.1
    agg = build_aggregator(FedAR(rho=0.5, cutoff_rounds=None), lr)
    w = {"w": vec(0, 0)}
    state = agg.init(w, np.full(2, 10))
    new, state, _ = run_round(agg, state, w, 4, [from_normalised(1, vec(0, 2), lr, r=2)])
    assert list(state["last_round"]) == [-1, 2]
    assert close(new["w"], [0, -0.1 * math.sqrt(3) * 2])


def test_fedar_stores_a_late_update_only_when_newer_than_the_stored_one():
    # round 3: client 0 on time, G_0 = (1, 0). Round 5: two late updates land, client 0's
    # from round 2 (older than its stored one: ignored) and client 1's from round 4,
    # G_1 = (0, 2), stored with tau_1 = 1. psi = (sqrt 3, sqrt 2), N_t = 2,
    # w_6 = -0.1 / 2 * (sqrt 3, 2 sqrt 2) = (-0.08660254, -0.14142136).
    lr = 0.1
    agg = build_aggregator(FedAR(rho=0.5, cutoff_rounds=None, late_policy="store"), lr)
    w = {"w": vec(0, 0)}
    state = agg.init(w, np.full(2, 10))
    _, state, _ = run_round(agg, state, w, 3, [from_normalised(0, vec(1, 0), lr, r=3)])
    late = [from_normalised(0, vec(9, 9), lr, r=2), from_normalised(1, vec(0, 2), lr, r=4)]
    new, state, metrics = run_round(agg, state, w, 5, late)
    assert list(state["last_round"]) == [3, 4]
    assert close(state["table"]["w"][0], [1, 0]) and close(state["table"]["w"][1], [0, 2])
    assert close(new["w"], [-0.08660254, -0.14142136])
    assert metrics["n_late_stored"] == 1 and metrics["n_received"] == 0


def test_fedar_with_rho_zero_equals_mifa_once_all_seen():
    rng = np.random.default_rng(7)
    n, lr = 5, 0.05
    fedar = build_aggregator(FedAR(rho=0.0, cutoff_rounds=None), lr)
    mifa = build_aggregator(Mifa(init="zeros"), lr)
    w = {"a": torch.zeros(3, dtype=torch.float64), "b": torch.zeros(2, 2, dtype=torch.float64)}
    s_ar, s_mifa = fedar.init(w, np.full(n, 10)), mifa.init(w, np.full(n, 10))
    seen, compared = set(), 0
    for r in range(40):
        clients = [int(c) for c in np.flatnonzero(rng.random(n) < 0.3)]
        ups = [ClientUpdate(c, r, 10, {k: torch.as_tensor(rng.normal(size=v.shape))
                                       for k, v in w.items()}) for c in clients]
        w_ar, s_ar, _ = run_round(fedar, s_ar, w, r, ups)
        w_mifa, s_mifa, _ = run_round(mifa, s_mifa, w, r, ups)
        seen.update(clients)
        if len(seen) == n:
            compared += 1
            for k in w:
                assert torch.allclose(w_ar[k], w_mifa[k], atol=1e-12, rtol=0)
        w = w_ar
    assert compared > 10


# ---------------------------------------------------------------- §1.2 MIFA

@pytest.mark.parametrize("init", ["zeros", "wait_for_all"])
def test_mifa_worked_example(init):
    lr = 0.1
    agg = build_aggregator(Mifa(init=init), lr)
    w = {"w": vec(0, 0)}
    state = agg.init(w, np.full(3, 10))
    ups = [from_normalised(i, g, lr) for i, g in enumerate([vec(1, 0), vec(0, 2), vec(4, 4)])]
    new, state, _ = run_round(agg, state, w, 0, ups)
    assert close(new["w"], [-0.16666667, -0.2])
    # an empty round moves the model along the stale table
    again, _, _ = run_round(agg, state, w, 1, [])
    assert close(again["w"], [-0.16666667, -0.2])


def test_mifa_wait_for_all_holds_the_model_until_the_table_is_full():
    lr = 0.1
    w = {"w": vec(0, 0)}
    waiting = build_aggregator(Mifa(init="wait_for_all"), lr)
    no_wait = build_aggregator(Mifa(init="zeros"), lr)
    state, s0 = waiting.init(w, np.full(3, 10)), no_wait.init(w, np.full(3, 10))
    new, state, _ = run_round(waiting, state, w, 0, [from_normalised(0, vec(1, 0), lr)])
    assert new is w
    moved, _, _ = run_round(no_wait, s0, w, 0, [from_normalised(0, vec(1, 0), lr)])
    assert close(moved["w"], [-0.1 / 3, 0])
    new, state, _ = run_round(waiting, state, w, 1, [])
    assert new is w
    new, state, _ = run_round(waiting, state, w, 2, [from_normalised(1, vec(0, 2), lr),
                                                     from_normalised(2, vec(4, 4), lr)])
    assert close(new["w"], [-0.16666667, -0.2])


# ---------------------------------------------------------------- §1.3 FedAvg-IS

def test_fedavg_is_worked_example():
    agg = build_aggregator(FedAvgIS(p=(0.5, 0.2, 0.25)), 0.1)
    w = {"w": vec(0, 0)}
    state = agg.init(w, np.full(3, 10))
    new, _, _ = run_round(agg, state, w, 0, [update(0, vec(0.2, 0)), update(2, vec(0, 0.1))])
    assert close(new["w"], [0.13333333, 0.13333333])
    same, _, _ = run_round(agg, state, w, 1, [])
    assert same["w"].equal(w["w"])


def test_fedavg_is_checks_the_length_of_p():
    agg = build_aggregator(FedAvgIS(p=(0.5, 0.2)), 0.1)
    with pytest.raises(ConfigError, match="one per client"):
        agg.init({"w": vec(0)}, np.full(3, 10))


# ---------------------------------------------------------------- §1.4 FedAvg with S clients

@pytest.mark.parametrize("weighting, expected", [("uniform", [2.0, 2.0]), ("data", [2.0, 2.5])])
def test_fedavg_s_wait_holds_the_model_until_the_group_is_in(weighting, expected):
    """S = 3 of N = 4: client 1 reports in round 0, nobody in round 1, clients 0 and 2 in
    round 2. The model is frozen until then; w_3 = w + (1/S) sum_i (y_i - w) (uniform) or
    with weights n_i / sum n_j, n = (20, 10, 30): (10 (3,0) + 20 (0,3) + 30 (3,3)) / 60."""
    agg = build_aggregator(FedAvgSWait(weighting=weighting), 0.1, clients_per_round=3)
    w = {"w": vec(0.0, 0.0)}
    state = agg.init(w, np.full(4, 10))
    sizes = {0: 20, 1: 10, 2: 30, 3: 10}
    rounds = [[(1, vec(3.0, 0.0))], [], [(0, vec(0.0, 3.0)), (2, vec(3.0, 3.0))]]
    for r, ups in enumerate(rounds):
        ups = [update(c, d, r, n_samples=sizes[c]) for c, d in ups]
        new, state, metrics = run_round(agg, state, w, r, ups)
        if r < 2:
            assert new is w and metrics["n_buffered"] == 1.0
    assert close(new["w"], expected) and metrics["n_buffered"] == 3.0
    assert state["count"] == 0 and float(state["sum"]["w"].abs().sum()) == 0.0
    # the next group starts from an empty buffer
    after, _, _ = run_round(agg, state, new, 3, [update(3, vec(9.0, 9.0), 3)])
    assert after is new


def test_fedavg_s_wait_needs_the_wait_group_sampler():
    from simfl.core.config import Server, Uniform, WaitGroup

    with pytest.raises(ConfigError, match="sampler.kind"):
        Server(algorithm=FedAvgSWait(), sampler=Uniform())
    with pytest.raises(ConfigError, match="min_updates"):
        Server(algorithm=FedAvgSWait(), sampler=WaitGroup(), min_updates=1)
    Server(algorithm=FedAvgSWait(), sampler=WaitGroup())


# ---------------------------------------------------------------- §1.5 FedVARP

def test_fedvarp_worked_example():
    lr = 0.1
    agg = build_aggregator(FedVARP(), lr)
    w = {"w": vec(0, 0)}
    state = agg.init(w, np.full(3, 10))
    fill = [from_normalised(i, g, lr) for i, g in enumerate([vec(1, 0), vec(0, 2), vec(4, 4)])]
    _, state, _ = run_round(agg, state, w, 0, fill)
    assert close(state["table"]["w"].mean(dim=0), [1.6666667, 2])
    new, state, _ = run_round(agg, state, w, 1, [from_normalised(1, vec(2, 2), lr)])
    assert close(new["w"], [-0.36666667, -0.2])
    assert close(state["table"]["w"].mean(dim=0), [2.3333333, 2])
    # an empty round steps along the memory: v = ybar
    again, _, _ = run_round(agg, state, w, 2, [])
    assert close(again["w"], [-0.23333333, -0.2])


# ---------------------------------------------------------------- §1.6 SCAFFOLD

def test_scaffold_two_rounds_of_the_worked_example():
    a, lr, k = (0.0, 4.0), 0.1, 2
    agg = build_aggregator(Scaffold(), lr)
    params = {"w": vec(1.0)}
    state = agg.init(params, np.full(2, 10))

    def client(i, x, payload):
        c, c_i = payload["c"]["w"], payload["c_i"]["w"]
        y = x.clone()
        for _ in range(k):
            y = y - lr * ((y - a[i]) - c_i + c)
        c_plus = c_i - c + (x - y) / (k * lr)
        return ClientUpdate(i, 0, 10, {"w": y - x}, extra={"delta_c": {"w": c_plus - c_i}})

    ups = [client(i, params["w"], agg.client_payload(state, i)) for i in (0, 1)]
    assert close(ups[0].delta["w"], [-0.19]) and close(ups[1].delta["w"], [0.57])
    params, state, _ = run_round(agg, state, params, 0, ups)
    assert close(params["w"], [1.19]) and close(state["c"]["w"], [-0.95])
    assert close(state["c_i"]["w"][:, 0], [0.95, -2.85])

    ups = [client(i, params["w"], agg.client_payload(state, i)) for i in (0, 1)]
    params, state, _ = run_round(agg, state, params, 1, ups)
    assert close(params["w"], [1.3439]) and close(state["c"]["w"], [-0.7695])
    assert close(state["c_i"]["w"][:, 0], [1.2255, -2.7645])
    payload = agg.client_payload(state, 1)
    assert close(payload["c"]["w"], [-0.7695]) and close(payload["c_i"]["w"], [-2.7645])


# ---------------------------------------------------------------- §5 FedLaAvg

def fedlaavg_round(agg, state, x, r, clients, e, gamma):
    """Clients take one exact gradient step on f_i(x) = (x - e_i)^2 from x."""
    ups = [update(i, -gamma * 2 * (x["w"] - e[i]), r) for i in clients]
    return run_round(agg, state, x, r, ups)


def test_fedlaavg_selection_trace():
    e, gamma = (0.0, 1.0, 2.0, 3.0), 0.1
    agg = build_aggregator(FedLaAvg(), gamma)
    x = {"w": vec(0.0)}
    state = agg.init(x, np.full(4, 10))
    trace = []
    for r, picked in enumerate([(0, 1), (2, 3), (0, 3), ()]):
        x, state, _ = fedlaavg_round(agg, state, x, r, picked, e, gamma)
        trace.append(float(x["w"]))
    assert np.allclose(trace, [0.05, 0.345, 0.608, 0.871], atol=TOL, rtol=0)
    assert close(state["table"]["w"][:, 0], [0.69, -2, -3.9, -5.31])


def test_fedlaavg_example_1_first_iterates():
    e, gamma = (0.0, 1.0), 0.1
    agg = build_aggregator(FedLaAvg(), gamma)
    x = {"w": vec(0.0)}
    state = agg.init(x, np.full(2, 10))
    trace = []
    for r in range(8):
        x, state, _ = fedlaavg_round(agg, state, x, r, [0] if r % 4 == 0 else [1], e, gamma)
        trace.append(float(x["w"]))
    expected = [0.0, 0.1, 0.19, 0.271, 0.3249, 0.36531, 0.401679, 0.4344111]
    assert np.allclose(trace, expected, atol=TOL, rtol=0)


def test_fedlaavg_warmup_and_loss_scale_payload():
    agg = build_aggregator(FedLaAvg(warmup_rounds=1, loss_scaling=True), 0.1)
    x = {"w": vec(0.0)}
    state = agg.init(x, np.array([10, 30]))
    assert agg.client_payload(state, 0) == {"loss_scale": 0.5}
    assert math.isclose(agg.client_payload(state, 1)["loss_scale"], 1.5)
    new, state, _ = run_round(agg, state, x, 0, [update(0, vec(-0.2))])
    assert new is x
    new, _, _ = run_round(agg, state, x, 1, [])
    assert close(new["w"], [-0.1])
    assert build_aggregator(FedLaAvg(), 0.1).client_payload(state, 0) is None


# ---------------------------------------------------------------- §2 CVaR (risk-aware, RAM)

def test_cvar_objective_worked_example():
    from simfl.algorithms.cvar import cvar

    p, losses = (0.5, 0.4, 0.1), (0.1, 0.2, 2.0)
    assert cvar(losses, p, 1.0) == pytest.approx(0.33, abs=TOL)
    assert cvar(losses, p, 0.3) == pytest.approx(0.8, abs=TOL)
    assert cvar(losses, p, 0.1) == pytest.approx(2.0, abs=TOL)
    mean = float(np.dot(p, losses))
    assert 0.3 * mean + 0.7 * cvar(losses, p, 0.3) == pytest.approx(0.659, abs=TOL)


def test_cvar_server_adopts_the_relayed_pair_and_averages_several():
    from simfl.core.config.server import CVaR

    agg = build_aggregator(CVaR(alpha=0.3, lam=0.3, lr_t=0.01, t0=0.25), 0.1)
    w = {"w": vec(1.0, 2.0)}
    state = agg.init(w, np.full(3, 10))
    assert agg.client_payload(state, 2) == CVaRPayload(t=0.25, alpha=0.3, lam=0.3, lr_t=0.01)
    # one user through the relay: its pair replaces the server's
    new, state, _ = run_round(agg, state, w, 0, [update(1, vec(0.5, -1.0), t=0.4)])
    assert close(new["w"], [1.5, 1.0]) and state["t"] == pytest.approx(0.4)
    # two users: their pairs are averaged
    new, state, _ = run_round(agg, state, new, 1, [update(2, vec(1.0, 0.0), t=0.2),
                                                    update(0, vec(0.0, 2.0), t=0.6)])
    assert close(new["w"], [2.0, 2.0]) and state["t"] == pytest.approx(0.4)
    # nobody through: nothing changes
    same, same_state, _ = run_round(agg, state, new, 2, [])
    assert same is new and same_state == state


def test_fedprox_is_fedavg_with_mu_in_the_payload():
    from simfl.core.config.server import FedAvg, FedProx

    prox = build_aggregator(FedProx(mu=0.7, weighting="uniform"), 0.1)
    plain = build_aggregator(FedAvg(weighting="uniform"), 0.1)
    w = {"w": vec(1.0, 2.0)}
    ups = [update(0, vec(0.2, 0.0)), update(2, vec(0.0, -0.4))]
    assert prox.client_payload(prox.init(w, np.full(3, 10)), 1) == {"mu": 0.7}
    assert close(run_round(prox, None, w, 0, ups)[0]["w"], run_round(plain, None, w, 0, ups)[0]["w"])
    assert close(run_round(prox, None, w, 0, ups)[0]["w"], [1.1, 1.8])
    assert FedProx().local_rule == "prox" and FedAvg().local_rule == "sgd"
    with pytest.raises(ConfigError, match="mu"):
        FedProx(mu=-1.0)


def test_scaffold_two_rounds_through_the_local_rule_and_both_executors():
    """§1.6 again, with the client side computed by the executors' ``scaffold`` rule on
    the quadratic task f_i(x) = (1/2)(x - a_i)^2 (x is the model's bias)."""
    from simfl.core.config import Logreg, Native, Quadratic, Task
    from simfl.core.records import TrainJob
    from simfl.core.rng import RngTree
    from simfl.train.batched import BatchedExecutor
    from simfl.train.data import build_data
    from simfl.train.executor import InlineExecutor
    from simfl.train.models import build_model

    task = Task(dataset=Quadratic(targets=(0.0, 4.0), curvature=1.0, samples_per_client=5),
                partition=Native(), model=Logreg(), n_clients=2, batch_size=4, local_steps=2,
                lr=0.1)
    rngs = RngTree(0)
    data = build_data(task, rngs)
    net = build_model(task.model, data.n_features, data.n_classes)
    for executor in (InlineExecutor, BatchedExecutor):
        ex = executor(net, data, task, rngs, torch.device("cpu"))
        agg = build_aggregator(Scaffold(), task.lr)
        x = {"layer0.weight": torch.zeros(1, 1), "layer0.bias": torch.ones(1)}
        state = agg.init(x, data.n_samples)
        expected = [(1.19, -0.95, (0.95, -2.85)), (1.3439, -0.7695, (1.2255, -2.7645))]
        for r, (x_r, c_r, ci_r) in enumerate(expected):
            jobs = [TrainJob(i, r, r, agg.client_payload(state, i)) for i in (0, 1)]
            ups = ex.submit(jobs, {r: x})
            x, state, _ = agg.aggregate(state, x, outcome(r, [0, 1]), ups)
            assert close(x["layer0.bias"], [x_r]) and close(state["c"]["layer0.bias"], [c_r])
            assert close(state["c_i"]["layer0.bias"][:, 0], ci_r)
            assert torch.count_nonzero(x["layer0.weight"]) == 0
