"""Batteries and energy: drain per state, depletion interrupts, restart threshold, charging."""

import math

import numpy as np
import pytest

import simfl
from conftest import everyone, make_sim
from simfl.core.config import (Battery, Charging, Energy, FixedRate, IdealChannel,
                               SlottedAlohaMac, apply_overrides)
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree
from simfl.metrics.rundir import read_csv
from simfl.metrics.invariants import check_energy
from simfl.sim.availability.rounds import AlwaysOnline
from simfl.sim.energy.battery import Batteries
from simfl.sim.energy.infinite import InfiniteEnergy
from simfl.sim.links.channel import build_link
from simfl.sim.simulation import Simulation

HOUR = 3600.0


def reasons(outcome):
    return {m.client: m.reason for m in outcome.missing}


def batteries(n=1, energy=Energy(idle_w=0.0), **battery):
    """Batteries of ``n`` devices, bound to a clock-less log (for the closed forms)."""
    b = Batteries(n, Battery(**battery), energy, RngTree(0))
    log = []
    b.bind(None, None, log.append)
    return b, log


def test_each_state_draws_its_power():
    # download 1 s at 1 W, compute 2 s at 3 W, upload 1 s at 2 W: 9 J of round work
    energy = Energy(idle_w=0.5, rx_w=1.0, compute_w=3.0, tx_w=2.0)
    b = Batteries(1, Battery(capacity_j=100.0), energy)
    sim = make_sim(n_clients=1, compute_s=(2.0,), download_s=1.0, upload_s=1.0, battery=b)
    outcome = sim.run_round(0, everyone)
    assert outcome.received[0].t_s == 4.0
    assert outcome.energy_j == pytest.approx(9.0, abs=1e-9)
    assert b.stored_j[0] == pytest.approx(91.0, abs=1e-9)
    assert b.stored_at(14.0)[0] == pytest.approx(86.0, abs=1e-9)  # 10 s idle at 0.5 W
    assert b.used_j[0] == pytest.approx(9.0, abs=1e-9)  # idle drain is not round work


def test_every_arq_attempt_costs_its_bits():
    # 3 lost uplink attempts of 8000 bits at 1e-4 J/bit, 1 s compute at 1 W
    energy = Energy(compute_w=1.0, tx_j_per_bit=1e-4, rx_w=0.0)
    sim = make_sim(n_clients=1, upload_s=1.0, p_erasure=1.0, arq=3, deadline_s=100.0,
                   battery=InfiniteEnergy(1, energy))
    outcome = sim.run_round(0, everyone)
    assert reasons(outcome) == {0: "erased"} and outcome.retries == 2
    assert outcome.energy_j == pytest.approx(1.0 + 3 * 0.8, abs=1e-9)


def test_infinite_energy_meters_but_never_interrupts():
    b = InfiniteEnergy(2, Energy(compute_w=1e4))
    sim = make_sim(n_clients=2, compute_s=(1.0, 2.0), battery=b)
    outcome = sim.run_round(0, everyone)
    assert len(outcome.received) == 2 and outcome.energy_j > 3e4
    assert b.table()["battery_deaths"].tolist() == [0, 0]


def test_depletion_interrupts_an_upload_in_flight():
    # 1 s compute at 1 W, then a 2 s upload at 2 W: 3 J last until t = 2 s, mid-upload
    energy = Energy(compute_w=1.0, tx_w=2.0, rx_w=0.0)
    b = Batteries(2, Battery(capacity_j=3.0), energy)
    sim = make_sim(n_clients=2, compute_s=(1.0,), upload_s=2.0, deadline_s=100.0, battery=b)
    outcome = sim.run_round(0, lambda view: np.array([0]))
    assert reasons(outcome) == {0: "battery"}
    assert outcome.missing[0].t_s == pytest.approx(2.0, abs=1e-9)
    assert outcome.t_close_s == pytest.approx(2.0, abs=1e-9)
    assert outcome.energy_j == pytest.approx(3.0, abs=1e-9)
    assert [e.kind for e in sim.events if e.client == 0][-2:] == ["battery_dead", "battery"]
    second = sim.run_round(1, lambda view: np.array([0]))  # dead, so not available: a blind
    assert second.n_available == 1 and reasons(second) == {0: "battery"}  # invite is missed
    assert second.missing[0].t_s == second.t_open_s
    assert b.deaths.tolist() == [1, 0]


def test_depletion_interrupts_compute():
    b = Batteries(1, Battery(capacity_j=1.5), Energy(compute_w=1.0, rx_w=0.0))
    sim = make_sim(n_clients=1, compute_s=(2.0,), deadline_s=100.0, battery=b)
    outcome = sim.run_round(0, everyone)
    assert reasons(outcome) == {0: "battery"} and outcome.missing[0].t_s == pytest.approx(1.5)
    assert not [e for e in sim.events if e.kind == "computed"]


def test_exactly_enough_energy_completes_the_upload():
    b = Batteries(1, Battery(capacity_j=3.0), Energy(compute_w=1.0, tx_w=2.0, rx_w=0.0))
    sim = make_sim(n_clients=1, compute_s=(1.0,), upload_s=1.0, battery=b)
    outcome = sim.run_round(0, everyone)
    assert [a.client for a in outcome.received] == [0]
    assert abs(b.stored_j[0]) < 1e-9 and b.deaths[0] == 0


def test_idle_device_dies_at_e_over_p_between_rounds():
    b, log = batteries(n=3, energy=Energy(idle_w=2.0), capacity_j=100.0, initial_soc_min=0.1)
    e0 = b.stored_j.copy()
    alive = b.alive(0, 1000.0)
    assert not alive.any() and b.stored_j.tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(b.last_death_s, e0 / 2.0, atol=1e-9)
    assert sorted(e.client for e in log if e.kind == "battery_dead") == [0, 1, 2]


def test_dead_device_waits_for_the_restart_threshold():
    # dead at t = 0; plugged in from 1 h at 0.01 W: 50 J (restart_soc 0.5 of 100 J) after 5000 s
    b, _ = batteries(capacity_j=100.0, initial_soc=0.0, restart_soc=0.5,
                     charging=Charging(power_w=0.01, start_hour=1.0, end_hour=5.0))
    assert not b.alive(0, HOUR + 4999.0)[0]
    assert b.stored_at(HOUR + 4999.0)[0] == pytest.approx(49.99, abs=1e-9)
    assert b.alive(1, HOUR + 5001.0)[0]


def test_charging_only_inside_the_window_and_wrapping_past_midnight():
    # window 22:00-02:00 at 1 W: from 0:00 (time 0) to 20:00 it charges 2 h, to 23:00 one
    # more hour, and to 04:00 the next day 3 more hours
    b, _ = batteries(capacity_j=1e6, initial_soc=0.0,
                     charging=Charging(power_w=1.0, start_hour=22.0, end_hour=2.0))
    assert b.stored_at(20 * HOUR)[0] == pytest.approx(2 * HOUR, abs=1e-6)
    assert b.stored_at(23 * HOUR)[0] == pytest.approx(3 * HOUR, abs=1e-6)
    assert b.stored_at(28 * HOUR)[0] == pytest.approx(6 * HOUR, abs=1e-6)


def test_cc_cv_curve_is_linear_then_exponential():
    # 1000 J, 1 W, CV from 80 %: CC 800 s, then 1000 - 200 exp(-t / tau), tau = 200 s
    b, _ = batteries(capacity_j=1000.0, initial_soc=0.0,
                     charging=Charging(power_w=1.0, start_hour=0.0, end_hour=12.0, cv_soc=0.8))
    assert b.stored_at(400.0)[0] == pytest.approx(400.0, abs=1e-9)
    assert b.stored_at(800.0 + 300.0)[0] == pytest.approx(1000.0 - 200.0 * math.exp(-1.5), abs=1e-9)


def test_work_while_plugged_in_draws_from_the_charger_until_the_window_ends():
    # plugged in until 1 h; 10 h of compute at 1 W on a 1800 J battery (0 W charging
    # power would not do: 1e-12 W): the battery empties 1800 s after the window closes
    charging = Charging(power_w=1e-12, start_hour=23.0, end_hour=1.0)
    b = Batteries(1, Battery(capacity_j=1800.0, charging=charging),
                  Energy(compute_w=1.0, rx_w=0.0))
    sim = make_sim(n_clients=1, compute_s=(10 * HOUR,), deadline_s=20 * HOUR, battery=b)
    outcome = sim.run_round(0, everyone)
    assert reasons(outcome) == {0: "battery"}
    assert outcome.missing[0].t_s == pytest.approx(HOUR + 1800.0, abs=1e-6)


def test_nobody_available_round_lasts_its_deadline():
    b = Batteries(2, Battery(initial_soc=0.0), Energy())
    sim = make_sim(n_clients=2, deadline_s=7.0, battery=b)
    outcome = sim.run_round(0, everyone)
    assert outcome.n_available == 0 and outcome.t_close_s == 7.0


def test_million_devices_are_vectorised():
    b, _ = batteries(n=10**6, energy=Energy(idle_w=0.01), initial_soc_min=0.5,
                     charging=Charging(start_hour=22.0, end_hour=6.0))
    # rounds every 10 min: after the first, only devices whose state may change are touched
    alive = [b.alive(r, 6 * HOUR + r * 600.0) for r in range(3)]
    assert alive[-1].all() and b.table()["client"].size == 0


def test_energy_invariant_catches_negative_energy_and_mismatch():
    table = {"client": [0], "energy_j": [5.0], "battery_deaths": [0], "min_stored_j": [-0.5],
             "final_stored_j": [1.0], "capacity_j": [10.0], "last_death_s": [math.nan]}
    problems = check_energy([], table)
    assert len(problems) == 2 and "lowest -0.5" in problems[0]


def test_config_validation_names_field_and_allowed():
    with pytest.raises(ConfigError) as err:
        Battery(initial_soc=1.5)
    assert "initial_soc" in str(err.value)
    with pytest.raises(ConfigError, match="tx_j_per_bit"):
        Energy(tx_w=1.0, tx_j_per_bit=1e-6)
    with pytest.raises(ConfigError, match="start_hour"):
        Charging(start_hour=24.0)
    assert Energy().tx_w == 4.0 and Energy(tx_j_per_bit=1e-6).tx_w is None


def test_battery_from_the_command_line(tiny_scenario):
    s = apply_overrides(tiny_scenario, [("population.battery", {"capacity_j": 500}),
                                        ("population.energy.tx_j_per_bit", 1e-7)])
    assert s.population.battery.capacity_j == 500.0 and s.population.energy.tx_w is None
    assert apply_overrides(s, [("population.battery", None)]).population.battery is None


def test_run_writes_client_energy(tiny_scenario, tmp_path):
    s = apply_overrides(tiny_scenario, [
        ("population.battery", {"capacity_j": 60, "initial_soc_min": 0.2}),
        ("run.timing_only", True), ("run.rounds", 10)])
    result = simfl.run(s, tmp_path / "run")
    rows = read_csv(result.out_dir / "clients.csv")
    rounds = read_csv(result.out_dir / "rounds.csv")
    total = sum(float(r["energy_j"]) for r in rows)
    assert total == pytest.approx(sum(float(r["energy_j"]) for r in rounds), rel=1e-9)
    assert result.summary["energy_j"] == pytest.approx(total)
    assert result.summary["battery_deaths"] > 0 and sum(int(r["n_battery"]) for r in rounds) > 0
    assert min(float(r["min_stored_j"]) for r in rows) >= -1e-9  # float rounding only


def aloha_sim(battery, n_clients=2, deadline_s=1.0):
    """Two clients that always collide (access_prob 1, 0.1 s slots); instant compute."""
    rngs = RngTree(4)
    return Simulation(
        rngs=rngs, n_samples=np.full(n_clients, 10), work_samples=np.zeros(n_clients),
        samples_per_s=np.ones(n_clients), online=AlwaysOnline(None, n_clients, rngs),
        links={"downlink": build_link(IdealChannel(rate=FixedRate(rate_bps=math.inf))),
               "uplink": build_link(IdealChannel(rate=FixedRate(rate_bps=8000.0)))},
        model_bytes=1000, arq_max_attempts=1, clients_per_round=n_clients, overcommit=1.0,
        deadline_s=deadline_s, battery=battery, mac=SlottedAlohaMac(access_prob=1.0, slot_s=0.1))


def test_every_contention_transmission_costs_energy():
    # 10 collided slots of 0.1 s at 2 W: 2 J per client. Each second of contention is
    # spent transmitting, so none of it is also charged the idle power (0.5 W).
    energy = Energy(idle_w=0.5, compute_w=0.0, tx_w=2.0, rx_w=0.0)
    sim = aloha_sim(InfiniteEnergy(2, energy))
    outcome = sim.run_round(0, everyone)
    assert reasons(outcome) == {0: "collided", 1: "collided"}
    assert outcome.energy_j == pytest.approx(4.0, abs=1e-9)


def test_contention_can_empty_the_battery():
    # 1 J pays for five 0.2 J transmissions: dead when the fifth slot ends (t = 0.5 s)
    energy = Energy(idle_w=0.0, compute_w=0.0, tx_w=2.0, rx_w=0.0)
    b = Batteries(2, Battery(capacity_j=1.0), energy)
    outcome = aloha_sim(b).run_round(0, everyone)
    assert reasons(outcome) == {0: "battery", 1: "battery"}
    assert [m.t_s for m in outcome.missing] == pytest.approx([0.5, 0.5])
    assert b.min_stored_j.min() >= 0.0 and outcome.energy_j == pytest.approx(2.0)


def test_a_late_device_kept_running_draws_busy_power_across_rounds():
    # client 1 computes 8.5 s at 3 W and uploads 1 s at 2 W (27.5 J) across four 4-s-deadline
    # rounds; client 0 does 5 J per round. Reading the stored energy while client 1 works
    # must not treat it as idle.
    energy = Energy(idle_w=0.5, rx_w=0.0, compute_w=3.0, tx_w=2.0)
    b = Batteries(2, Battery(capacity_j=100.0), energy)
    sim = make_sim(n_clients=2, compute_s=(1.0, 8.5), upload_s=1.0, deadline_s=4.0,
                   battery=b, keep_late=True)
    outcomes = [sim.run_round(0, everyone)]
    b.stored_at(sim.now_s)
    outcomes += [sim.run_round(r, everyone) for r in range(1, 4)]
    assert [a.client for a in outcomes[3].late_received] == [1] and sim.now_s == 10.0
    assert b.used_j[1] == pytest.approx(27.5, abs=1e-9)
    assert b.stored_at(10.0)[1] == pytest.approx(100.0 - 27.5 - 0.5 * 0.5, abs=1e-9)
    assert sum(o.energy_j for o in outcomes) == pytest.approx(4 * 5.0 + 27.5, abs=1e-9)


class _TooSlow(Exception):
    pass


def _within(seconds, work):
    """Run ``work()``; fail (instead of hanging the suite) if it takes over ``seconds``."""
    import signal

    def ring(signum, frame):
        raise _TooSlow(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return work()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_a_battery_run_of_1e8_simulated_seconds_finishes():
    # Late in a long run the clock's float resolution (1.5e-8 s at 1e8 s) exceeds the
    # delay a re-armed depletion timer computes from the few nJ left after rounding: the
    # timer must still move the clock (or settle), never ring at one instant forever.
    energy = Energy(idle_w=1.0, compute_w=5.0, tx_w=4.0, rx_w=1.0)
    battery = Battery(capacity_j=36_000.0, initial_soc=1.0, initial_soc_min=0.3, restart_soc=0.2,
                      charging=Charging(power_w=10.0, start_hour=22.0, end_hour=6.0, cv_soc=0.8))
    b = Batteries(3, battery, energy, RngTree(1))
    sim = make_sim(n_clients=3, compute_s=(4e4, 9e4, 2.5e5), upload_s=30.0, download_s=3.0,
                   deadline_s=6e5, battery=b)

    def run():
        r = 0
        while sim.now_s < 1e8:
            sim.run_round(r, everyone)
            r += 1
        return r

    rounds = _within(60.0, run)
    assert rounds > 100 and sim.now_s >= 1e8
    table = b.table()
    assert table["battery_deaths"].sum() > 0 and (b.stored_j >= 0.0).all()


def test_absurd_power_does_not_stall_the_clock():
    # 10 kW empties 3.6 mJ in 0.36 us: a few hundred steps of the clock late in a run
    energy = Energy(idle_w=0.0, compute_w=1e4, tx_w=4.0, rx_w=1.0)
    b = Batteries(2, Battery(capacity_j=3.6e-3), energy, RngTree(1))
    sim = make_sim(n_clients=2, compute_s=(1.0,), deadline_s=10.0, battery=b)
    sim.env.run(until=4.1e6)
    outcome = _within(30.0, lambda: sim.run_round(0, everyone))
    assert reasons(outcome) == {0: "battery", 1: "battery"}
    assert b.deaths.tolist() == [1, 1]


def test_charging_day_and_window_lengths_are_bounded():
    for period_h in (1e-300, 1e-5, float("inf"), float("nan"), 1e7):
        with pytest.raises(ConfigError, match="period_h"):
            Charging(period_h=period_h, start_hour=0.0, end_hour=1e-301)
    with pytest.raises(ConfigError, match="end_hour .*one second"):
        Charging(start_hour=1.0, end_hour=1.0 + 1e-9)
    with pytest.raises(ConfigError, match="cv_tau_s"):
        Charging(cv_soc=0.5, cv_tau_s=float("inf"))
    assert Charging(period_h=2.0 / 3600.0, start_hour=0.0, end_hour=1.0 / 3600.0).period_h > 0


def test_a_device_never_spends_more_than_its_battery_held():
    # at 4.1e6 s one clock step is 4.7e-10 s, 4.7 uJ at 10 kW (0.13 % of the 3.6 mJ cell):
    # a timer that rings a step late must not leave the battery overdrawn or charge the
    # energy it did not have
    energy = Energy(idle_w=0.0, compute_w=1e4, tx_w=4.0, rx_w=1.0)
    b = Batteries(2, Battery(capacity_j=3.6e-3), energy, RngTree(1))
    sim = make_sim(n_clients=2, compute_s=(1.0,), deadline_s=10.0, battery=b)
    sim.env.run(until=4.1e6)
    outcome = _within(30.0, lambda: sim.run_round(0, everyone))
    assert b.min_stored_j.tolist() == [0.0, 0.0]
    assert b.used_j == pytest.approx([3.6e-3, 3.6e-3], rel=1e-12)
    assert outcome.energy_j == pytest.approx(7.2e-3, rel=1e-12)


# ---- the split: power model, charging window, energy sources

def test_power_model_prices_each_state():
    from simfl.sim.energy.power_model import PowerModel

    fixed = PowerModel(Energy(idle_w=0.5, compute_w=3.0, tx_w=2.0, rx_w=1.0))
    assert fixed.state_w("compute") == (3.0, None) and fixed.state_w("idle") == (0.5, None)
    assert fixed.state_w("tx", 8000, 2.0) == (2.0, None) and fixed.state_w("rx", 8000, 2.0) == (1.0, None)
    per_bit = PowerModel(Energy(tx_j_per_bit=1e-4, rx_j_per_bit=1e-5), tx_rate_bps=1000.0)
    assert per_bit.state_w("tx", 8000, 2.0) == pytest.approx((0.4, None))
    assert per_bit.state_w("rx", 8000, 0.0) == (0.0, pytest.approx(0.08))  # a lump
    assert per_bit.contention_w() == pytest.approx(0.1)
    # a contention slot draws 2 W instead of the 0.5 W of waiting: 1.5 W on top of idle
    assert fixed.contention_extra_w() == pytest.approx(1.5)


def test_charging_window_wraps_midnight_and_no_charging_never_plugs():
    from simfl.sim.energy.charging import ChargingWindow, NoCharging

    window = ChargingWindow(Charging(power_w=10.0, start_hour=22.0, end_hour=6.0), 3600.0, 180.0)
    assert window.plugged(23 * HOUR, 23.5 * HOUR) and window.plugged(1 * HOUR, 2 * HOUR)
    assert not window.plugged(12 * HOUR, 13 * HOUR)
    assert window.next_edge(np.array([12 * HOUR, 22 * HOUR])).tolist() == [22 * HOUR, 30 * HOUR]
    assert window.charge(np.array([0.0, 3590.0]), np.array([100.0, 100.0])).tolist() == [1000.0, 3600.0]
    assert window.restart_in_s(np.array([0.0])).tolist() == [18.0]
    never = NoCharging()
    assert not never.plugged(0.0, 1.0) and not never.plugged_after(5.0)
    assert never.next_edge(np.array([0.0])).tolist() == [math.inf]
    assert never.charge(np.array([1.0]), np.array([5.0])).tolist() == [1.0]


def test_build_energy_source_picks_batteries_or_an_infinite_meter():
    from simfl.sim.energy.battery import build_energy_source

    infinite = build_energy_source(3, None, Energy())
    assert isinstance(infinite, InfiniteEnergy) and infinite.alive(0, 0.0).all()
    assert set(infinite.table()) == {"client", "energy_j", "battery_deaths"}
    finite = build_energy_source(3, Battery(initial_soc=0.0), Energy(), RngTree(0))
    assert isinstance(finite, Batteries) and not finite.alive(0, 0.0).any()
    assert finite.is_dead(1) and not infinite.is_dead(1)
