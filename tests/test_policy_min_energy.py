"""The least-energy allocation (server.policy = min_energy) against hand-computed rounds."""

import math

import numpy as np
import pytest

from band_helpers import band_sim, everyone, with_radio
from simfl.algorithms.min_energy import MinEnergyPolicy
from simfl.core.config import OfdmaMac
from simfl.core.config.policy import MinEnergy
from simfl.core.round_policy import Dvfs, RadioState, RoundState
from simfl.sim.rounds.resources import RoundResources

SPARE = 1e-9  # the policy keeps a billionth of the deadline spare


def state(compute_s, uplink_bps, *, deadline_s=10.0, download_s=0.5, bits=8e6, tx_w=4.0,
          dvfs=None, radio=None):
    n = len(compute_s)
    return RoundState(round=0, t_s=0.0, deadline_s=deadline_s, clients=np.arange(n),
                      n_samples=np.full(n, 10), compute_s=np.asarray(compute_s, float),
                      download_s=np.full(n, download_s), uplink_bps=np.asarray(uplink_bps, float),
                      upload_bits=bits, tx_w=tx_w, battery_j=np.full(n, np.inf),
                      energy_used_j=np.zeros(n), last_round=np.full(n, -1), ofdma=True,
                      dvfs=dvfs, radio=radio)


def test_shares_follow_the_square_root_rule_above_each_least_share():
    # S = 8 Mb, rates R = 4, 8, 16 Mb/s, w = 4 W, deadline 10 s, downloads 0.5 s,
    # compute 1, 1, 8.5 s: upload time left D = 8.5, 8.5, 1 s, least shares
    # S / (R D) = 0.2353, 0.1176, 0.5 (sum 0.85: everyone fits).
    # Energy w S / (R f): marginal saving w S / (R f^2) = lambda, so f ~ 1 / sqrt(R):
    # 0.4531, 0.3204, 0.2265 -- client 2 needs 0.5, so it sits at 0.5 and clients 0 and 1
    # split the other half 1/2 : 1/sqrt(8): f0 = 0.5 sqrt2 / (sqrt2 + 1) = 1 - sqrt2/2
    # = 0.292893, f1 = (sqrt2 - 1) / 2 = 0.207107 (both above their least shares).
    # Energy 8/0.292893 + 4/0.207107 + 4 x 0.5/0.5 = 27.3137 + 19.3137 + 4 = 50.6274 J.
    s = state([1.0, 1.0, 8.5], [4e6, 8e6, 16e6])
    allocation = MinEnergyPolicy(MinEnergy()).decide(s)
    assert list(allocation.selected) == [0, 1, 2] and not allocation.cpu_hz
    f = np.array([allocation.share[k] for k in range(3)])
    assert f == pytest.approx([1 - math.sqrt(2) / 2, (math.sqrt(2) - 1) / 2, 0.5], rel=1e-7)
    assert f.sum() <= 1.0
    energy = 4.0 * 8e6 / (np.array([4e6, 8e6, 16e6]) * f)
    assert energy.sum() == pytest.approx(50.6274, abs=1e-4)
    assert 8.5 + 8e6 / (16e6 * f[2]) <= 10.0  # the slow client still lands in time


def test_candidates_that_cannot_finish_or_do_not_fit_are_left_out():
    # least shares: 8/(8 x 4.5) = 0.2222, 8/(8 x 1.5) = 0.6667, 8/(8 x 1) = 1 and an
    # impossible one (compute 9.6 s leaves no time): admitted by least share while the
    # sum stays <= 1 -> 0 (0.22), 1 (0.89); client 2 (1.89) and 3 are out
    s = state([5.0, 8.0, 8.5, 9.6], [8e6] * 4)
    allocation = MinEnergyPolicy(MinEnergy()).decide(s)
    assert list(allocation.selected) == [0, 1]
    # equal rates: f ~ 1/sqrt(R) is equal, 1/2 each, but client 1 needs 2/3 -> 2/3 and 1/3
    assert [allocation.share[0], allocation.share[1]] == pytest.approx([1 / 3, 2 / 3], rel=1e-7)


def test_dvfs_clocks_are_the_slowest_that_meet_the_deadline():
    # Two identical clients: S = 8 Mb at R = 8 Mb/s, C = 1e4 x 7e5 = 7e9 cycles, clock at
    # most 2 GHz, kappa 1e-28, download 1 s, deadline 10 s. By symmetry each gets half the
    # band: upload 8 / 4 = 2 s, which leaves 10 - 1 - 2 = 7 s to compute: f = 7e9 / 7 = 1 GHz.
    # Energy each: kappa C f^2 = 1e-28 x 7e9 x 1e18 = 0.7 J computing, 4 W x 2 s = 8 J sending.
    dvfs = Dvfs(np.full(2, 2e9), np.full(2, 7e5), 1e4, 1e-28)
    s = state([3.5, 3.5], [8e6, 8e6], download_s=1.0, dvfs=dvfs)
    allocation = MinEnergyPolicy(MinEnergy()).decide(s)
    assert [allocation.share[0], allocation.share[1]] == pytest.approx([0.5, 0.5], rel=1e-9)
    assert [allocation.cpu_hz[0], allocation.cpu_hz[1]] == pytest.approx([1e9, 1e9], rel=1e-7)
    assert 1e-28 * 7e9 * allocation.cpu_hz[0] ** 2 == pytest.approx(0.7, rel=1e-6)


def test_radio_and_dvfs_shares_have_equal_marginal_savings():
    # KKT, checked with the formulas written out here: clients off their least share
    # have equal -dE/df = (w + 2 kappa C^3 / (T - u)^3) S r'(f) / r(f)^2, and moving band
    # between them raises the energy.
    band_hz, n0 = 1e6, 1e-20
    a_hz = np.array([3e7, 1e7, 4e6])  # P g / N0: full-band SNR 30, 10, 4
    gain_db = 10 * np.log10(a_hz * n0 / 1e-3)  # at 0 dBm
    radio = RadioState(np.zeros(3), np.zeros(3), np.zeros(3, dtype=int), gain_db, np.zeros(3),
                       np.zeros(3), 10 * np.log10(a_hz / band_hz), band_hz, n0)
    bits, w, kappa = 2e6, 1.0, 1e-28
    dvfs = Dvfs(np.full(3, 2e9), np.array([1e5, 2e5, 1e5]), 1e4, kappa)
    full = band_hz * np.log2(1 + a_hz / band_hz)
    s = state([0.5, 1.0, 0.5], full, download_s=0.2, bits=bits, tx_w=w, dvfs=dvfs, radio=radio)
    allocation = MinEnergyPolicy(MinEnergy()).decide(s)
    f = np.array([allocation.share[k] for k in range(3)])
    t = 10.0 * (1 - SPARE) - 0.2
    cycles = 1e4 * dvfs.work_samples

    def energy(f):
        b = f * band_hz
        u = bits / (b * np.log2(1 + a_hz / b))
        return w * u + kappa * cycles ** 3 / (t - u) ** 2

    def saving(f):
        b = f * band_hz
        x = a_hz / b
        r = b * np.log2(1 + x)
        slope = band_hz * (np.log2(1 + x) - x / ((1 + x) * math.log(2)))
        u = bits / r
        return (w + 2 * kappa * cycles ** 3 / (t - u) ** 3) * bits * slope / r ** 2

    assert f.sum() == pytest.approx(1.0, abs=1e-12)
    m = saving(f)
    assert m == pytest.approx(np.full(3, m.mean()), rel=1e-6)
    for i, j in ((0, 1), (1, 2), (0, 2)):
        moved = f.copy()
        moved[i] += 1e-4
        moved[j] -= 1e-4
        assert energy(moved).sum() > energy(f).sum()
    u = bits / (f * band_hz * np.log2(1 + a_hz / (f * band_hz)))
    clocks = np.array([allocation.cpu_hz[k] for k in range(3)])
    assert clocks == pytest.approx(cycles / (t - u), rel=1e-9)


def test_the_simulation_runs_the_shares_and_lands_at_the_hand_computed_times():
    # band_helpers: 10 Mb uploads on a 10 Mb/s band (1 s alone), instant downloads,
    # compute 1, 1, 8 s, deadline 10 s. Least shares 1/9, 1/9, 1/2; equal rates give
    # equal shares above the least, so client 2 gets 1/2 and the others 1/4 each.
    # Arrivals: 1 + 1/0.25 = 5 s, 5 s, 8 + 1/0.5 = 10 s (a billionth early).
    sim = band_sim([1.0, 1.0, 8.0], OfdmaMac(), deadline_s=10.0)
    sim.resources = RoundResources(MinEnergyPolicy(MinEnergy()), sim.devices, 3)
    outcome = sim.run_round(0, everyone)
    got = {a.client: a.t_s for a in outcome.received}
    assert got == pytest.approx({0: 5.0, 1: 5.0, 2: 10.0}, rel=1e-7)
    assert got[2] <= 10.0 and not outcome.missing
    # the next round, without decisions, is the scheduler's again (equal split): from
    # t = 10 + 1 the two fast clients hold 1/2 each (done 2 s later), client 2 goes alone
    # from 10 + 8 for 1 s
    sim.resources = None
    again = {a.client: a.t_s for a in sim.run_round(1, everyone).received}
    assert again == pytest.approx({0: 13.0, 1: 13.0, 2: 19.0}, rel=1e-9)


def test_dvfs_clocks_run_in_the_simulation_for_the_round_only():
    # 2 samples of work at 1e9 cycles each, clock at most 1e9 Hz (2 s), kappa 1e-28;
    # uploads 1 s alone, deadline 10 s: half the band each (2 s), so the clocks slow to
    # 2e9 / (10 - 2) = 2.5e8 Hz: computing ends at 8 s, the uploads at 10 s.
    sim = band_sim([2.0, 2.0], OfdmaMac(), deadline_s=10.0)
    sim.energy.power.compute_w_by_client = np.full(2, 1e-28 * 1e27)
    dvfs = Dvfs(np.full(2, 1e9), np.full(2, 2.0), 1e9, 1e-28)
    sim.resources = RoundResources(MinEnergyPolicy(MinEnergy()), sim.devices, 2, dvfs=dvfs)
    outcome = sim.run_round(0, everyone)
    computed = [e.t_s for e in sim.events if e.kind == "computed"]
    assert computed == pytest.approx([8.0, 8.0], rel=1e-7)
    assert [a.t_s for a in outcome.received] == pytest.approx([10.0, 10.0], rel=1e-7)
    assert sim.compute_s(0) == 2.0  # back to the client's own clock
    assert sim.energy.power.compute_w_by_client.tolist() == [1e-28 * 1e27] * 2


def test_powers_set_by_a_policy_change_the_band_rate_for_the_round_only():
    from simfl.core.round_policy import Allocation

    class Quieter:
        def decide(self, state):
            return Allocation(selected=[0, 1], share={0: 0.5, 1: 0.5},
                              tx_power_dbm={0: -10.0})

    a_hz = np.array([1e6, 1e6])  # at 0 dBm: SNR 1 over the 1 MHz band
    air = with_radio(a_hz * 1e-18)
    sim = band_sim([0.0, 0.0], OfdmaMac(), air=air)
    sim.resources = RoundResources(Quieter(), sim.devices, 2, radio_map=air.radio_map,
                                   max_tx_power_dbm=np.zeros(2))
    got = {a.client: a.t_s for a in sim.run_round(0, everyone).received}
    # 0.5 MHz each: client 1 at b log2(1 + a/b) = 0.5e6 log2(3); client 0 at a tenth of the
    # power: 0.5e6 log2(1 + 0.2); 10 Mb each
    assert got[1] == pytest.approx(10e6 / (0.5e6 * math.log2(3.0)), rel=1e-9)
    assert got[0] == pytest.approx(10e6 / (0.5e6 * math.log2(1.2)), rel=1e-9)
    assert air.radio_map.tx_power_dbm.tolist() == [0.0, 0.0]  # back after the round
