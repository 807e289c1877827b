"""Closed-form oracles of the MAC and relay models (docs/network-models.md sections 2 and 6).

Every estimate comes from driving the simulator: the slotted-ALOHA access model inside
a SimPy environment with saturated clients (each asks for access again as soon as it
is granted, "generate at will"), the relay's round draws, and whole Simulation rounds
for TDMA. Tolerances are 4 standard errors (binomial, Bhatia-Davis bound or delta
method, as stated per test), so a correct model fails with probability below about
1e-4 per check; the seeds are fixed.
"""

import itertools
import math

import numpy as np
import pytest
import simpy

from conftest import everyone, make_sim
from simfl.core.config import RelayMac, SlottedAlohaMac, TdmaMac
from simfl.core.rng import RngTree
from simfl.sim.mac.kinds import build_mac
from simfl.sim.mac.relay import Relay

SLOTS = 20_000


def saturated(cfg, n_clients, slots=SLOTS, seed=0):
    """Run ``slots`` slots with every client always contending; return the access model
    and each client's list of grant times (in slots)."""
    env = simpy.Environment()
    mac = build_mac(cfg, env, RngTree(seed), n_clients)
    mac.open_round(0, np.arange(n_clients))
    grants = [[] for _ in range(n_clients)]

    def client(c):
        while True:
            ok = yield mac.request(c)
            assert ok
            grants[c].append(round(env.now / cfg.slot_s))

    for c in range(n_clients):
        env.process(client(c))
    env.run(until=slots * cfg.slot_s + cfg.slot_s / 2)
    return mac, grants


def binomial_tol(p, n):
    return 4.0 * math.sqrt(p * (1.0 - p) / n)


def test_oracle_14_finite_slotted_aloha_successes_per_slot(oracle):
    """N = 10, p = 0.1: N p (1-p)^(N-1) = 0.38742 successes per slot, and each client
    succeeds in p (1-p)^(N-1) = 0.038742 of the slots. A slot has 0 or 1 success and
    slots are independent, so the tolerance is binomial over 20,000 slots."""
    n, p = 10, 0.1
    mac, grants = saturated(SlottedAlohaMac(access_prob=p, slot_s=0.01), n)
    total = n * p * (1 - p) ** (n - 1)
    assert total == pytest.approx(0.38742, abs=1e-5)
    wins = sum(len(g) for g in grants)
    oracle("14 finite slotted ALOHA, successes/slot", total, wins / SLOTS,
           binomial_tol(total, SLOTS))
    assert mac.slot_stats[n] == [SLOTS, wins]  # every slot had all ten contending
    assert all(w <= s for s, w in mac.slot_stats.values())  # one upload per slot at most
    each = p * (1 - p) ** (n - 1)
    assert max(abs(len(g) / SLOTS - each) for g in grants) <= binomial_tol(each, SLOTS)
    # transmissions: each client sends in a fraction p of the slots
    assert abs(mac.tx_slots.sum() / (n * SLOTS) - p) <= binomial_tol(p, n * SLOTS)


def test_heterogeneous_access_probabilities(oracle):
    """Client i succeeds in a slot with probability a_i prod_{j != i} (1 - a_j)
    (docs/network-models.md 2.2); binomial tolerance per client over 20,000 slots."""
    a = np.array([0.05, 0.15, 0.3, 0.5])
    _, grants = saturated(SlottedAlohaMac(access_prob=tuple(a), slot_s=0.01), len(a), seed=1)
    for i, g in enumerate(grants):
        s_i = a[i] * np.prod(np.delete(1 - a, i))
        oracle(f"ALOHA success, access prob {a[i]:g}", s_i, len(g) / SLOTS,
               binomial_tol(s_i, SLOTS))


def test_oracle_15_multichannel_aloha(oracle):
    """K = 20, M = 4, p = 0.2: K p (1 - p/M)^(K-1) = 1.5094 successes per slot. A slot's
    successes X lie in [0, M], so Var X <= mu (M - mu) (Bhatia-Davis); tolerance 4
    sqrt(mu (M - mu) / slots)."""
    k, m, p = 20, 4, 0.2
    _, grants = saturated(SlottedAlohaMac(access_prob=p, slot_s=0.01, channels=m), k, seed=2)
    mu = k * p * (1 - p / m) ** (k - 1)
    assert mu == pytest.approx(1.5094, abs=1e-4)
    per_slot = sum(len(g) for g in grants) / SLOTS
    oracle("15 multichannel ALOHA, successes/slot", mu, per_slot,
           4 * math.sqrt(mu * (m - mu) / SLOTS))


def test_oracle_18_age_of_information_of_slotted_aloha(oracle):
    """Generate-at-will symmetric ALOHA, N = 10, p = 0.1: time-average AoI = 1/q = 25.81
    slots, q = p (1-p)^(N-1). Estimated per client as sum X(X+1)/2 / sum X over the
    inter-delivery times X; tolerance 4 delta-method standard errors of that ratio."""
    n, p = 10, 0.1
    _, grants = saturated(SlottedAlohaMac(access_prob=p, slot_s=0.01), n, slots=40_000, seed=3)
    x = np.concatenate([np.diff(g) for g in grants]).astype(float)
    y = x * (x + 1) / 2
    aoi = y.sum() / x.sum()
    se = np.std(y - aoi * x, ddof=1) / (x.mean() * math.sqrt(len(x)))
    expected = 1 / (p * (1 - p) ** (n - 1))
    assert expected == pytest.approx(25.81, abs=5e-3)
    oracle("18 AoI of slotted ALOHA (slots)", expected, aoi, 4 * se)


def test_binary_exponential_backoff_first_window(oracle):
    """A lone client with backoff waits U{0..cw_min-1} slots before its first
    transmission: mean (cw_min - 1)/2 = 3.5 slots for cw_min = 8 (docs/network-models.md 2.4),
    CLT tolerance with sd sqrt((cw^2 - 1)/12)."""
    cw, n = 8, 5000
    _, grants = saturated(SlottedAlohaMac(backoff="binary_exponential", cw_min=cw,
                                          slot_s=0.01), 1, slots=n * cw, seed=4)
    starts = np.concatenate([[0], grants[0][:-1]])
    waits = np.asarray(grants[0]) - starts - 1  # slots idle before the granted one
    oracle("BEB first window, mean wait (slots)", (cw - 1) / 2, waits.mean(),
           4 * math.sqrt((cw ** 2 - 1) / 12 / len(waits)))


# ---- the relay (Random Access Model): inclusion frequencies

ROUNDS = 20_000


def inclusion(cfg, n_clients, rounds=ROUNDS, seed=0):
    relay = build_mac(cfg, simpy.Environment(), RngTree(seed), n_clients)
    assert isinstance(relay, Relay)
    started = np.arange(n_clients)
    counts = np.zeros(n_clients)
    for r in range(rounds):
        relay.open_round(r, started)
        counts += [relay.forwards(c) for c in range(n_clients)]
    return counts / rounds


def test_relay_bernoulli_inclusion(oracle):
    probs = (0.1, 0.5, 0.9, 0.02)
    freq = inclusion(RelayMac(policy="bernoulli", probs=probs), 4)
    for f, p in zip(freq, probs):
        oracle(f"relay bernoulli inclusion, p = {p:g}", p, f, binomial_tol(p, ROUNDS))


def successive_sampling_marginals(w, k):
    """Exact P(i in sample) for k draws without replacement, each proportional to the
    remaining weights: a sum over ordered draws."""
    w = np.asarray(w, dtype=float)
    pi = np.zeros(len(w))
    for order in itertools.permutations(range(len(w)), k):
        prob, left = 1.0, w.sum()
        for i in order:
            prob *= w[i] / left
            left -= w[i]
        pi[list(order)] += prob
    return pi


@pytest.mark.parametrize("weights", [(0.25, 0.25, 0.25, 0.25, 0.25), (0.1, 0.2, 0.3, 0.4, 0.8)])
def test_relay_capacity_inclusion(weights, oracle):
    """K = 2 of N = 5: equal weights give K/N; unequal weights the successive-sampling
    marginals (not proportional to the weights)."""
    freq = inclusion(RelayMac(policy="capacity", probs=weights, capacity=2), 5, seed=5)
    pi = successive_sampling_marginals(weights, 2)
    if len(set(weights)) == 1:
        assert pi == pytest.approx(np.full(5, 0.4))
    for w, f, p in zip(weights, freq, pi):
        oracle(f"relay capacity 2 of 5 inclusion, weight {w:g}", p, f, binomial_tol(p, ROUNDS))


def test_relay_aloha_inclusion_one_and_two_slots(oracle):
    """One slot: pi_i = s_i = a_i prod_{j != i}(1 - a_j). Two slots with clients that stop
    once heard: pi_i = s_i + P(nobody heard in slot 1) s_i + sum_{k != i} s_k s_i^(-k),
    where s_i^(-k) is s_i computed without client k."""
    a = np.array([0.2, 0.3, 0.4, 0.1])

    def s(i, without=()):
        others = [j for j in range(len(a)) if j != i and j not in without]
        return a[i] * np.prod(1 - a[others])

    one = np.array([s(i) for i in range(4)])
    two = np.array([one[i] + (1 - one.sum()) * one[i]
                    + sum(one[k] * s(i, (k,)) for k in range(4) if k != i) for i in range(4)])
    for slots, pi in ((1, one), (2, two)):
        freq = inclusion(RelayMac(policy="aloha", probs=tuple(a), slots=slots), 4, seed=slots)
        for i, (f, p) in enumerate(zip(freq, pi)):
            oracle(f"relay aloha inclusion, {slots} slot(s), access {a[i]:g}", p, f,
                   binomial_tol(p, ROUNDS))


def symmetric_aloha_inclusion(n, p, slots):
    """P(a given client is heard within ``slots`` slots), n clients with access p that stop
    once heard: the number still contending m is a death chain that loses one client in a
    slot with probability m p (1 - p)^(m - 1); inclusion = (n - E[m after slots]) / n."""
    dist = np.zeros(n + 1)
    dist[n] = 1.0
    m = np.arange(n + 1)
    q = m * p * (1.0 - p) ** np.maximum(m - 1, 0)
    for _ in range(slots):
        dist = dist * (1.0 - q) + np.append(dist[1:] * q[1:], 0.0)
    return (n - (m * dist).sum()) / n


@pytest.mark.parametrize("n, p, slots", [(6, 0.3, 5), (6, 0.3, 40), (3, 0.6, 12)])
def test_relay_aloha_inclusion_many_slots(n, p, slots, oracle):
    """Many slots with clients that stop once heard (symmetric access p): the death-chain
    inclusion probability; the relay draws success by success instead of slot by slot."""
    expected = symmetric_aloha_inclusion(n, p, slots)
    freq = inclusion(RelayMac(policy="aloha", probs=p, slots=slots), n, rounds=5000, seed=slots)
    oracle(f"relay aloha inclusion, N = {n}, p = {p:g}, {slots} slots", expected, freq.mean(),
           binomial_tol(expected, 5000 * n))


# ---- TDMA: deterministic times (exact)

def test_tdma_frame_times_exact():
    """4 clients, slot 0.1 s, frame 0.4 s, upload airtime 0.25 s, compute 0: client of
    rank j ends at 2 frames + j slots + 0.05 s = 0.85 + 0.1 j; shared mode: 4 x 0.25 s."""
    slots = make_sim(n_clients=4, compute_s=(0.0,), upload_s=0.25, deadline_s=10.0)
    slots.mac = build_mac(TdmaMac(slot_s=0.1), slots.env, slots.rngs, 4)
    times = {a.client: a.t_s for a in slots.run_round(0, everyone).received}
    for j in range(4):
        assert times[j] == pytest.approx(0.85 + 0.1 * j, abs=1e-6)
    shared = make_sim(n_clients=4, compute_s=(0.0,), upload_s=0.25, deadline_s=10.0)
    shared.mac = build_mac(TdmaMac(mode="shared"), shared.env, shared.rngs, 4)
    assert [a.t_s for a in shared.run_round(0, everyone).received] == pytest.approx([1.0] * 4)
