"""Client samplers: docs/algorithms.md §4 and §5 worked examples, the 3DG, MD multiplicities,
the loss query, and the contract every registered sampler meets."""

import copy
import itertools
import math

import numpy as np
import pytest
import torch

from conftest import make_sim
from simfl import apply_overrides, run
from simfl.algorithms import build_aggregator, build_sampler
from simfl.algorithms.fedgs import FedGSState, graph_distances, local_search, objective_terms, solve
from simfl.core.config import FedAvg, FedGS, LongestAbsent, Md, PowerOfChoice, parse_override
from simfl.core.protocols import PopulationView
from simfl.core.records import Arrival, ClientUpdate, RoundOutcome
from simfl.core.registry import REGISTRIES
from simfl.core.rng import RngTree

N = 6
N_SAMPLES = np.array([10, 40, 20, 5, 30, 15])
NAMES = REGISTRIES["samplers"].names()


class FakeProbe:
    """A scripted ClientProbe: loss of client c is LOSSES[c]; ``lost`` never answer."""

    LOSSES = np.array([0.5, 2.0, 1.0, 2.0, 0.1, 1.5])

    def __init__(self, lost=()):
        self.lost = set(lost)
        self.asked = []

    def losses(self, round, clients):
        self.asked.append(np.array(clients))
        answered = np.array([c for c in sorted(clients) if c not in self.lost], dtype=np.int64)
        return answered, self.LOSSES[answered]

    def features(self, kind, noise_batch):
        return np.random.default_rng(7).normal(size=(N, 3))


def view(available, round=0):
    return PopulationView(round, 0.0, N, np.asarray(available, dtype=np.int64), N_SAMPLES)


def outcome(r, selected, received=None, multiplicity=()):
    received = selected if received is None else received
    return RoundOutcome(round=r, t_open_s=float(r), t_deadline_s=r + 1.0, t_close_s=r + 1.0,
                        n_available=len(selected), selected=tuple(selected),
                        received=tuple(Arrival(c, r, r + 0.5, int(N_SAMPLES[c])) for c in received),
                        missing=(), multiplicity=multiplicity)


def build(name, probe=None, k=3):
    sampler = build_sampler(REGISTRIES["samplers"].get(name)(), probe or FakeProbe(), RngTree(0), k)
    return sampler, sampler.init(N_SAMPLES)


# --- FedGS (docs/algorithms.md §4.2) ------------------------------------------------------

H_EXAMPLE = np.array([[0, .2, 1, .8], [.2, 0, .9, .1], [1, .9, 0, .3], [.8, .1, .3, 0]])
V_EXAMPLE = np.array([3, 0, 1, 0])


def example_values(alpha):
    """Objective of every 2-subset of the worked example, via the solver's own terms."""
    pairs, linear, factor = objective_terms(H_EXAMPLE, V_EXAMPLE, np.arange(4), 2, alpha)
    return {s: factor * pairs[s[0], s[1]] + linear[list(s)].sum()
            for s in itertools.combinations(range(4), 2)}


def test_fedgs_example_linear_terms():
    _, linear, _ = objective_terms(H_EXAMPLE, V_EXAMPLE, np.arange(4), 2, 0.1)
    assert linear == pytest.approx([-1.3333333, 0.6666667, 0.0, 0.6666667], abs=1e-6)


@pytest.mark.parametrize("alpha, best, value, runner_up, runner_value", [
    (0.1, (1, 3), 1.343333, (1, 2), 0.756667),
    (10.0, (1, 2), 9.666667, (0, 2), 8.666667),
])
@pytest.mark.parametrize("exact_limit", [20000, 1])  # enumeration, then greedy + 1-swap
def test_fedgs_worked_example(alpha, best, value, runner_up, runner_value, exact_limit):
    sampler = build_sampler(FedGS(alpha=alpha, exact_limit=exact_limit), FakeProbe())
    state = FedGSState(H_EXAMPLE, V_EXAMPLE)
    example = PopulationView(1, 0.0, 4, np.arange(4), np.ones(4, dtype=np.int64))
    assert tuple(sampler.select(state, example, 2, np.random.default_rng(0))) == best
    values = example_values(alpha)
    ranked = sorted(values, key=lambda s: -values[s])
    assert ranked[:2] == [best, runner_up]
    assert values[best] == pytest.approx(value, abs=1e-6)
    assert values[runner_up] == pytest.approx(runner_value, abs=1e-6)


def test_fedgs_single_slot_takes_least_sampled_lowest_id():
    counts = np.array([2, 1, 0, 0, 3, 1])
    assert list(solve(np.ones((N, N)), counts, np.array([5, 3, 1, 2]), 1, 0.1, 100, 10)) == [2]


def test_fedgs_local_search_is_one_swap_optimal():
    rng = np.random.default_rng(3)
    for _ in range(20):
        h = rng.random((12, 12))
        h = (h + h.T) / 2
        np.fill_diagonal(h, 0)
        counts = rng.integers(0, 5, 12)
        pairs, linear, factor = objective_terms(h, counts, np.arange(12), 4, 1.0)
        chosen = set(local_search(pairs, linear, factor, 4, 1000).tolist())

        def value(s):
            s = sorted(s)
            return factor * pairs[np.ix_(s, s)].sum() / 2 + linear[s].sum()

        assert len(chosen) == 4
        for i, j in itertools.product(chosen, set(range(12)) - chosen):
            assert value(chosen - {i} | {j}) <= value(chosen) + 1e-12


def test_fedgs_local_search_budget_zero_is_greedy_and_deterministic():
    h = np.abs(np.subtract.outer(np.arange(8.0), np.arange(8.0))) / 7
    first = solve(h, np.zeros(8, dtype=int), np.arange(8), 3, 1.0, 1, 0)
    assert list(first) == list(solve(h, np.zeros(8, dtype=int), np.arange(8), 3, 1.0, 1, 0))
    assert list(first) == [0, 1, 7]  # best pair (0, 7), then the lowest id of the ties


def test_graph_distances_hand_example():
    # cos: s01 = 0, s02 = s12 = 1/sqrt 2 -> normalised 0, 1, 1; edges 0-2, 1-2 of length e^-10
    h = graph_distances(np.array([[1.0, 0], [0, 1], [1, 1]]), 0.01, 0.1)
    assert h == pytest.approx(np.array([[0, 1, .5], [1, 0, .5], [.5, .5, 0]]), abs=1e-9)


def test_graph_distances_negative_similarity_and_missing_client():
    f = np.array([[1.0, 0], [-1, 0], [1, 1], [np.nan, np.nan]])
    h = graph_distances(f, 0.01, 0.1)
    s12 = (-1 / math.sqrt(2) + 1) / (1 / math.sqrt(2) + 1)  # m = -1, M = 1/sqrt 2
    e02, e12 = math.exp(-1 / 0.1), math.exp(-s12 ** 2 / 0.1)
    d01 = e02 + e12  # 0 and 1 (similarity -1, normalised 0) meet through 2
    assert h[0, 1] == pytest.approx(1.0, abs=1e-9)
    assert h[0, 2] == pytest.approx(e02 / d01, abs=1e-9)
    assert h[1, 2] == pytest.approx(e12 / d01, abs=1e-9)
    assert list(h[3]) == [1, 1, 1, 0] and list(h[:, 3]) == [1, 1, 1, 0]


def test_fedgs_counts_invitations():
    sampler, state = build("fedgs")
    new = sampler.observe(state, outcome(0, (1, 4), received=(4,)))
    assert list(new.counts) == [0, 1, 0, 0, 1, 0] and list(state.counts) == [0] * N


# --- longest absent (docs/algorithms.md §5 selection trace) -------------------------------

def test_longest_absent_follows_the_fedlaavg_trace():
    sampler = build_sampler(LongestAbsent())
    state = sampler.init(np.ones(4, dtype=np.int64))
    picks = []
    for r, available in enumerate([(0, 1, 2), (1, 2, 3), (0, 3), ()]):
        v = PopulationView(r, 0.0, 4, np.array(available, dtype=np.int64), np.ones(4))
        chosen = sampler.select(state, v, 2, np.random.default_rng(0))
        picks.append(tuple(chosen))
        state = sampler.observe(state, outcome(r, tuple(chosen)))
    assert picks == [(0, 1), (2, 3), (0, 3), ()]


# --- MD and the multiplicity it carries ----------------------------------------------

def test_md_draws_proportional_to_data_within_available():
    sampler = build_sampler(Md())
    available = np.array([1, 2, 4])
    counts = np.zeros(N)
    reps, k = 4000, 3
    for seed in range(reps):
        draws = sampler.select(None, view(available), k, np.random.default_rng(seed))
        assert len(draws) == k and set(draws) <= set(available)
        np.add.at(counts, draws, 1)
    p = N_SAMPLES[available] / N_SAMPLES[available].sum()
    n_draws = reps * k
    se = np.sqrt(n_draws * p * (1 - p))
    assert np.all(np.abs(counts[available] - n_draws * p) < 4 * se)  # binomial, 4 SE


def test_simulation_invites_repeated_draws_once_with_their_multiplicity():
    sim = make_sim(n_clients=4, compute_s=(1.0,), upload_s=1.0)
    result = sim.run_round(0, lambda v: np.array([3, 1, 3, 3]))
    assert result.selected == (1, 3) and result.multiplicity == (1, 3)
    assert sorted(a.client for a in result.received) == [1, 3]
    assert result.draws(3) == 3 and result.draws(1) == 1


def test_fedavg_multiplicity_weights_by_draws():
    agg = build_aggregator(FedAvg(weighting="multiplicity"), 0.1)
    params = {"w": torch.zeros(2, dtype=torch.float64)}
    ups = [ClientUpdate(c, 0, int(N_SAMPLES[c]), {"w": torch.tensor(d, dtype=torch.float64)})
           for c, d in ((1, [3.0, 0.0]), (3, [0.0, 6.0]))]
    new, _, _ = agg.aggregate(None, params, outcome(0, (1, 3), multiplicity=(1, 2)), ups)
    assert new["w"].tolist() == pytest.approx([1.0, 4.0], abs=1e-6)  # (1*3 + 2*0)/3, (0 + 12)/3


# --- Power-of-Choice -----------------------------------------------------------------

def test_power_of_choice_invites_highest_losses_ties_by_id():
    probe = FakeProbe()
    sampler = build_sampler(PowerOfChoice(), probe)
    chosen = sampler.select(None, view([0, 1, 2, 3, 5]), 3, np.random.default_rng(0))
    assert list(probe.asked[0]) == [0, 1, 2, 3, 5]  # d = null: every available client
    assert list(chosen) == [1, 3, 5]  # losses 2.0, 2.0, 1.5


def test_power_of_choice_skips_lost_answers_and_draws_d_candidates():
    probe = FakeProbe(lost=(1,))
    sampler = build_sampler(PowerOfChoice(d=4), probe)
    chosen = sampler.select(None, view(range(N)), 2, np.random.default_rng(1))
    assert len(probe.asked[0]) == 4 and set(probe.asked[0]) <= set(range(N))
    answered = [c for c in probe.asked[0] if c != 1]
    expected = sorted(sorted(answered, key=lambda c: (-FakeProbe.LOSSES[c], c))[:2])
    assert list(chosen) == expected


def test_power_of_choice_run_counts_queries_apart_from_training(tiny_scenario, tmp_path):
    scenario = apply_overrides(tiny_scenario, [
        parse_override("server.sampler.kind=power_of_choice"), parse_override("run.rounds=2")])
    summary = run(scenario, tmp_path / "poc").summary
    assert summary["trained_updates"] == summary["aggregated_updates"] > 0
    assert summary["queried_losses"] > 0 and summary["query_time_s"] > 0
    assert summary["graph_updates"] == 0


def test_fedgs_run_builds_its_graph_before_round_zero(tiny_scenario, tmp_path):
    scenario = apply_overrides(tiny_scenario, [parse_override("server.sampler.kind=fedgs"),
                                               parse_override("run.rounds=2")])
    result = run(scenario, tmp_path / "fedgs")
    assert 0 < result.summary["graph_updates"] <= 12 and result.summary["queried_losses"] == 0
    assert result.outcomes[0].t_open_s == pytest.approx(result.summary["query_time_s"])
    assert result.summary["trained_updates"] == result.summary["aggregated_updates"] > 0


# --- wait_group: FedAvg waiting for a drawn group (docs/algorithms.md §1.4, fedavg_wait) ----

def test_wait_group_invites_owed_available_members_until_all_reported():
    sampler, state = build("wait_group")  # group 0 of 3 from all 6 clients
    group = sampler.draw(0, N)
    assert list(state.pending) == list(group) and len(set(group)) == 3
    online = [group[0]] + [c for c in range(N) if c not in group]  # one member online
    picks = sampler.select(state, view(online), 3, None)
    assert list(picks) == [group[0]]  # only the owed member that is online
    # it is invited but its update is lost: still owed
    state = sampler.observe(state, outcome(0, (group[0],), received=()))
    assert list(state.pending) == list(group) and state.group == 0
    state = sampler.observe(state, outcome(1, tuple(group[:2]), received=tuple(group[:2])))
    assert list(state.pending) == [group[2]]
    assert list(sampler.select(state, view([c for c in range(N) if c != group[2]]), 3, None)) == []
    done = sampler.observe(state, outcome(2, (group[2],)))
    assert done.group == 1 and list(done.pending) == list(sampler.draw(1, N))
    assert list(state.pending) == [group[2]]  # the old state is untouched


def test_wait_group_draws_groups_uniformly_from_all_clients():
    """Each client is in a group of k = 3 of N = 6 with probability 1/2; 4 SE over 2000 groups."""
    sampler, _ = build("wait_group")
    groups = 2000
    counts = np.zeros(N)
    for g in range(groups):
        members = sampler.draw(g, N)
        assert len(set(members)) == 3
        counts[members] += 1
    se = math.sqrt(groups * 0.25)
    assert np.all(np.abs(counts - groups / 2) < 4 * se)


def test_fedavg_s_wait_run_freezes_the_model_between_groups(tiny_scenario, tmp_path):
    scenario = apply_overrides(tiny_scenario, [parse_override(o) for o in (
        "server.algorithm.kind=fedavg_s_wait",
        "server.sampler.kind=wait_group", "server.deadline_s=100", "run.rounds=12")])
    result = run(scenario, tmp_path / "wait")
    summary = result.summary
    assert summary["trained_updates"] == summary["aggregated_updates"] > 0
    n, s = scenario.task.n_clients, scenario.server.clients_per_round
    groups = build_sampler(scenario.server.sampler, None, RngTree(scenario.seed), s)
    g, owed, moved = 0, set(groups.draw(0, n).tolist()), []
    for o in result.outcomes:  # replay the groups the run must have followed
        assert set(o.selected) <= owed
        if not o.selected and o.n_available:
            assert o.t_close_s - o.t_open_s == pytest.approx(100.0)  # waited for the group
        owed -= {a.client for a in o.received}
        moved.append(not owed)
        if not owed:
            g += 1
            owed = set(groups.draw(g, n).tolist())
    with open(result.out_dir / "evals.csv") as f:
        acc = [float(row.split(",")[2]) for row in f.read().splitlines()[1:]]
    assert g >= 2 and len(acc) == len(moved) + 1
    for r, group_done in enumerate(moved):  # frozen until a group completes
        assert group_done or acc[r + 1] == acc[r]
    assert acc[-1] != acc[0]


# --- the contract of every registered sampler ----------------------------------------

def setup_state(name):
    sampler, state = build(name)
    for r, sel in enumerate([(0, 2), (1, 2, 5)]):
        state = sampler.observe(state, outcome(r, sel, received=sel[:1]))
    return sampler, state


@pytest.mark.parametrize("name", NAMES)
def test_sampler_contract(name):
    sampler, state = setup_state(name)
    available = np.array([0, 1, 3, 4, 5])
    frozen_state, frozen_avail = copy.deepcopy(state), available.copy()
    picks = sampler.select(state, view(available), 3, np.random.default_rng(5))
    again = sampler.select(state, view(available), 3, np.random.default_rng(5))
    assert list(picks) == list(again)  # deterministic (the view's ids come sorted)
    assert picks.dtype == np.int64 and list(picks) == sorted(picks)
    assert set(picks) <= set(available)
    if name == "md":  # documented: k draws with replacement
        assert len(picks) == 3
    elif name == "wait_group":  # documented: the available members of its group still owed
        assert set(picks) == set(state.pending) & set(available)
    else:
        assert len(set(picks)) == len(picks)
        expected = len(available) if name == "all_available" else 3
        assert len(picks) == expected
    new = sampler.observe(state, outcome(2, tuple(sorted(set(picks.tolist())))))
    assert new is not state or state is None
    _assert_same(state, frozen_state)
    assert list(available) == list(frozen_avail)
    assert list(sampler.select(state, view([]), 3, np.random.default_rng(0))) == []
    few = sampler.select(state, view([4, 1]), 3, np.random.default_rng(0))
    if name == "wait_group":
        assert set(few) == set(state.pending) & {1, 4}
    else:
        assert set(few) == {1, 4} or name == "md"


def _assert_same(a, b):
    if isinstance(a, np.ndarray):
        assert np.array_equal(a, b)
    elif hasattr(a, "__dict__"):
        for key in vars(a):
            _assert_same(getattr(a, key), getattr(b, key))
    else:
        assert a == b


@pytest.mark.parametrize("name", NAMES)
def test_every_sampler_is_listed_with_a_paper(name):
    entry = next(e for e in REGISTRIES["samplers"] if e.name == name)
    assert entry.summary and entry.paper


def test_the_simulations_view_lists_the_available_ids_sorted():
    """Samplers rely on PopulationView.available being sorted (they do not sort again)."""
    seen = []
    sim = make_sim(n_clients=6, compute_s=(1.0,), upload_s=1.0)
    sim.run_round(0, lambda v: seen.append(v.available.copy()) or v.available[:2])
    assert len(seen) == 1 and len(seen[0]) > 0
    assert list(seen[0]) == sorted(seen[0])
