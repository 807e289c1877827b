"""Uplink power control that costs energy: NR fractional power control by hand, the
amplifier's draw (circuit power plus radiated power over the efficiency) for one upload,
what they change and what they leave alone, resume, and one line for bad input."""

import math

import pytest

from simfl.cli import main as cli_main
from simfl.core.config import (Amplifier, Cells, Energy, FractionalPower, GridPlacement, Radio,
                               apply_overrides, load_scenario, parse_override)
from simfl.core.rng import RngTree
from simfl.experiment import run_scenario
from simfl.sim.radio.propagation import build_radio_map
from stopped_runs import assert_resumes_identically

#: one client at the origin, its access point 100 m away: PL = 40 + 35 log10(100) = 110 dB
#: and noise -174 + 60 + 7 = -107 dBm over 1 MHz
PL_100_M_DB, NOISE_DBM = 110.0, -107.0


def _power_dbm(rule, bandwidth_hz=1e6, d_m=100.0):
    radio = Radio(power_control=rule, bandwidth_hz=bandwidth_hz)
    radio_map, _ = build_radio_map(GridPlacement(), Cells(access_points=((d_m, 0.0),)),
                                   radio, 1, RngTree(0))
    return float(radio_map.tx_power_dbm[0])


def test_fractional_power_by_hand():
    # 1 MHz in 180 kHz blocks: 5 blocks; -90 + 10 log10 5 + 0.8 x 110 = 4.98970 dBm
    assert _power_dbm(FractionalPower()) == pytest.approx(4.989700043, abs=1e-9)
    # 5 MHz: 27 blocks (27.8 rounded down); alpha 0.5, p0 -60: -60 + 14.31364 + 55
    assert _power_dbm(FractionalPower(alpha=0.5, p0_dbm=-60.0), bandwidth_hz=5e6) == \
        pytest.approx(9.313637642, abs=1e-9)
    # alpha 0: the same power wherever the client is
    assert _power_dbm(FractionalPower(alpha=0.0), d_m=30.0) == \
        pytest.approx(-90.0 + 10 * math.log10(5), abs=1e-12)
    # full compensation past the maximum: capped at tx_power_dbm = 23 dBm
    assert _power_dbm(FractionalPower(alpha=1.0, p0_dbm=-80.0)) == 23.0


def test_resource_blocks_are_whole_blocks_of_the_band():
    rule = FractionalPower()
    assert [rule.resource_blocks(b) for b in (1e5, 180e3, 1e6, 5e6, 20e6)] == [1, 1, 5, 27, 111]


def _one_upload(tmp_path, name, *more):
    """A timing-only round of one client 100 m from its access point that only uploads
    1 Mb (no compute or receive energy): its energy_j and the round's close."""
    sets = ["task.n_clients=1", "server.clients_per_round=1", "run.rounds=1",
            "run.timing_only=true", "population.availability.kind=always",
            'population.compute={"median_samples_per_s": 1e12, "sigma": 0.0}',
            "population.placement=grid", 'network.cells={"access_points": [[100.0, 0.0]]}',
            "network.radio={}", "network.uplink=ideal", "network.downlink=ideal",
            "network.model_bytes=125000", "server.deadline_s=100",
            'population.energy={"idle_w": 0.0, "compute_w": 0.0, "rx_w": 0.0}', *more]
    scenario = apply_overrides(load_scenario("quickstart"), [parse_override(s) for s in sets])
    out = run_scenario(scenario, tmp_path / name).out_dir
    header, row = (out / "rounds.csv").read_text().splitlines()[:2]
    return float(row.split(",")[header.split(",").index("energy_j")])


def test_one_upload_costs_circuit_plus_radiated_over_efficiency(tmp_path):
    # fractional control: P = 4.98970 dBm = 3.15479 mW, SNR = 4.98970 - 110 + 107 dB
    p_dbm = -90.0 + 10 * math.log10(5) + 0.8 * PL_100_M_DB
    snr = 10 ** ((p_dbm - PL_100_M_DB - NOISE_DBM) / 10)
    airtime_s = 1e6 / (1e6 * math.log2(1 + snr))
    draw_w = 0.2 + 10 ** ((p_dbm - 30) / 10) / 0.25
    got = _one_upload(tmp_path, "fpc", "network.radio.power_control.kind=fractional",
                      'population.energy.amplifier={"circuit_w": 0.2, "efficiency": 0.25}')
    assert airtime_s == pytest.approx(0.73099, rel=1e-5)
    assert got == pytest.approx(draw_w * airtime_s, rel=1e-9)
    # at the maximum (fixed) power the amplifier draws more but the upload is shorter:
    # 23 dBm = 0.19953 W, SNR 20 dB
    fixed = _one_upload(tmp_path, "fixed",
                        'population.energy.amplifier={"circuit_w": 0.2, "efficiency": 0.25}')
    assert fixed == pytest.approx((0.2 + 0.199526231 / 0.25) / math.log2(101.0), rel=1e-8)


def test_without_an_amplifier_transmit_power_is_flat_and_the_config_unchanged(tmp_path):
    # tx_w (4 W by default) whatever the radiated power: the upload's airtime times 4 W
    flat = _one_upload(tmp_path, "flat", "network.radio.power_control.kind=fractional")
    p_dbm = -90.0 + 10 * math.log10(5) + 0.8 * PL_100_M_DB
    snr = 10 ** ((p_dbm - PL_100_M_DB - NOISE_DBM) / 10)
    assert flat == pytest.approx(4.0 / math.log2(1 + snr), rel=1e-9)
    assert Energy().tx_w == 4.0 and Energy(amplifier=Amplifier()).tx_w is None


def test_a_resumed_run_with_power_control_and_an_amplifier_ends_the_same(tmp_path):
    # contention slots are charged per client too (slotted ALOHA, a battery to drain)
    sets = ["run.rounds=7", "run.timing_only=true", "run.events=true",
            "population.placement=disc", "network.radio={}", "network.uplink=ideal",
            "network.downlink=ideal", "network.radio.power_control.kind=fractional",
            "population.energy.amplifier={}", "network.mac=slotted_aloha",
            "network.mac.contention=per_event", 'population.battery={"capacity_j": 400}']
    scenario = apply_overrides(load_scenario("quickstart"), [parse_override(s) for s in sets])
    assert_resumes_identically(scenario, tmp_path, 3, 6,
                               ("rounds.csv", "events.csv", "clients.csv"))


RADIO = ["--set", "population.placement=disc", "--set", "network.radio={}",
         "--set", "network.uplink=ideal", "--set", "network.downlink=ideal"]


@pytest.mark.parametrize("override, field", [
    ('network.radio.power_control={"kind": "fractional", "alpha": 1.5}', "alpha"),
    ('network.radio.power_control={"kind": "fractional", "alpha": -0.2}', "alpha"),
    ('network.radio.power_control={"kind": "fractional", "p0_dbm": 40}', "p0_dbm"),
    ('network.radio.power_control={"kind": "fractional", "rb_bandwidth_hz": 0}',
     "rb_bandwidth_hz"),
    ('population.energy.amplifier={"efficiency": 0}', "efficiency"),
    ('population.energy.amplifier={"efficiency": 1.2}', "efficiency"),
    ('population.energy.amplifier={"circuit_w": -0.1}', "circuit_w"),
])
def test_bad_power_control_or_amplifier_is_one_line(override, field, capsys):
    code = cli_main(["validate", "quickstart", *RADIO, "--set", override])
    err = capsys.readouterr().err.strip()
    assert code == 2 and field in err and len(err.splitlines()) == 1, err


def test_an_amplifier_without_a_radio_is_one_line(capsys):
    code = cli_main(["validate", "quickstart", "--set", "population.energy.amplifier={}"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "network.radio" in err and len(err.splitlines()) == 1, err
