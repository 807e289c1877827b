"""The multi-cell study (7 UMa sites, interference, fractional power control, a
frequency-selective band under three OFDMA schedulers): its quick mode end to end, its
power-control operating points, a layout that survives being written out and read back
(overrides, sweeps, resume), a byte-identical resume, and one line for each bad
multi-cell setting."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from simfl.cli import main as cli_main
from simfl.core.config import Scenario, apply_overrides, parse_override
from simfl.sim.radio.power_control import fractional_power
from stopped_runs import assert_resumes_identically

SCRIPT = Path(__file__).resolve().parents[1] / "scenarios" / "multicell.py"
_spec = importlib.util.spec_from_file_location("multicell_study", SCRIPT)
study = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(study)


def test_the_quick_study_sweeps_the_grid_and_draws_its_figure(tmp_path, capsys):
    study.main(["--out", str(tmp_path / "mc"), "--quick"])
    out = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in out[1:] if line.strip() and not line.startswith("figure")]
    assert len(rows) == 4  # two distances x two schedulers, alpha 1
    assert {row[0] for row in rows} == {"200", "1000"}
    assert {row[2] for row in rows} == {"equal", "max_rate"}
    length = {(row[0], row[2]): float(row[3]) for row in rows}
    energy = {(row[0], row[2]): float(row[5]) for row in rows}
    # five times the distance: more path loss, more clients at full power and lower rates,
    # so longer uploads that cost more energy
    assert length[("1000", "equal")] > length[("200", "equal")]
    assert energy[("1000", "equal")] > energy[("200", "equal")]
    assert (tmp_path / "mc" / "multicell.png").stat().st_size > 10_000


def test_the_study_scenario_is_seven_interfering_uma_cells():
    scenario = study.scenario()
    assert len(scenario.network.cells.access_points) == 7
    assert scenario.network.radio.path_loss.kind == "uma"
    mac = scenario.network.mac
    assert mac.kind == "ofdma" and mac.interference == "average"
    # a frequency-selective band, scheduled per block and interval
    assert mac.selectivity.kind == "rayleigh" and mac.resource_blocks == 25
    assert scenario.population.energy.amplifier is not None
    for isd in study.GRID[study.ISD]:  # every grid point validates
        for power in study.GRID[study.POWER]:
            for sched in study.GRID[study.SCHEDULER]:
                apply_overrides(scenario, [(study.ISD, isd), (study.POWER, power),
                                           (study.SCHEDULER, sched)])


def test_every_alpha_receives_the_reference_client_at_the_same_power():
    radio = study.scenario().network.radio
    m_rb = math.floor(radio.bandwidth_hz / 180e3)
    received = []
    for power in study.GRID[study.POWER]:
        rule = apply_overrides(study.scenario(), [(study.POWER, power)]).network.radio.power_control
        gains = -np.array([100.0, study.REFERENCE_LOSS_DB, 140.0])
        p_dbm = fractional_power(rule, radio, gains, np.full(3, 1e3))  # no cap
        received.append(p_dbm - 10 * math.log10(m_rb) + gains)
    received = np.array(received)  # per alpha: near, reference, far client (dBm per block)
    assert received[:, 1] == pytest.approx([study.TARGET_RB_DBM] * 3, abs=1e-9)
    # a smaller alpha compensates less of the loss: the near client is received stronger,
    # the far one weaker; alpha 1 receives all three alike
    assert received[0, 0] > received[1, 0] > received[2, 0]
    assert received[0, 2] < received[1, 2] < received[2, 2]
    assert received[2] == pytest.approx([study.TARGET_RB_DBM] * 3, abs=1e-9)


def test_a_layout_read_back_derives_its_access_points_afresh():
    scenario = study.scenario()
    # written out with the derived list as null, then read back
    again = Scenario.from_dict(scenario.explicit_dict())
    assert again.network.cells.access_points == scenario.network.cells.access_points
    wider = apply_overrides(scenario, [("network.cells.hexagonal.isd_m", 1000.0)])
    assert wider.network.cells.access_points[1] == pytest.approx(
        tuple(2 * v for v in scenario.network.cells.access_points[1]))
    sectored = apply_overrides(wider, [("network.cells.hexagonal.sectors", 3)])
    assert len(sectored.network.cells.access_points) == 21


def test_a_timing_only_flag_on_a_layout_is_accepted(tmp_path, capsys):
    code = cli_main(["run", "multicell", "--timing-only", "--out", str(tmp_path / "r"),
                     "--set", "run.rounds=2"])
    assert code == 0, capsys.readouterr().err


def test_a_resumed_multicell_run_ends_byte_identical(tmp_path):
    sets = ["run.rounds=5", "run.events=true", "network.cells.hexagonal.sectors=3",
            "network.mac.scheduler=proportional_fair", "server.clients_per_round=12"]
    scenario = apply_overrides(study.scenario(), [parse_override(s) for s in sets])
    assert_resumes_identically(scenario, tmp_path, 2, 4,
                               ("rounds.csv", "evals.csv", "events.csv", "clients.csv"))


LAYOUT = ["--set", 'population.placement={"kind": "hexagonal", "min_m": 35}',
          "--set", 'network.cells={"hexagonal": {"rings": 1, "isd_m": 500}}',
          "--set", "network.uplink=ideal", "--set", "network.mac=ofdma"]


@pytest.mark.parametrize("radio, field, allowed", [
    ('{"path_loss": {"kind": "uma", "carrier_hz": 0.4e9}}', "carrier_hz", "0.5 to 100 GHz"),
    ('{"path_loss": {"kind": "umi", "carrier_hz": 101e9}}', "carrier_hz", "0.5 to 100 GHz"),
    ('{"path_loss": {"kind": "rma", "carrier_hz": 31e9}}', "carrier_hz", "0.5 to 30 GHz"),
    ('{"path_loss": {"kind": "inh", "carrier_hz": 0.3e9}}', "carrier_hz", "0.5 to 100 GHz"),
    ('{"path_loss": {"kind": "uma", "h_ut_m": 0}}', "h_ut_m", "1.5 to 22.5 m"),
    ('{"path_loss": {"kind": "rma", "h_bs_m": -5}}', "h_bs_m", "10 to 150 m"),
    ('{"path_loss": {"kind": "inh", "h_ut_m": -1}}', "h_ut_m", "1 to 2.5 m"),
    ('{"path_loss": "uma", "power_control": {"kind": "fractional", "alpha": 1.01}}', "alpha",
     "[0, 1]"),
])
def test_a_bad_multicell_radio_is_one_line(radio, field, allowed, capsys):
    code = cli_main(["validate", "quickstart", *LAYOUT, "--set", f"network.radio={radio}"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f".{field} = " in err and allowed in err, err


@pytest.mark.parametrize("override, field, allowed", [
    ("network.cells.hexagonal.isd_m=15", "isd_m", "20 m"),
    ("network.cells.hexagonal.isd_m=60", "min_m", "half the inter-site distance"),
])
def test_an_inter_site_distance_too_short_for_the_drop_is_one_line(override, field, allowed,
                                                                   tmp_path, capsys):
    code = cli_main(["run", "quickstart", "--timing-only", "--out", str(tmp_path / "r"),
                     *LAYOUT, "--set", 'network.radio={"path_loss": "uma"}', "--set", override])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f".{field} = " in err and allowed in err, err
