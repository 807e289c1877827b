"""Closed forms of over-the-air aggregation (``aircomp``): without noise and truncation it
is FedAvg with uniform weights; under Rayleigh fading a client clears the threshold g
with probability e^{-g}; the aggregate's error variance per entry is sigma^2 / eta with
eta = P * min_k |h_k|^2 over the participants. Statistical checks allow 4 standard errors."""

import math

import numpy as np
import simpy
import torch

import simfl
from simfl.algorithms import build_aggregator
from simfl.core.config import AirComp
from simfl.core.records import Arrival, ClientUpdate, RoundOutcome
from simfl.core.rng import RngTree
from simfl.sim.mac.aircomp import AirCompAccess


def _slots(air, n_clients, rounds, mean_snr_db=None, seed=11):
    """The analog slot of ``rounds`` rounds in which all ``n_clients`` ask at once."""
    env = simpy.Environment()

    class Map:  # a radio map with one mean SNR for everyone
        def mean_snr_db(self, clients):
            return np.full(len(clients), mean_snr_db)

    access = AirCompAccess(air, env, RngTree(seed), n_clients, symbol_rate_hz=1e6,
                           deadline_s=10.0, radio_map=None if mean_snr_db is None else Map())
    access.update_bytes = 400
    started = np.arange(n_clients)
    for r in range(rounds):
        access.open_round(r, started)
        grants = [access.request(c) for c in started.tolist()]
        env.run()
        slot = access.air_slot()
        assert sorted(c for c, g in zip(started.tolist(), grants) if g.value) == list(
            slot.participants)
        yield slot


def test_participation_under_rayleigh_is_exp_minus_threshold(oracle):
    n, rounds = 1000, 60
    taken = sum(len(s.participants) for s in _slots(AirComp(gain_threshold=0.1), n, rounds))
    p = math.exp(-0.1)  # 0.904837
    assert abs(p - 0.904837) < 1e-6
    oracle("aircomp participation, Rayleigh, g_th = 0.1", p, taken / (n * rounds),
           4 * math.sqrt(p * (1 - p) / (n * rounds)))


def test_participation_scales_with_the_mean_snr(oracle):
    # mean |h|^2 = 10^(3/10): P(|h|^2 >= g) = exp(-g / 10^0.3)
    n, rounds, g = 1000, 30, 1.0
    taken = sum(len(s.participants)
                for s in _slots(AirComp(gain_threshold=g), n, rounds, mean_snr_db=3.0))
    p = math.exp(-g / 10 ** 0.3)
    oracle("aircomp participation, mean SNR 3 dB, g_th = 1", p, taken / (n * rounds),
           4 * math.sqrt(p * (1 - p) / (n * rounds)))


def _updates(clients, d, seed=5):
    gen = torch.Generator().manual_seed(seed)
    return [ClientUpdate(c, 0, 10, {"w": torch.randn(d, generator=gen, dtype=torch.float64)},
                         train_loss=0.0) for c in clients]


def _outcome(slot):
    return RoundOutcome(round=slot.round, t_open_s=0.0, t_deadline_s=10.0,
                        t_close_s=slot.t_start_s + slot.slot_s, n_available=len(slot.participants),
                        selected=slot.participants, missing=(), air=slot,
                        received=tuple(Arrival(c, slot.round, 1.0, 10) for c in slot.participants))


def test_aggregate_mse_is_noise_over_eta(oracle):
    power, noise_var, d = 2.0, 1e-3, 20_000
    air = AirComp(power=power, noise_var=noise_var, gain_threshold=0.1)
    agg = build_aggregator(air, 0.1)
    for slot in _slots(air, 8, 4, seed=3):
        # eta from the gains themselves: the same stream, drawn for every invitee in id order
        gains_rng = RngTree(3).stream(f"aircomp/gains/{slot.round}").exponential(size=8)
        eta = power * min(gains_rng[list(slot.participants)])
        updates = _updates(slot.participants, d, seed=slot.round)
        params = {"w": torch.zeros(d, dtype=torch.float64)}
        new, _, metrics = agg.aggregate(None, params, _outcome(slot), updates)
        estimated_sum = new["w"] * len(updates)  # server_lr = 1: w + sum_hat / n
        error = estimated_sum - sum(u.delta["w"] for u in updates)
        mse = float((error ** 2).mean())
        # the mean of d squared N(0, s^2) entries has standard error s^2 sqrt(2 / d)
        oracle(f"aircomp MSE sigma^2/eta, round {slot.round}", noise_var / eta, mse,
               4 * noise_var / eta * math.sqrt(2 / d))
        assert metrics["aircomp_mse"] == slot.mse


def test_without_noise_or_truncation_it_is_uniform_fedavg(tiny_scenario, tmp_path):
    base = tiny_scenario
    common = dict(task=base.task, population=simfl.Population(compute=base.population.compute),
                  network=simfl.Network(), run=simfl.Run(rounds=4))

    def final(algorithm, name):
        scenario = simfl.Scenario(name=name, seed=4, **common, server=simfl.Server(
            algorithm=algorithm, clients_per_round=5, deadline_s=1000.0))
        return simfl.run(scenario, tmp_path / name)

    fedavg = final(simfl.FedAvg(weighting="uniform"), "fedavg")
    air = final(AirComp(noise_var=0.0, gain_threshold=0.0), "aircomp")
    assert [o.selected for o in fedavg.outcomes] == [o.selected for o in air.outcomes]
    assert all(len(o.received) == 5 for o in air.outcomes)
    for name, value in fedavg.params.items():
        # both step by server_lr / n times the executor's sum of the deltas: the same floats
        assert torch.equal(air.params[name], value), name
    noisy = final(AirComp(noise_var=1e-2, gain_threshold=0.0), "noisy")
    assert not all(torch.allclose(noisy.params[name], value, rtol=0.0, atol=1e-6)
                   for name, value in fedavg.params.items())
