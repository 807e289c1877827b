"""Worked examples of the energy rules of docs/network-models.md sections 2.2, 2.6 and 3.2.

Each example is small enough to compute by hand: the expected numbers are written out
from the durations and powers, never read back from the simulator.
"""

import numpy as np
import pytest

from conftest import everyone, make_sim
from simfl.core.config import Battery, Energy, SlottedAlohaMac, TdmaMac
from simfl.sim.energy.battery import Batteries
from simfl.sim.energy.infinite import InfiniteEnergy
from simfl.sim.mac.kinds import build_mac
from simfl.sim.rounds.loops import RoundLoops

IDLE_W, TX_W = 0.5, 2.0
ENERGY = Energy(idle_w=IDLE_W, compute_w=0.0, rx_w=0.0, tx_w=TX_W)


def with_mac(sim, cfg):
    """``sim`` (before its first round) with the uplink MAC of ``cfg``, charging its
    contention transmissions to the simulation's energy source."""
    sim.devices.mac = sim.mac = build_mac(cfg, sim.env, sim.rngs, len(sim.n_samples),
                                          sim.energy.charge_transmissions)
    return sim


def lone_contender(source, ready_s, slot_s=0.125, contention="per_event"):
    """One client, ready at ``ready_s`` (instant download), that transmits in its first
    slot (access probability 1) and then uploads for 1 s."""
    sim = make_sim(n_clients=1, compute_s=(ready_s,), upload_s=1.0, deadline_s=10.0,
                   battery=source)
    return with_mac(sim, SlottedAlohaMac(access_prob=1.0, slot_s=slot_s,
                                         contention=contention))


# ---- section 3.2: a contention slot is charged at transmit power, not idle power on top

FORMS = ["fast", "chained", "processes", "vectorised", "battery"]


def run_form(monkeypatch, form, ready_s):
    """The lone contender's round in one of the loops that can run it."""
    source = (Batteries(1, Battery(capacity_j=100.0), ENERGY) if form == "battery"
              else InfiniteEnergy(1, ENERGY))
    sim = lone_contender(source, ready_s,
                         contention="vectorised" if form == "vectorised" else "per_event")
    with monkeypatch.context() as m:
        if form == "chained":
            m.setattr(RoundLoops, "engines", frozenset({"process", "callbacks"}))
        if form == "processes":
            m.setattr(RoundLoops, "engines", frozenset({"process"}))
        outcome = sim.run_round(0, everyone)
    return sim, outcome


@pytest.mark.parametrize("form", FORMS)
def test_a_transmitting_slot_is_charged_at_transmit_power_only(monkeypatch, form):
    # ready at 0.0625 s: waits 0.0625 s for slot 1 [0.125, 0.25) at 0.5 W, transmits in
    # it at 2 W (granted at its end), then uploads 1 s at 2 W
    sim, outcome = run_form(monkeypatch, form, 0.0625)
    assert [a.t_s for a in outcome.received] == pytest.approx([1.25])
    expected_j = 0.0625 * IDLE_W + 0.125 * TX_W + 1.0 * TX_W  # 2.28125 J
    assert outcome.energy_j == pytest.approx(expected_j, abs=1e-12)
    assert sim.battery.used_j[0] == pytest.approx(expected_j, abs=1e-12)
    if form == "battery":
        assert sim.battery.stored_j[0] == pytest.approx(100.0 - expected_j, abs=1e-12)


def test_contention_that_outlasts_the_deadline_is_charged_at_transmit_power():
    # two clients collide in every 0.1 s slot up to the 1 s deadline: 1 s at 2 W each
    sim = make_sim(n_clients=2, compute_s=(0.0,), upload_s=1.0, deadline_s=1.0,
                   battery=InfiniteEnergy(2, ENERGY))
    sim = with_mac(sim, SlottedAlohaMac(access_prob=1.0, slot_s=0.1))
    outcome = sim.run_round(0, everyone)
    assert {m.reason for m in outcome.missing} == {"collided"}
    assert sim.battery.used_j.tolist() == pytest.approx([1.0 * TX_W] * 2, abs=1e-12)


# ---- section 2.2: a slot that begins exactly at the ready time is the first one contended

@pytest.mark.parametrize("contention", ["per_event", "vectorised"])
@pytest.mark.parametrize("ready_s, granted_s", [
    (0.25, 0.375),    # slot 2 begins exactly at 0.25 s: it is the first slot
    (0.2500001, 0.5),  # just after: slot 3 [0.375, 0.5)
    (0.0, 0.125),     # slot 0 begins at t = 0
])
def test_a_slot_that_begins_at_the_ready_time_counts(contention, ready_s, granted_s):
    sim = lone_contender(InfiniteEnergy(1, ENERGY), ready_s, contention=contention)
    outcome = sim.run_round(0, everyone)
    assert [a.t_s for a in outcome.received] == pytest.approx([granted_s + 1.0], abs=1e-12)


# ---- section 2.6: under TDMA slots a battery follows the piecewise power, not the average

def test_a_tdma_battery_dies_where_the_piecewise_power_empties_it():
    # 4 clients, 0.1 s slots (0.4 s frames), 0.25 s uploads at 4 W, idle 0.5 W, ready
    # at t = 0, batteries of 0.2 J. Client j waits 0.1 j s at 0.5 W for its slot, then
    # transmits at 4 W: empty at 0.1 j + (0.2 - 0.05 j) / 4 s, inside its first slot.
    capacity_j, idle_w, tx_w = 0.2, 0.5, 4.0
    energy = Energy(idle_w=idle_w, compute_w=0.0, rx_w=0.0, tx_w=tx_w)
    b = Batteries(4, Battery(capacity_j=capacity_j), energy)
    sim = make_sim(n_clients=4, compute_s=(0.0,), upload_s=0.25, deadline_s=10.0, battery=b,
                   mac=TdmaMac(mode="slots", slot_s=0.1))
    outcome = sim.run_round(0, everyone)
    deaths = {m.client: m.t_s for m in outcome.missing}
    assert {m.reason for m in outcome.missing} == {"battery"} and not outcome.received
    expected = {j: 0.1 * j + (capacity_j - idle_w * 0.1 * j) / tx_w for j in range(4)}
    assert expected[3] == pytest.approx(0.3125)
    assert deaths == pytest.approx(expected, abs=1e-9)
    assert b.used_j.tolist() == pytest.approx([capacity_j] * 4, abs=1e-9)


def test_a_tdma_attempt_draws_idle_power_between_its_slots():
    # the client of rank 3 above with a full battery: on air in [0.3, 0.4), [0.7, 0.8)
    # and [1.1, 1.15); a battery read mid-wait at 0.6 s has paid 0.5 x 0.5 + 4 x 0.1
    energy = Energy(idle_w=0.5, compute_w=0.0, rx_w=0.0, tx_w=4.0)
    b = Batteries(4, Battery(capacity_j=10.0), energy)
    sim = make_sim(n_clients=4, compute_s=(0.0,), upload_s=0.25, deadline_s=10.0, battery=b,
                   mac=TdmaMac(mode="slots", slot_s=0.1))
    seen = []
    sim.env.process(_read_at(sim, b, 0.6, seen))
    outcome = sim.run_round(0, everyone)
    assert sorted(a.t_s for a in outcome.received) == pytest.approx([0.85, 0.95, 1.05, 1.15])
    assert seen[0] == pytest.approx(10.0 - (0.5 * 0.5 + 4.0 * 0.1), abs=1e-12)
    assert b.used_j[3] == pytest.approx(4.0 * 0.25 + 0.5 * 0.9, abs=1e-12)


def _read_at(sim, b, t_s, seen):
    """A process that reads client 3's stored energy at ``t_s``."""
    yield sim.env.timeout(t_s)
    b._settle(3)
    seen.append(float(b.stored_j[3]))


@pytest.mark.parametrize("tx", [dict(tx_w=4.0), dict(tx_j_per_bit=4.0 / 32000)])
def test_tdma_shared_energy_is_the_same_for_watts_and_joules_per_bit(tx):
    # 4 clients share 32 kb/s: each 8000-bit upload is on air 4 x 0.25 s at 4 W (or at
    # 1.25e-4 J/bit x 32 kb/s, the same 4 W): 4 J each, in watts as in J/bit
    energy = Energy(idle_w=0.5, compute_w=0.0, rx_w=0.0, **tx)
    sim = make_sim(n_clients=4, compute_s=(0.0,), upload_s=0.25, deadline_s=10.0,
                   battery=Batteries(4, Battery(capacity_j=10.0), energy),
                   mac=TdmaMac(mode="shared"))
    outcome = sim.run_round(0, everyone)
    assert [a.t_s for a in outcome.received] == pytest.approx([1.0] * 4)
    assert sim.battery.used_j.tolist() == pytest.approx([4 * 0.25 * 4.0] * 4, abs=1e-12)
    assert np.all(sim.battery.stored_j == pytest.approx(10.0 - 4.0, abs=1e-12))
