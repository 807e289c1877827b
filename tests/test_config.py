import pytest

import simfl
from simfl.core.config import (Bernoulli, ErasureChannel, Scenario, Server, Task,
                               apply_overrides, parse_override)
from simfl.core.errors import ConfigError


def override(*pairs):
    return apply_overrides(Scenario(), [parse_override(p) for p in pairs])


def test_defaults_are_valid_and_resolved():
    s = Scenario()
    assert s.task.local_epochs == 1 and s.task.local_steps is None
    assert s.run.eval_every_rounds == 1
    assert Bernoulli().p == 0.8


def test_round_trip_through_dict():
    s = override("network.uplink.kind=erasure", "network.uplink.p=0.25", "task.model.hidden=[8,4]")
    again = Scenario.from_dict(s.to_dict())
    assert again == s
    assert again.network.uplink == ErasureChannel(p=0.25)
    assert again.task.model.hidden == (8, 4)


def test_kind_given_by_name_or_table():
    assert Task(dataset="synthetic").dataset.kind == "synthetic"
    assert Task(partition={"kind": "dirichlet", "alpha": 0.1}).partition.alpha == 0.1


@pytest.mark.parametrize("pairs, field, words", [
    (["server.deadline_s=-1"], "server.deadline_s", "> 0"),
    (["server.algorithm=fedav"], "server.algorithm.kind", "fedavg"),
    (["server.algorithm.kind=nope"], "server.algorithm.kind", "fedavg"),
    (["population.availability=bernoulli", "population.availability.p=1.5"],
     "population.availability.p", "[0, 1]"),
    (["network.uplink.kind=erasure", "network.uplink.p=-0.1"], "network.uplink.p", "[0, 1]"),
    (["server.dedline_s=3"], "server.dedline_s", "server.deadline_s"),
    (["nosuch.key=3"], "nosuch", "server"),
    (["task.n_clients=abc"], "task.n_clients", "an integer"),
    (["run.executor=gpu"], "run.executor", "'inline'"),
    (["task.lr=true"], "task.lr", "a number"),
    (["server.algorithm=fedar", "server.algorithm.late_policy=keep"],
     "server.algorithm.late_policy", "'store'"),
    (["server.algorithm=fedar", "server.algorithm.late_policy=store", "network.mac=tdma"],
     "network.mac.kind", "ideal"),
])
def test_bad_values_name_the_field(pairs, field, words):
    with pytest.raises(ConfigError) as info:
        override(*pairs)
    assert info.value.field == field
    assert words in str(info.value)


def test_kind_switch_keeps_the_fields_given_on_the_command_line():
    for pairs in (("network.uplink.rate.rate_bps=5e5", "network.uplink.kind=erasure"),
                  ("network.uplink.kind=erasure", "network.uplink.rate.rate_bps=5e5")):
        s = override(*pairs)
        assert s.network.uplink == ErasureChannel(rate=simfl.FixedRate(rate_bps=5e5))


def test_kind_switch_starts_from_the_new_kinds_defaults():
    base = Scenario(population=simfl.Population(availability=simfl.SinLogNormal(beta=0.3)),
                    network=simfl.Network(uplink=simfl.RayleighChannel(
                        rate=simfl.FixedRate(rate_bps=7e5))))
    s = apply_overrides(base, [("population.availability.kind", "more_data_first"),
                               ("network.uplink.kind", "erasure")])
    assert s.population.availability == simfl.MoreDataFirst()
    assert s.population.availability.beta == 1e-5  # its own default, not sin_log_normal's 0.3
    assert s.network.uplink == ErasureChannel()  # the scenario's rate was the old kind's
    # the same kind again is no switch: the scenario's values stay
    same = apply_overrides(base, [("population.availability.kind", "sin_log_normal")])
    assert same.population.availability.beta == 0.3


def test_a_field_the_final_kind_lacks_is_an_error_in_any_order():
    for pairs in (("network.uplink.kind=erasure", "network.uplink.p=0.3", "network.uplink.kind=ideal"),
                  ("network.uplink.p=0.3", "network.uplink.kind=ideal")):
        with pytest.raises(ConfigError) as info:
            override(*pairs)
        assert info.value.field == "network.uplink.p"


def test_derived_defaults_follow_what_they_derive_from():
    s = apply_overrides(Scenario(population=simfl.Population(availability=simfl.LessDataFirst())),
                        [("population.availability.variant", "flgo")])
    assert s.population.availability.beta == 0.5  # flgo's default, not fedgs's 0.1
    s = override("task.local_steps=3")
    assert s.task.local_epochs is None


def test_fedgs_scenario_kind_switch_resolves_the_new_kinds_beta(capsys):
    from simfl.cli import main

    assert main(["validate", "fedgs", "--set", "population.availability.kind=more_data_first"]) == 0
    import json

    availability = json.loads(capsys.readouterr().out)["population"]["availability"]
    assert availability["kind"] == "more_data_first" and availability["beta"] == 1e-5


def test_setting_one_of_an_exclusive_pair_clears_the_other():
    s = override("task.local_steps=7")
    assert (s.task.local_steps, s.task.local_epochs) == (7, None)
    s = override("run.eval_every_s=30")
    assert (s.run.eval_every_s, s.run.eval_every_rounds) == (30.0, None)


def test_direct_construction_rejects_both_of_an_exclusive_pair():
    with pytest.raises(ConfigError, match="local_steps"):
        Task(local_epochs=2, local_steps=3)


def test_nodes_are_frozen():
    with pytest.raises(Exception):
        Server().deadline_s = 3  # type: ignore[misc]


def test_override_syntax_error():
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_override("server.deadline_s")


def test_json_values_and_plain_strings():
    assert parse_override("a.b=30") == ("a.b", 30)
    assert parse_override("a.b=[1, 2]") == ("a.b", [1, 2])
    assert parse_override("a.b=erasure") == ("a.b", "erasure")


def test_public_api_builds_a_scenario():
    s = simfl.Scenario(server=simfl.Server(deadline_s=5), run=simfl.Run(rounds=3))
    assert s.server.deadline_s == 5.0


def test_public_api_exports_every_registered_config_class_and_section():
    from simfl.core.registry import REGISTRIES

    for point, reg in REGISTRIES.items():
        for entry in reg:
            assert getattr(simfl, entry.obj.__name__, None) is entry.obj, (point, entry.name)
    for section in ("Task", "Population", "Compute", "Energy", "Battery", "Charging",
                    "Sessions", "Network", "Distance", "Server", "Run"):
        assert section in simfl.__all__
    assert all(hasattr(simfl, name) for name in simfl.__all__)


def test_scenario_scripts_import_only_the_public_api():
    from pathlib import Path

    scripts = sorted((Path(__file__).resolve().parents[1] / "scenarios").glob("*.py"))
    assert scripts
    for script in scripts:
        imports = [line for line in script.read_text().splitlines()
                   if line.startswith(("import simfl", "from simfl"))]
        assert imports == ["import simfl"], (script.name, imports)
