"""Slotted ALOHA settled for the whole cohort at once on lossy uplinks.

After the cohort's contention, each granted upload goes over the client's own lossy
link with ARQ (:mod:`simfl.sim.mac.aloha.cohort_upload`). The checks: worked examples
that involve no chance (every attempt lost, an attempt cut by the close), which links
claim the cohort path, and for each link kind the per-event and the cohort models
compared in distribution (means of per-round outcomes within 4 standard errors of their
difference, over several seeds).
"""

import numpy as np
import pytest

from conftest import everyone
from simfl.core.config import (ContinuousGilbertElliottChannel, Distance, ErasureChannel,
                               FixedRate,
                               GilbertElliottChannel, IdealChannel, RayleighChannel,
                               ShannonRate, SlottedAlohaMac)
from simfl.core.config.mac import OFF_CLOCK
from simfl.core.rng import RngTree
from simfl.sim.availability.rounds import AlwaysOnline
from simfl.sim.links.channel import build_link
from simfl.sim.mac.kinds import build_mac
from simfl.sim.rounds import fast
from simfl.sim.simulation import Simulation

MODEL_BYTES = 1000


def rate(airtime_s):
    return FixedRate(rate_bps=MODEL_BYTES * 8 / airtime_s)


def make(uplink, mac, *, n_clients=40, compute_s=(0.0, 0.1, 0.25, 0.5), deadline_s=1.5,
         arq=3, seed=11):
    """``n_clients`` always online, an instant ideal downlink, ``uplink`` (a channel
    config) with ``arq`` attempts, slotted ALOHA ``mac``."""
    rngs = RngTree(seed)
    work = np.resize(np.asarray(compute_s, dtype=float), n_clients)
    sim = Simulation(
        rngs=rngs, n_samples=np.full(n_clients, 10), work_samples=work,
        samples_per_s=np.ones(n_clients), online=AlwaysOnline(None, n_clients, rngs),
        links={"downlink": build_link(IdealChannel(rate=FixedRate(rate_bps=float("inf")))),
               "uplink": build_link(uplink, rngs)},
        model_bytes=MODEL_BYTES, arq_max_attempts=arq, clients_per_round=n_clients,
        overcommit=1.0, deadline_s=deadline_s)
    sim.devices.mac = sim.mac = build_mac(mac, sim.env, sim.rngs, n_clients,
                                          sim.energy.charge_transmissions)
    return sim


@pytest.fixture
def cohort_rounds(monkeypatch):
    """How many rounds ran through the cohort model."""
    ran = []
    real = fast.run_cohort
    monkeypatch.setattr(fast, "run_cohort", lambda *a: ran.append(1) or real(*a))
    return ran


def test_every_attempt_lost_is_erased_after_the_arq_attempts(cohort_rounds):
    sim = make(ErasureChannel(p=1.0, rate=rate(0.5)),
               SlottedAlohaMac(access_prob=1.0, slot_s=0.1), n_clients=1,
               compute_s=(1.0,), deadline_s=10.0, arq=3)
    sim.keep_events = True
    outcome = sim.run_round(0, everyone)
    assert cohort_rounds == [1]
    (missing,) = outcome.missing
    # granted at the end of slot 10 (1.1 s), three attempts of 0.5 s back to back
    assert (missing.reason, missing.t_s) == ("erased", pytest.approx(2.6))
    assert outcome.t_close_s == pytest.approx(2.6) and outcome.retries == 2
    lost = [(e.t_s, e.detail) for e in sim.events if e.kind == "attempt_lost"]
    assert lost == [(pytest.approx(1.6), "uplink 1"), (pytest.approx(2.1), "uplink 2"),
                    (pytest.approx(2.6), "uplink 3")]


def test_an_attempt_in_the_air_at_the_close_is_late_and_the_round_runs_to_the_deadline():
    sim = make(ErasureChannel(p=1.0, rate=rate(0.5)),
               SlottedAlohaMac(access_prob=1.0, slot_s=0.1), n_clients=1,
               compute_s=(1.0,), deadline_s=1.8, arq=3)
    sim.keep_events = True
    outcome = sim.run_round(0, everyone)
    assert [m.reason for m in outcome.missing] == ["late"]
    assert outcome.t_close_s == pytest.approx(1.8)
    assert [e.detail for e in sim.events if e.kind == "attempt_lost"] == ["uplink 1"]
    assert outcome.retries == 1


def test_a_gilbert_elliott_chain_keeps_its_state_across_cohort_rounds():
    """A chain that all but never moves (one step in 10^6), half the clients starting
    Bad and lost when Bad: the same clients are erased round after round (a chain drawn
    afresh each round would pick others)."""
    cfg = GilbertElliottChannel(p_gb=1e-6, p_bg=1e-6, loss_good=0.0, loss_bad=1.0,
                                rate=rate(0.01))
    sim = make(cfg, SlottedAlohaMac(access_prob=0.2, slot_s=0.02), n_clients=20,
               deadline_s=20.0, arq=2)
    erased = []
    for r in range(6):
        outcome = sim.run_round(r, everyone)
        assert len(outcome.received) + len(outcome.missing) == 20
        erased.append({m.client for m in outcome.missing if m.reason == "erased"})
    assert 0 < len(erased[0]) < 20
    assert all(now == erased[0] for now in erased)


SHANNON = ShannonRate(bandwidth_hz=1e5, snr_db=6.0)


@pytest.mark.parametrize("uplink, claims", [
    (ErasureChannel(p=0.2), True),
    (ErasureChannel(p=0.2, rate=SHANNON), True),
    (GilbertElliottChannel(), True),
    (ContinuousGilbertElliottChannel(), True),
    (RayleighChannel(k_factor=3.0), True),
    (RayleighChannel(rate=SHANNON), True),
    (RayleighChannel(distance=Distance()), False),
], ids=["erasure", "erasure_shannon", "gilbert_elliott", "continuous", "rician",
        "rayleigh_shannon", "rayleigh_distance"])
def test_a_lossy_uplink_claims_the_loop_off_the_clock_only_for_a_cohort(uplink, claims):
    link = build_link(uplink, RngTree(0))
    assert OFF_CLOCK not in link.round_engines()
    assert (OFF_CLOCK in link.round_engines(cohort=True)) == claims


MAC = SlottedAlohaMac(access_prob=0.05, slot_s=0.02, channels=2, max_attempts=4)
LINKS = {
    "erasure": ErasureChannel(p=0.3, rate=rate(0.05)),
    "gilbert_elliott": GilbertElliottChannel(p_gb=0.3, p_bg=0.4, loss_good=0.05,
                                             loss_bad=0.8, rate=rate(0.05)),
    "gilbert_elliott_continuous": ContinuousGilbertElliottChannel(
        rate_gb_per_s=2.0, rate_bg_per_s=3.0, loss_good=0.05, loss_bad=0.9, rate=rate(0.05)),
    "rayleigh": RayleighChannel(mean_snr_db=3.0, threshold_db=0.0, rate=rate(0.05)),
    "rician": RayleighChannel(mean_snr_db=3.0, threshold_db=2.0, k_factor=4.0,
                              rate=rate(0.05)),
    # 8 kb at 100 kHz: 80 ms at 0 dB, about 35 ms at the mean SNR of 6 dB
    "rayleigh_shannon": RayleighChannel(mean_snr_db=6.0, threshold_db=0.0, rate=SHANNON),
    "erasure_shannon": ErasureChannel(p=0.3, rate=SHANNON),
}


def sample(uplink, contention, seeds=(11, 12, 13), rounds=60):
    """Per round: arrivals, erased, collided, late, contention transmissions, lost
    attempts (records), retries, mean completion time of the arrivals, round length."""
    rows = []
    for seed in seeds:
        sim = make(uplink, SlottedAlohaMac(contention=contention, access_prob=MAC.access_prob,
                                           slot_s=MAC.slot_s, channels=MAC.channels,
                                           max_attempts=MAC.max_attempts), seed=seed)
        sim.keep_events = True
        for r in range(rounds):
            tx_before, events_before = sim.mac.tx_slots.sum(), len(sim.events)
            o = sim.run_round(r, everyone)
            lost = sum(e.kind == "attempt_lost" for e in sim.events[events_before:])
            done_s = np.mean([a.t_s - o.t_open_s for a in o.received])
            rows.append((len(o.received), o.n_missing("erased"), o.n_missing("collided"),
                         o.n_missing("late"), sim.mac.tx_slots.sum() - tx_before, lost,
                         o.retries, done_s, o.t_close_s - o.t_open_s))
    return np.array(rows, dtype=float)


@pytest.mark.parametrize("kind", list(LINKS))
def test_per_event_and_cohort_agree_in_distribution_on_lossy_links(kind, cohort_rounds):
    """40 clients ready over half a second, 3 ARQ attempts of 50 ms, a 1.5 s deadline:
    the means of the per-round outcomes of both models within 4 standard errors of their
    difference, over 3 seeds x 60 rounds each."""
    a = sample(LINKS[kind], "per_event")
    assert cohort_rounds == []
    b = sample(LINKS[kind], "vectorised")
    assert len(cohort_rounds) == len(b)
    se = np.sqrt(a.var(axis=0, ddof=1) / len(a) + b.var(axis=0, ddof=1) / len(b))
    gap = np.abs(a.mean(axis=0) - b.mean(axis=0))
    assert (gap <= 4 * se + 1e-12).all(), (a.mean(axis=0), b.mean(axis=0), se)
    # every outcome happens, so each comparison means something
    assert (a[:, :7].sum(axis=0) > 0).all() and (b[:, :7].sum(axis=0) > 0).all()
