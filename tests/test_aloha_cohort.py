"""Slotted ALOHA resolved for a whole cohort at once (``contention = "vectorised"``).

The vectorised model draws in another order than the per-event one, so the checks are
the worked examples that involve no chance, the closed form of a slot's success
probability, and the two models' outcomes compared in distribution (4 standard errors).
"""

import math

import numpy as np
import pytest

from conftest import everyone, make_sim
from simfl.core.config import SlottedAlohaMac
from simfl.sim.mac.aloha.cohort import UNDECIDED, contend
from simfl.sim.mac.kinds import build_mac


def with_mac(sim, cfg):
    sim.devices.mac = sim.mac = build_mac(cfg, sim.env, sim.rngs, len(sim.n_samples),
                                          sim.energy.charge_transmissions)
    return sim


def vectorised(**fields):
    return SlottedAlohaMac(contention="vectorised", **fields)


def arrivals(outcome):
    return {a.client: a.t_s for a in outcome.received}


def reasons(outcome):
    return {m.client: m.reason for m in outcome.missing}


def test_a_lone_client_with_p1_gets_the_next_slot():
    sim = with_mac(make_sim(n_clients=1, compute_s=(1.0,), upload_s=1.0),
                   vectorised(access_prob=1.0, slot_s=0.1))
    outcome = sim.run_round(0, everyone)
    assert arrivals(outcome) == pytest.approx({0: 1.1 + 1.0})
    assert sim.mac.tx_slots.tolist() == [1]


def test_a_permanent_collision_is_collided_at_the_deadline_with_slot_counts():
    sim = with_mac(make_sim(n_clients=2, compute_s=(0.0,), upload_s=1.0, deadline_s=1.0),
                   vectorised(access_prob=1.0, slot_s=0.1))
    sim.keep_events = True
    outcome = sim.run_round(0, everyone)
    assert reasons(outcome) == {0: "collided", 1: "collided"}
    assert outcome.t_close_s == pytest.approx(1.0)
    assert sim.mac.tx_slots.tolist() == [10, 10]
    assert [e.detail for e in sim.events if e.kind == "mac_slots"] == ["2:10:0"]
    assert [e.detail for e in sim.events if e.kind == "collided"] == ["deadline"] * 2


def test_the_retry_limit_gives_up_and_closes_the_round_early():
    sim = with_mac(make_sim(n_clients=3, compute_s=(0.0,), upload_s=1.0, deadline_s=50.0),
                   vectorised(access_prob=1.0, slot_s=0.1, max_attempts=3))
    outcome = sim.run_round(0, everyone)
    assert set(reasons(outcome).values()) == {"collided"}
    assert outcome.t_close_s == pytest.approx(0.3)
    assert sim.mac.tx_slots.tolist() == [3, 3, 3]


def test_a_client_ready_after_the_deadline_is_late_and_one_uploading_at_the_close_too():
    sim = with_mac(make_sim(n_clients=2, compute_s=(0.5, 20.0), upload_s=5.0, deadline_s=3.0),
                   vectorised(access_prob=1.0, slot_s=0.1))
    outcome = sim.run_round(0, everyone)
    assert reasons(outcome) == {0: "late", 1: "late"}  # 0 is granted at 0.6, lands at 5.6
    assert sim.mac.tx_slots.tolist() == [1, 0]


def test_everyone_gets_through_and_the_slot_counts_add_up():
    sim = with_mac(make_sim(n_clients=40, compute_s=(0.0, 0.05, 0.13), upload_s=0.2,
                            deadline_s=1e4, seed=2),
                   vectorised(access_prob=0.1, slot_s=0.1, channels=2))
    sim.keep_events = True
    outcome = sim.run_round(0, everyone)
    assert len(outcome.received) == 40
    detail = next(e.detail for e in sim.events if e.kind == "mac_slots")
    stats = [tuple(int(x) for x in item.split(":")) for item in detail.split()]
    assert sum(wins for _, _, wins in stats) == 40
    # the last success ends the round; every slot before it had someone contending
    last_slot = round(max(arrivals(outcome).values()) / 0.1 - 0.2 / 0.1) - 1
    assert sum(slots for _, slots, _ in stats) == last_slot + 1
    assert sim.mac.tx_slots.sum() == 40 + sim.mac.collisions.sum()


@pytest.mark.parametrize("n, p, channels", [(5, 0.2, 1), (10, 0.1, 1), (8, 0.25, 3)])
def test_a_slot_with_n_saturated_contenders_succeeds_as_the_closed_form_says(n, p, channels):
    """With n clients that never finish (a far deadline, each one's success is counted
    but the contention rebuilt each time), the successes per slot with n contenders are
    n p (1 - p/c)^(n-1) for c channels; checked on the slot statistics within 4 SE."""
    cfg = vectorised(access_prob=p, slot_s=1.0, channels=channels)
    rng = np.random.default_rng(7)
    slots = wins = 0
    for _ in range(4000):
        race = contend(cfg, np.full(n, p), np.zeros(n), 1e6, rng)
        slots += race.slot_stats[n][0]
        wins += race.slot_stats[n][1]
    expected = n * p * (1 - p / channels) ** (n - 1)
    # successes per slot are a sum of bounded counts; their variance is at most n^2/4
    se = math.sqrt(expected * (n - expected + 1) / slots)
    assert abs(wins / slots - expected) < 4 * se, (wins / slots, expected)


def test_never_transmitting_clients_stay_undecided():
    cfg = vectorised(access_prob=(0.0, 1.0), slot_s=1.0)
    race = contend(cfg, np.array([0.0, 1.0]), np.zeros(2), 10.0, np.random.default_rng(1))
    assert race.decided_slot.tolist() == [UNDECIDED, 0]
    assert race.granted.tolist() == [False, True] and race.n_tx.tolist() == [0, 1]


HETEROGENEOUS = tuple(float(p) for p in np.linspace(0.01, 0.3, 40))


@pytest.mark.parametrize("mac, deadline_s", [
    (dict(access_prob=0.05, slot_s=0.02, channels=2, max_attempts=4), 1.5),
    (dict(backoff="binary_exponential", cw_min=4, slot_s=0.02), 1.5),
    # backoff on several channels with a retry limit
    (dict(backoff="binary_exponential", cw_min=2, cw_max=16, slot_s=0.02, channels=3,
          max_attempts=3), 1.5),
    # saturated, one channel, a binding deadline: most of the cohort is still contending
    (dict(access_prob=0.3, slot_s=0.05), 1.2),
    # a probability per client, four channels, a deadline that cuts the slowest off
    (dict(access_prob=HETEROGENEOUS, slot_s=0.01, channels=4), 0.6),
], ids=["channels_retry_limit", "backoff", "backoff_channels_retry_limit", "saturated_deadline",
        "per_client_p"])
def test_per_event_and_vectorised_agree_in_distribution(mac, deadline_s):
    """40 clients, ready over half a second: mean arrivals, collided, late, transmissions
    and round length of the two models within 4 standard errors of their difference,
    over 150 rounds each."""
    def sample(contention):
        sim = with_mac(make_sim(n_clients=40, compute_s=(0.0, 0.1, 0.25, 0.5), upload_s=0.01,
                                deadline_s=deadline_s, seed=11),
                       SlottedAlohaMac(contention=contention, **mac))
        rows = []
        for r in range(150):
            before = sim.mac.tx_slots.sum()
            o = sim.run_round(r, everyone)
            rows.append((len(o.received), o.n_missing("collided"), o.n_missing("late"),
                         sim.mac.tx_slots.sum() - before, o.t_close_s - o.t_open_s))
        return np.array(rows, dtype=float)

    a, b = sample("per_event"), sample("vectorised")
    se = np.sqrt(a.var(axis=0, ddof=1) / len(a) + b.var(axis=0, ddof=1) / len(b))
    gap = np.abs(a.mean(axis=0) - b.mean(axis=0))
    assert (gap <= 4 * se + 1e-12).all(), (a.mean(axis=0), b.mean(axis=0), se)
    assert a[:, 1].sum() > 0 and a[:, 0].sum() > 0  # both outcomes happen


def test_a_bad_contention_is_refused():
    from simfl.core.errors import ConfigError

    with pytest.raises(ConfigError, match="contention"):
        SlottedAlohaMac(contention="batched").validate()


def test_the_cohort_model_is_the_default_and_per_event_is_kept_on_request(monkeypatch):
    from simfl.sim.rounds import fast

    ran = []
    real = fast.run_cohort
    monkeypatch.setattr(fast, "run_cohort", lambda *a: ran.append(1) or real(*a))
    for cfg in (SlottedAlohaMac(access_prob=0.5, slot_s=0.1),
                SlottedAlohaMac(access_prob=0.5, slot_s=0.1, contention="per_event")):
        sim = with_mac(make_sim(n_clients=4, compute_s=(0.0, 0.3)), cfg)
        assert len(sim.run_round(0, everyone).received) == 4
    assert ran == [1]


@pytest.mark.parametrize("n, p", [(50, 0.01), (400, 0.005)])
def test_the_first_busy_slot_and_its_transmitters_follow_the_skip_ahead_law(n, p):
    """n contenders from slot 0: the first busy slot is Geometric(q) - 1 slots away, q =
    1 - (1 - p)^n, and Binomial(n, p) given >= 1 transmit in it (mean n p / q). With
    one attempt each, the clients decided in the earliest decided slot are exactly
    those transmitters; 3000 rounds, within 4 SE."""
    cfg = vectorised(access_prob=p, slot_s=1.0, max_attempts=1)
    rng = np.random.default_rng(5)
    firsts, counts = [], []
    for _ in range(3000):
        decided = contend(cfg, np.full(n, p), np.zeros(n), 1e6, rng).decided_slot
        first = decided[decided != UNDECIDED].min()
        firsts.append(first)
        counts.append(int((decided == first).sum()))
    q = 1 - (1 - p) ** n
    for got, mean, var in ((np.array(firsts), 1 / q - 1, (1 - q) / q ** 2),
                           (np.array(counts), n * p / q, None)):
        var = got.var(ddof=1) if var is None else var
        assert abs(got.mean() - mean) < 4 * math.sqrt(var / got.size), (got.mean(), mean)
