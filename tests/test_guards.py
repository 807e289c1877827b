"""Input that used to be taken silently: a script that exits, a mistyped path, booleans
written as words, and values so large that training or the energy meter overflows."""

import os

import pytest

from simfl.cli import main
from simfl.core.config import Run
from simfl.core.errors import ConfigError


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize("body", [
    "import sys\nsys.exit(0)\n",
    "import sys\ndef scenario():\n    sys.exit(0)\n",
    "def scenario():\n    raise SystemExit('bye')\n",
])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_script_that_exits_is_one_line_naming_it_and_exit_2(tmp_path, capsys, body, command):
    script = tmp_path / "leaves.py"
    script.write_text(body)
    assert main([command, str(script), "--out", str(tmp_path / "out")]
                if command == "run" else [command, str(script)]) == 2
    assert str(script) in _one_line(capsys) and not (tmp_path / "out").exists()


@pytest.mark.parametrize("path", ["../quickstart", "elsewhere/quickstart", "quickstart.py",
                                  "./quickstart", "scenarios/quickstart/"])
def test_a_path_that_does_not_exist_is_not_taken_for_a_bundled_name(tmp_path, capsys,
                                                                    monkeypatch, path):
    monkeypatch.chdir(tmp_path)
    assert main(["validate", path]) == 2
    assert repr(path) in _one_line(capsys)


def test_a_bare_name_and_an_existing_path_still_resolve(tmp_path, capsys, monkeypatch):
    assert main(["validate", "quickstart"]) == 0
    script = tmp_path / "mine.py"
    script.write_text("import simfl\ndef scenario():\n    return simfl.Scenario(name='mine')\n")
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "mine.py"]) == 0
    assert main(["validate", f".{os.sep}mine.py"]) == 0
    assert '"name": "mine"' in capsys.readouterr().out


@pytest.mark.parametrize("raw", ["yes", "1", "0", '"true"', "True", "on", "null"])
def test_booleans_are_true_or_false_only(capsys, raw):
    assert main(["validate", "quickstart", "--set", f"run.timing_only={raw}"]) == 2
    assert "run.timing_only" in _one_line(capsys)


def test_booleans_from_python_must_be_bools():
    for value in (1, 0, "yes", 1.0):
        with pytest.raises(ConfigError, match="timing_only"):
            Run(timing_only=value)
    assert Run(timing_only=True).timing_only is True


# ---- values so large that training or the meters overflow

@pytest.mark.parametrize("pair, field", [
    ("task.lr=1e308", "task.lr"),
    ("task.lr=1001", "task.lr"),
    ("task.weight_decay=1e308", "task.weight_decay"),
    ("server.algorithm.server_lr=1e308", "server.algorithm.server_lr"),
    ("server.algorithm.mu=1e308", "server.algorithm.mu"),
    ("server.optimizer.lr=1e308", "server.optimizer.lr"),
    ("population.energy.compute_w=1e308", "population.energy.compute_w"),
    ("population.energy.idle_w=10001", "population.energy.idle_w"),
    ("population.energy.tx_w=1e308", "population.energy.tx_w"),
    ("population.energy.rx_j_per_bit=1e308", "population.energy.rx_j_per_bit"),
    ("population.battery.charging.power_w=1e308", "population.battery.charging.power_w"),
    ("population.compute.sigma=1e308", "population.compute.sigma"),
    ("population.compute.sigma=10.5", "population.compute.sigma"),
    ("population.compute.median_samples_per_s=1e308", "population.compute.median_samples_per_s"),
    ("population.compute.median_samples_per_s=1e-300", "population.compute.median_samples_per_s"),
])
def test_values_that_overflow_are_one_line_naming_the_field(capsys, pair, field):
    before = {"server.algorithm.mu": ["server.algorithm=fedprox"],
              "server.optimizer.lr": ["server.optimizer=fedadam"],
              "population.battery.charging.power_w": ["population.battery={}",
                                                      "population.battery.charging={}"]}
    args = ["validate", "quickstart"]
    for p in [*before.get(field, []), pair]:
        args += ["--set", p]
    assert main(args) == 2
    err = _one_line(capsys)
    assert f"{field} = " in err


def test_the_bounds_themselves_are_accepted(capsys):
    pairs = ["task.lr=1000", "task.weight_decay=1000", "server.algorithm.server_lr=1000",
             "population.energy.compute_w=10000", "population.energy.idle_w=0",
             "population.compute.sigma=10", "population.compute.median_samples_per_s=1e12"]
    args = ["validate", "quickstart"]
    for p in pairs:
        args += ["--set", p]
    assert main(args) == 0
    capsys.readouterr()


def test_extreme_speeds_stay_positive_and_finite():
    import numpy as np

    from simfl.core.config import Compute

    z = np.random.default_rng(0).standard_normal(10**6)
    for median in (1e-6, 1e12):
        c = Compute(median_samples_per_s=median, sigma=10.0)
        speeds = c.median_samples_per_s * np.exp(c.sigma * z)
        assert np.isfinite(speeds).all() and (speeds > 0).all()


# ---- a model that diverges is reported, not passed off as a result

QUADRATIC = """import simfl


def scenario():
    return simfl.Scenario(
        name="steps",
        task=simfl.Task(dataset=simfl.Quadratic(), partition=simfl.Native(),
                        model=simfl.Logreg(), n_clients=4, batch_size=10, local_steps=20,
                        lr={lr}),
        server=simfl.Server(clients_per_round=4),
        run=simfl.Run(rounds=1))
"""


def _run(tmp_path, capsys, body: str, name: str, *args: str):
    import json

    script = tmp_path / f"{name}.py"
    script.write_text(body)
    status = main(["run", str(script), "--out", str(tmp_path / name), "--quiet", *args])
    captured = capsys.readouterr()
    summary = (json.loads((tmp_path / name / "summary.json").read_text())
               if status == 0 else None)
    return status, captured.err, summary


def test_a_diverging_model_is_a_warning_in_summary_and_on_stderr(tmp_path, capsys):
    # gradient steps of 1000 on (w - xi)^2 multiply the error by 1999 each: float32
    # overflows within the first round's 20 local steps
    status, err, summary = _run(tmp_path, capsys, QUADRATIC.format(lr=1000.0), "big")
    assert status == 0
    [warning] = [w for w in summary["warnings"] if "diverged" in w]
    assert "after round 1 " in warning and "task.lr" in warning
    assert f"warning: {warning}" in err
    status, err, summary = _run(tmp_path, capsys, QUADRATIC.format(lr=0.1), "small")
    assert status == 0 and summary["warnings"] == [] and "warning" not in err


def test_nan_in_the_data_is_never_silent(tmp_path, capsys):
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3)).astype(np.float32)
    x[5, 1] = np.nan
    y = rng.integers(0, 2, size=40)
    np.savez(tmp_path / "data.npz", x_train=x, y_train=y, x_test=x[:10], y_test=y[:10])
    body = QUADRATIC.format(lr=0.1).replace(
        "dataset=simfl.Quadratic(), partition=simfl.Native()",
        f"dataset=simfl.Npz(path={str(tmp_path / 'data.npz')!r}), partition=simfl.Iid()")
    status, err, summary = _run(tmp_path, capsys, body, "nan")
    if status == 0:  # taken: the run says its scores are meaningless
        assert any("NaN" in w for w in summary["warnings"]) and "warning" in err
    else:  # refused when read: one line naming the data
        assert status == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
