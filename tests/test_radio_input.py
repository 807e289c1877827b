"""Bad shared-radio input is one line and exit 2, from ``simfl validate`` (nothing runs)."""

import pytest

from simfl.cli import main

RADIO = ["--set", "population.placement=disc", "--set", "network.radio={}",
         "--set", "network.uplink=ideal"]


def _validate(capsys, *overrides):
    code = main(["validate", "quickstart", *RADIO, *overrides])
    err = capsys.readouterr().err.strip().splitlines()
    return code, err


def test_a_radio_scenario_validates(capsys):
    assert _validate(capsys)[0] == 0


@pytest.mark.parametrize("content, field, words", [
    ("client,x_m,y_m\n0,1.0,nan\n", "population.placement.path", "finite"),
    ("client,x_m,y_m\n0,1,2\n0,3,4\n", "population.placement.path", "listed twice"),
    ("client,x_m,y_m\n0,1,2\n", "population.placement.path", "missing"),
    ("x,y\n0,1\n", "population.placement.path", "header"),
])
def test_a_bad_position_file_is_one_line(tmp_path, capsys, content, field, words):
    path = tmp_path / "positions.csv"
    path.write_text(content)
    code, err = _validate(capsys, "--set", f'population.placement={{"kind": "file", '
                          f'"path": "{path}"}}', "--set", "task.n_clients=2")
    assert code == 2 and len(err) == 1 and field in err[0] and words in err[0], err


@pytest.mark.parametrize("override, field", [
    ("network.cells.access_points=[]", "network.cells.access_points"),
    ("network.cells.access_points=[[0, 1, 2]]", "network.cells.access_points[0]"),
    ("network.radio.bandwidth_hz=0", "network.radio.bandwidth_hz"),
    ("network.sinr_threshold_db=Infinity", "network.sinr_threshold_db"),
    ("network.sinr_threshold_db=NaN", "network.sinr_threshold_db"),
    ("network.radio.shadowing_db=-1", "network.radio.shadowing_db"),
    ("network.radio.tx_power_dbm=1e308", "network.radio.tx_power_dbm"),
    ("network.radio.tx_power_dbm=[20, 23]", "network.radio.tx_power_dbm"),
    ("network.radio.tx_power_dbm=[]", "network.radio.tx_power_dbm"),
    ("network.uplink=erasure", "network.uplink.kind"),
    ("population.placement.radius_m=0", "population.placement.radius_m"),
    ('population.placement={"kind": "ppp", "density_per_m2": 1e-9}',
     "population.placement.density_per_m2"),
])
def test_bad_radio_values_are_one_line(capsys, override, field):
    code, err = _validate(capsys, "--set", override)
    assert code == 2 and len(err) == 1 and field in err[0], err


def test_the_radio_and_a_distance_together_are_refused(capsys):
    code, err = _validate(capsys, "--set", "network.uplink.rate=shannon",
                          "--set", "network.uplink.distance={}")
    assert code == 2 and len(err) == 1 and "network.uplink.distance" in err[0], err
