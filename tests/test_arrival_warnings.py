"""A run says why nothing arrives: an upload longer than the deadline (preflight) and no
update in the first rounds (the round loop), both in summary.json's warnings."""

import dataclasses

from simfl import apply_overrides, load_scenario, run
from simfl.core.config import parse_override
from simfl.experiment.arrivals import FIRST_ROUNDS
from simfl.preflight import upload_airtime_warnings


def quickstart(*settings):
    scenario = load_scenario("quickstart")
    return apply_overrides(scenario, [parse_override(s) for s in (
        "run.rounds=3", "run.timing_only=true", *settings)])


def test_cnn_over_a_slow_uplink_warns_with_the_numbers(tmp_path):
    scenario = quickstart("task.model=cnn", "task.dataset=mnist5k")
    warnings = run(scenario, tmp_path / "run").summary["warnings"]
    airtime = [w for w in warnings if w.startswith("one upload")]
    # cnn on 28 x 28 inputs: 1,663,370 float32 parameters over 1 Mb/s
    assert len(airtime) == 1 and "53.2 s" in airtime[0] and "deadline_s = 6 s" in airtime[0]
    none = [w for w in warnings if w.startswith("no update arrived")]
    assert len(none) == 1 and f"first {FIRST_ROUNDS} rounds" in none[0]
    assert "30 invited, 30 late" in none[0]


def test_a_run_whose_updates_arrive_has_neither_warning(tmp_path):
    warnings = run(quickstart(), tmp_path / "run").summary["warnings"]
    assert not [w for w in warnings if w.startswith(("one upload", "no update arrived"))]


def test_upload_airtime_against_the_deadline():
    scenario = quickstart()  # 1 Mb/s uplink, 6 s deadline
    assert upload_airtime_warnings(scenario, 700_000) == []  # 5.6 s
    (line,) = upload_airtime_warnings(scenario, 800_000)  # 6.4 s
    assert "6.4 s" in line
    longer = dataclasses.replace(scenario, server=dataclasses.replace(scenario.server,
                                                                      deadline_s=7.0))
    assert upload_airtime_warnings(longer, 800_000) == []


def test_validate_warns_before_any_run(capsys):
    from simfl.cli import main

    assert main(["validate", "quickstart", "--set", "task.model=cnn",
                 "--set", "task.dataset=mnist5k"]) == 0
    err = capsys.readouterr().err
    assert "simfl validate: warning: one upload of the model (6.65 MB) takes 53.2 s" in err
