"""A run says, once, when it degraded without being asked: the batched executor training
one job at a time, the hidden-terminal model of a carrier-sense range, and a csma_ca MAC
dropping many updates at its retry limit."""

import dataclasses
import json
import math

import pytest
from torch import nn

import simfl
from simfl.cli import main
from simfl.core.config import apply_overrides, load_scenario, parse_override

#: a small radio scenario: clients placed on a disc, an ideal uplink rate
RADIO = ["population.placement={\"kind\":\"disc\"}", "network.radio={}",
         "network.uplink=ideal", "run.timing_only=true", "run.rounds=3"]


def scenario(*sets):
    return apply_overrides(load_scenario("quickstart"), [parse_override(s) for s in sets])


def batch_norm_net(input_shape, n_classes):
    n = math.prod(input_shape)
    return nn.Sequential(nn.Flatten(), nn.BatchNorm1d(n), nn.Linear(n, n_classes))


def plain_net(input_shape, n_classes):
    return nn.Sequential(nn.Flatten(), nn.Linear(math.prod(input_shape), n_classes))


def torch_scenario(factory, executor):
    base = scenario("run.rounds=1", "task.n_clients=4", f"run.executor={executor}")
    return dataclasses.replace(base, task=dataclasses.replace(
        base.task, model=simfl.TorchModule(factory=factory)))


@pytest.mark.parametrize("factory, executor, told", [
    (batch_norm_net, "batched", True), (batch_norm_net, "inline", False),
    (batch_norm_net, "auto", False), (plain_net, "batched", False)])
def test_the_batched_executor_says_when_it_trains_one_job_at_a_time(tmp_path, factory,
                                                                     executor, told):
    result = simfl.run(torch_scenario(factory, executor), tmp_path / "r")
    lines = [w for w in result.summary["warnings"] if "one job at a time" in w]
    assert len(lines) == (1 if told else 0)
    if told:
        assert "run.executor = 'batched'" in lines[0] and "buffers" in lines[0]
    saved = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert saved["warnings"] == result.summary["warnings"]


def test_a_user_loss_also_makes_the_batched_executor_fall_back(tmp_path):
    base = scenario("run.rounds=1", "task.n_clients=4", "run.executor=batched",
                    "task.model=mlp", "task.loss=torch.nn.functional:cross_entropy")
    lines = [w for w in simfl.run(base, tmp_path / "r").summary["warnings"]
             if "one job at a time" in w]
    assert len(lines) == 1 and "task.loss" in lines[0]


def csma(**fields):
    return "network.mac=" + json.dumps({"kind": "csma_ca", "phy_rate_bps": 2e6, **fields})


def test_hidden_terminal_rounds_are_counted_and_told_once(tmp_path):
    result = simfl.run(scenario(*RADIO, csma(carrier_sense_range_m=50)), tmp_path / "r")
    lines = [w for w in result.summary["warnings"] if "hidden-terminal" in w]
    assert len(lines) == 1 and lines[0].startswith("3 of 3 rounds") and "10 times" in lines[0]


def test_a_range_that_every_pair_is_within_says_nothing(tmp_path):
    result = simfl.run(scenario(*RADIO, csma(carrier_sense_range_m=1e6)), tmp_path / "r")
    assert not [w for w in result.summary["warnings"] if "hidden-terminal" in w]


def dropped(outcomes):
    return [sum(str(m.reason) == "collided" for m in o.missing) / len(o.selected)
            for o in outcomes]


def test_retry_limit_drops_over_a_tenth_of_a_round_are_told(tmp_path):
    result = simfl.run(scenario(*RADIO, csma(retry_limit=1, cw_min=2)), tmp_path / "r")
    shares = dropped(result.outcomes)
    over = [s for s in shares if s > 0.1]
    lines = [w for w in result.summary["warnings"] if "retry limit" in w]
    assert over and len(lines) == 1
    assert lines[0].startswith(f"in {len(over)} of 3 rounds")
    assert f"{max(over):.0%}" in lines[0]


def test_no_retry_limit_or_few_drops_say_nothing(tmp_path):
    result = simfl.run(scenario(*RADIO, csma(retry_limit=None)), tmp_path / "r")
    assert not [w for w in result.summary["warnings"] if "retry limit" in w]
    result = simfl.run(scenario(*RADIO, csma(retry_limit=30, cw_min=64)), tmp_path / "s")
    assert max(dropped(result.outcomes)) <= 0.1
    assert not [w for w in result.summary["warnings"] if "retry limit" in w]


def test_the_warning_reaches_stderr_once(tmp_path, capsys):
    assert main(["run", "quickstart", *[a for s in RADIO for a in ("--set", s)], "--set",
                 csma(carrier_sense_range_m=50), "--out", str(tmp_path / "r"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("hidden-terminal") == 1 and err.startswith("simfl run: warning:")
