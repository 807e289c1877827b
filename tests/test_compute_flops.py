"""Compute time that follows the model: speeds in FLOP/s or device classes, and DVFS
energy (E = kappa c D f^2 in c D / f seconds)."""

import numpy as np
import pytest

import simfl
from simfl import apply_overrides, load_scenario
from simfl.core.config import parse_override
from simfl.core.errors import ConfigError
from simfl.experiment.build import build_context, build_online, build_simulation


def timing(*settings, base="quickstart"):
    scenario = apply_overrides(load_scenario(base), [parse_override(s) for s in (
        "run.rounds=1", "run.timing_only=true", "task.dataset=mnist5k", *settings)])
    ctx = build_context(scenario)
    return build_simulation(ctx, build_online(ctx))


def hand_training_flops(forward_macs):
    """Forward, weight gradient and input gradient (all but the first layer): 2 FLOPs a
    multiply-add each."""
    return 2 * (3 * sum(forward_macs) - forward_macs[0])


def test_flops_speed_makes_cnn_slower_than_logreg_by_their_flops():
    # FedAvg's CNN on 28 x 28 x 1, "same" 5 x 5 convolutions, 2 x 2 pooling after each
    cnn = [32 * 1 * 5 * 5 * 28 * 28, 64 * 32 * 5 * 5 * 14 * 14, 512 * 7 * 7 * 64, 10 * 512]
    logreg = [10 * 28 * 28]
    expected = hand_training_flops(cnn) / hand_training_flops(logreg)
    times = {}
    for model in ("cnn", "logreg"):
        sim = timing(f"task.model={model}", "population.compute.flops_per_s=1e10",
                     "population.compute.sigma=0.5")
        times[model] = np.array([sim.compute_s(c) for c in range(5)])
    assert times["cnn"] / times["logreg"] == pytest.approx(np.full(5, expected), rel=1e-12)
    assert expected > 2000


def test_device_class_is_its_flops_and_samples_per_s_ignores_the_model():
    phone = timing("task.model=logreg", "population.compute.device=phone")
    flops = timing("task.model=logreg", "population.compute.flops_per_s=1e10")
    assert phone.compute_s(3) == flops.compute_s(3)
    same = [timing(f"task.model={m}").compute_s(3) for m in ("cnn", "logreg")]
    assert same[0] == same[1]


def test_one_speed_at_a_time():
    with pytest.raises(ConfigError, match="flops_per_s"):
        simfl.Compute(median_samples_per_s=10.0, flops_per_s=1e9)
    with pytest.raises(ConfigError, match="device"):
        simfl.Compute(device="toaster")


def test_dvfs_time_and_energy(tmp_path):
    # kappa 1e-28, c = 1e4 cycles/sample, D = 500 samples, f = 1 GHz: 5 ms and 0.5 mJ
    scenario = apply_overrides(load_scenario("quickstart"), [parse_override(s) for s in (
        "run.rounds=1", "run.timing_only=true", "task.n_clients=2", "task.batch_size=50",
        "task.local_steps=10", "server.clients_per_round=2", "population.availability=always",
        "population.compute.cpu_hz=1e9", "population.compute.sigma=0",
        "population.energy.tx_w=0", "population.energy.rx_w=0",
        "network.uplink.p=0")])
    assert scenario.task.work_samples(700) == 500
    ctx = build_context(scenario)
    sim = build_simulation(ctx, build_online(ctx))
    assert sim.compute_s(0) == pytest.approx(5e-3, rel=1e-12)
    (outcome,) = simfl.run(scenario, tmp_path / "dvfs").outcomes
    assert len(outcome.received) == 2
    assert outcome.energy_j == pytest.approx(2 * 0.5e-3, rel=1e-9)
