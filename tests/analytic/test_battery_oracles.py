"""Closed-form oracles of the battery model (docs/network-models.md section 3.1).

Each check drives whole ``Simulation`` rounds (devices downloading, computing,
uploading, idling, dying and recharging) and reads the result from what the simulator
recorded, never from re-evaluating the formula. Deterministic quantities are checked to
1e-6 s; the mean lifetime over seeded replications to 4 standard errors (CLT).
"""

import math

import numpy as np
import pytest

from conftest import make_sim
from simfl.core.config import Battery, Charging, Energy
from simfl.core.rng import RngTree
from simfl.sim.energy.battery import Batteries

P_W = 0.5
CAPACITY_J = 100.0
SOC_MIN = 0.2


def constant_power_run(seed, n_clients=200, per_round=20, rounds=40):
    """Devices whose every state draws P_W; random work, random invitations. Returns the
    initial energies, the recorded death times and the battery outcomes of the rounds."""
    battery = Batteries(n_clients, Battery(capacity_j=CAPACITY_J, initial_soc_min=SOC_MIN),
                        Energy(idle_w=P_W, compute_w=P_W, tx_w=P_W, rx_w=P_W), RngTree(seed))
    e0 = battery.stored_j.copy()
    draws = RngTree(seed).stream("test/work")
    sim = make_sim(n_clients=n_clients, compute_s=draws.uniform(1.0, 40.0, n_clients),
                   upload_s=2.0, download_s=0.5, deadline_s=30.0, seed=seed, battery=battery)
    pick = RngTree(seed).stream("test/invite")
    outcomes = [sim.run_round(r, lambda view: pick.permutation(view.available)[:per_round])
                for r in range(rounds)]
    return e0, battery.table(), outcomes


def test_lifetime_is_e0_over_p_for_every_device():
    e0, table, outcomes = constant_power_run(seed=0)
    assert (table["battery_deaths"] == 1).all() and len(table["client"]) == len(e0)
    np.testing.assert_allclose(table["last_death_s"], e0 / P_W, rtol=0, atol=1e-6)
    at_work = [m for o in outcomes for m in o.missing if m.reason == "battery"]
    assert len(at_work) > 20  # many die mid-round, the others while idle
    for m in at_work:
        assert m.t_s == pytest.approx(e0[m.client] / P_W, abs=1e-6)


def test_mean_lifetime_over_replications(oracle):
    lifetimes = np.concatenate([constant_power_run(seed)[1]["last_death_s"]
                                for seed in range(1, 4)])
    expected = CAPACITY_J * (SOC_MIN + 1.0) / 2.0 / P_W  # E0 ~ U(0.2, 1) * capacity
    se = CAPACITY_J * (1.0 - SOC_MIN) / math.sqrt(12.0) / P_W / math.sqrt(len(lifetimes))
    oracle("battery lifetime E0/P, mean over devices (s)", expected, lifetimes.mean(), 4.0 * se)


@pytest.mark.parametrize("cv_soc, restart_soc, expected_s", [
    (None, 0.5, 0.5 * 3600.0 / 1.0),                        # constant power: restart * C / P
    (0.8, 0.9, 0.8 * 3600.0 + 720.0 * math.log(0.2 / 0.1)),  # CC to 80 %, then CV, tau = 720 s
])
def test_time_to_restart_while_charging(cv_soc, restart_soc, expected_s, oracle):
    # a flat battery, plugged in from 01:00 at 1 W; the server polls every 10 s
    charging = Charging(power_w=1.0, start_hour=1.0, end_hour=5.0, cv_soc=cv_soc)
    battery = Batteries(1, Battery(capacity_j=3600.0, initial_soc=0.0, restart_soc=restart_soc,
                                   charging=charging), Energy())
    sim = make_sim(n_clients=1, deadline_s=10.0, battery=battery)
    outcome = sim.run_round(0, lambda view: view.available)
    while outcome.n_available == 0:
        outcome = sim.run_round(outcome.round + 1, lambda view: view.available)
    t_back = outcome.t_open_s - 3600.0  # the poll that found it available, from the window start
    assert t_back >= expected_s  # never back before the closed form; polls are 10 s apart
    oracle(f"time to restart, {'CC-CV' if cv_soc else 'constant power'} (s)", expected_s + 5.0,
           t_back, 5.0)
