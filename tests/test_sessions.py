"""Sessions and warm starts (docs/algorithms.md §3): schedule, membership, label groups,
the four initialisers, distillation, and session-wise evaluation in a real run."""

import csv

import numpy as np
import pytest
import torch

import simfl
from simfl.algorithms.session_init import (SessionInitialiser, blend, gradient_distances,
                                       similarity_weights)
from simfl.core.config import (AllAvailable, Population, Sessions, apply_overrides,
                               parse_override)
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree
from simfl.sim.availability.rounds import AlwaysOnline, BernoulliOnline
from simfl.sim.availability.session_membership import SessionOnline

T = lambda *v: torch.tensor(v, dtype=torch.float64)  # noqa: E731


# --- the worked example of docs/algorithms.md §3 ---------------------------------------------

def test_similarity_worked_example_one_tensor():
    past = [{"w.weight": T(1, 0)}, {"w.weight": T(0, 1)}]
    now = {"w.weight": T(0.6, 0.8)}
    assert gradient_distances(past, now) == pytest.approx([0.89442719, 0.63245553], abs=1e-6)
    weights = similarity_weights(past, now, 10.0)
    assert weights == pytest.approx([0.06788022, 0.93211978], abs=1e-6)
    start = blend([{"w.weight": T(0, 0)}, {"w.weight": T(1, 2)}], weights)
    assert start["w.weight"].tolist() == pytest.approx([0.93211978, 1.86423955], abs=1e-6)


def test_similarity_worked_example_two_tensors_ignores_bias():
    past = [{"a.weight": T(1, 0), "b.weight": T(0, 0, 3), "a.bias": T(5, 0)},
            {"a.weight": T(0, 1), "b.weight": T(3, 0, 0), "a.bias": T(0, -7)}]
    now = {"a.weight": T(0.6, 0.8), "b.weight": T(1, 0, 0), "a.bias": T(1, 1)}
    assert gradient_distances(past, now) == pytest.approx([1.15432038, 0.31622777], abs=1e-6)
    assert similarity_weights(past, now, 10.0) == pytest.approx([2.29145e-4, 0.99977085],
                                                                abs=1e-6)


# --- configuration and schedule ----------------------------------------------------------

def test_label_sets_with_and_without_overlap():
    assert Sessions(groups=2).label_sets(10) == [(0, 1, 2, 3, 4), (5, 6, 7, 8, 9)]
    assert Sessions(groups=2, label_overlap=2).label_sets(10) == [(0, 1, 2, 3, 4, 5),
                                                                   (4, 5, 6, 7, 8, 9)]
    three = Sessions(groups=3, label_overlap=1).label_sets(10)
    assert three == [(0, 1, 2, 3), (3, 4, 5, 6), (6, 7, 8, 9)]
    with pytest.raises(ConfigError, match="label_overlap"):
        Sessions(groups=2, label_overlap=9).label_sets(10)


def test_ab_schedule_by_rounds_and_by_time():
    ab = Sessions(groups=2, rounds_per_session=3)
    assert [ab.group_of(ab.session_at(r, 0.0)) for r in range(10)] == [0, 0, 0, 1, 1, 1, 0, 0, 0, 1]
    timed = Sessions(groups=3, session_s=100.0, order=(2, 0))
    assert [timed.session_at(0, t) for t in (0.0, 99.9, 100.0, 250.0)] == [0, 0, 1, 2]
    assert [timed.group_of(s) for s in range(4)] == [2, 0, 2, 0]
    assert Sessions(groups=2).client_groups(5).tolist() == [0, 0, 0, 1, 1]


@pytest.mark.parametrize("table, field", [
    ({"init": "similarity"}, "pilot_sessions"),
    ({"order": [0, 2]}, "order"),
    ({"rounds_per_session": 0}, "rounds_per_session"),
    ({"init": {"kind": "nope"}}, "kind"),
])
def test_bad_sessions_name_the_field(table, field):
    with pytest.raises(ConfigError) as err:
        Population(sessions=table)
    assert field in str(err.value)


def test_sessions_default_off_and_settable_from_the_command_line(tiny_scenario):
    assert Population().sessions is None
    s = apply_overrides(tiny_scenario, [parse_override("population.sessions={}"),
                                        parse_override("population.sessions.session_s=50")])
    assert s.population.sessions.session_s == 50 and s.population.sessions.rounds_per_session is None


# --- membership over time ------------------------------------------------------------------

def test_membership_restricts_any_availability_model():
    rngs = RngTree(5)
    cfg = Sessions(groups=2, rounds_per_session=2)
    inner = BernoulliOnline(simfl.Bernoulli(p=0.5), 8, rngs)
    online = SessionOnline(BernoulliOnline(simfl.Bernoulli(p=0.5), 8, rngs), cfg, 8)
    for r in range(8):
        group = (r // 2) % 2
        members = np.arange(8) // 4 == group
        assert (online.online(r, 0.0) == (inner.online(r, 0.0) & members)).all()
    always = SessionOnline(AlwaysOnline(None, 6, rngs), Sessions(groups=3, session_s=10.0), 6)
    assert np.flatnonzero(always.online(0, 25.0)).tolist() == [4, 5]


# --- initialisers --------------------------------------------------------------------------

def _run_sessions(rule, finals, gammas=None, pilot=1):
    """Drive an initialiser through sessions whose final models are ``finals``.

    The fake gradient rounds return pilot + gammas[session]; returns each session's start.
    """
    init = SessionInitialiser(Sessions(pilot_sessions=pilot, init=rule))
    calls = []

    def rounds(start, session):
        calls.append((session, start["w.weight"].tolist()))
        return {"w.weight": start["w.weight"] + gammas[session]}

    state = init.init({"w.weight": T(9, 9)})
    starts, params = [], state.initial
    for s, final in enumerate(finals):
        params, state = init.start(state, s, params, rounds)
        starts.append(params["w.weight"].tolist())
        params = {"w.weight": T(*final)}
    return starts, state, calls


def test_previous_continues_but_restarts_at_the_first_application_session():
    starts, _, _ = _run_sessions("previous", [(1, 1), (2, 2), (3, 3), (4, 4)])
    assert starts == [[9, 9], [9, 9], [2, 2], [3, 3]]


def test_average_blends_only_application_sessions():
    starts, _, _ = _run_sessions("average", [(1, 1), (2, 2), (4, 6), (0, 0)])
    assert starts == [[9, 9], [9, 9], [2, 2], [3, 4]]


def test_similarity_initialiser_reproduces_the_worked_example():
    gammas = {1: T(1, 0), 2: T(0, 1), 3: T(0.6, 0.8)}
    starts, state, calls = _run_sessions("similarity", [(4, 2), (0, 0), (1, 2), (7, 7)], gammas)
    assert starts[:3] == [[9, 9], [9, 9], [0, 0]]
    assert starts[3] == pytest.approx([0.93211978, 1.86423955], abs=1e-6)
    assert state.weights == pytest.approx([0.06788022, 0.93211978], abs=1e-6)
    # gradient rounds start from the pilot model (mean of the pilot sessions' models)
    assert calls == [(1, [4, 2]), (2, [4, 2]), (3, [4, 2])]


def test_continuous_teaches_with_the_last_sessions_model():
    init = SessionInitialiser(Sessions(pilot_sessions=0, init="continuous"))
    state = init.init({"w.weight": T(0, 0)})
    params, state = init.start(state, 0, state.initial, None)
    assert state.teacher is None
    params, state = init.start(state, 1, {"w.weight": T(3, 4)}, None)
    assert params["w.weight"].tolist() == [3, 4] and state.teacher["w.weight"].tolist() == [3, 4]


# --- training side -------------------------------------------------------------------------

def test_label_groups_partition_keeps_each_group_on_its_labels():
    from simfl.train.label_groups import split_label_groups

    y = np.repeat(np.arange(10), 30)
    cfg = Sessions(groups=2, label_overlap=2)
    parts = split_label_groups(simfl.Dirichlet(alpha=0.5), y, cfg, 8, 10, RngTree(0))
    sets = cfg.label_sets(10)
    for client, part in enumerate(parts):
        assert set(y[part]) <= set(sets[client // 4])
    everything = np.concatenate(parts)
    assert len(everything) == len(np.unique(everything)) == len(y)  # no sample twice, none lost


def test_gradient_rounds_average_by_data_size():
    from simfl.core.records import ClientUpdate
    from simfl.train.session_training import gradient_rounds

    class Fake:
        def submit(self, jobs, versions):
            assert all(j.round < 0 for j in jobs)
            return [ClientUpdate(j.client, -1, 0, {"w": torch.tensor([float(j.client)])})
                    for j in jobs]

    out = gradient_rounds(Fake(), {"w": torch.tensor([1.0])}, np.array([1, 3]),
                          np.array([0, 10, 0, 30]), 2, first_id=-1)
    assert out["w"].item() == pytest.approx(1 + 2 * (0.25 * 1 + 0.75 * 3))


def test_distillation_with_zero_weight_is_plain_sgd_and_pulls_towards_the_teacher():
    from simfl.train.distill import distillation
    from simfl.train.local import cross_entropy, sgd
    from simfl.train.models import DenseNet

    gen = torch.Generator().manual_seed(0)
    net = DenseNet((4, 3))
    start, teacher = net.init(gen), net.init(gen)
    x, y = torch.randn(20, 4, generator=gen), torch.randint(0, 3, (20,), generator=gen)
    plan = [np.arange(i, i + 5) for i in range(0, 20, 5)]
    plain = sgd(net, start, x, y, plan, 0.1, 0.0)[0]
    zero = sgd(net, start, x, y, plan, 0.1, 0.0, None, cross_entropy,
               distillation(net, teacher, 0.0))[0]
    for name in start:
        assert torch.allclose(plain[name], zero[name], atol=1e-6)

    def kl(p):
        target = torch.softmax(net.forward(teacher, x), -1)
        return torch.nn.functional.kl_div(torch.log_softmax(net.forward(p, x), -1), target,
                                          reduction="batchmean").item()

    strong = sgd(net, start, x, y, plan, 0.01, 0.0, None, cross_entropy,
                 distillation(net, teacher, 50.0))[0]
    assert kl(strong) < 0.5 * kl(start)


# --- a real run --------------------------------------------------------------------------

def _rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("kind", ["similarity", "continuous"])
def test_run_switches_groups_and_evaluation_labels(tiny_scenario, tmp_path, kind):
    overrides = [parse_override(p) for p in (
        "population.availability.kind=always", "server.sampler.kind=all_available",
        "server.deadline_s=1000", "run.rounds=6")]
    sessions = {"rounds_per_session": 2, "pilot_sessions": 1, "init": kind}
    scenario = apply_overrides(tiny_scenario, overrides + [("population.sessions", sessions)])
    assert isinstance(scenario.server.sampler, AllAvailable)
    result = simfl.run(scenario, tmp_path / kind)
    for outcome in result.outcomes:
        group = (outcome.round // 2) % 2
        assert outcome.n_available == 6
        assert {c // 6 for c in outcome.selected} == {group}
    evals = _rows(result.out_dir / "evals.csv")
    assert [int(e["session"]) for e in evals] == [0, 0, 0, 1, 1, 2, 2]
    assert result.summary["trained_updates"] == result.summary["aggregated_updates"] > 0

    # the scores are those of the session's labels only: a model that always answers 0
    from simfl.train.data import build_data
    from simfl.train.models import DenseNet
    from simfl.train.session_training import SessionEvaluator

    data = build_data(scenario.task, RngTree(scenario.seed), scenario.population.sessions)
    evaluate = SessionEvaluator(DenseNet((64, 10)), data.x_test, data.y_test, torch.device("cpu"))
    zero = {"layer0.weight": torch.zeros(10, 64), "layer0.bias": torch.eye(10)[0]}
    low, high = scenario.population.sessions.label_sets(10)
    assert evaluate(zero, low)[0] == pytest.approx(np.mean(data.y_test[data.y_test < 5] == 0))
    assert evaluate(zero, high)[0] == 0.0
    # the last evaluation (session 2, group A) scored the final model on A's labels only
    assert float(evals[-1]["accuracy"]) == pytest.approx(evaluate(result.params, low)[0], abs=1e-6)
    assert float(evals[-1]["accuracy"]) != pytest.approx(evaluate(result.params, None)[0], abs=1e-6)
