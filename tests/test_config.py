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
        for entry in (e for e in reg if not e.plugin):  # plug-ins live in their own modules
            assert getattr(simfl, entry.obj.__name__, None) is entry.obj, (point, entry.name)
    for section in ("Task", "Population", "Compute", "Energy", "Battery", "Charging",
                    "Sessions", "Network", "Distance", "Server", "Run"):
        assert section in simfl.__all__
    assert all(hasattr(simfl, name) for name in simfl.__all__)


def test_scenario_scripts_import_only_the_public_api():
    from pathlib import Path

    scripts = sorted((Path(__file__).resolve().parents[1] / "scenarios").glob("[!_]*.py"))
    assert scripts
    for script in scripts:
        imports = [line for line in script.read_text().splitlines()
                   if line.startswith(("import simfl", "from simfl"))]
        assert imports == ["import simfl"], (script.name, imports)


# ---------------------------------------------------------------------------------
# numbers that must be finite, sizes that must fit, names that must be plain


@pytest.mark.parametrize("key", ["server.deadline_s", "task.lr", "task.weight_decay",
                                 "server.algorithm.server_lr", "population.compute.sigma",
                                 "population.compute.median_samples_per_s", "run.horizon_s",
                                 "network.uplink.rate.rate_bps"])
@pytest.mark.parametrize("text", ["Infinity", "-Infinity", "NaN"])
def test_non_finite_numbers_are_rejected_naming_the_field(key, text):
    if key == "network.uplink.rate.rate_bps" and text == "Infinity":
        return  # the one opt-in: an infinite rate takes no airtime (below)
    with pytest.raises(ConfigError) as info:
        override(f"{key}={text}")
    assert info.value.field == key
    assert any(words in str(info.value) for words in ("finite", "NaN", "> 0"))


def test_non_finite_numbers_in_lists_and_traces_are_rejected():
    with pytest.raises(ConfigError) as info:
        override("population.availability=bernoulli", "population.availability.p=[0.5, NaN]")
    assert info.value.field == "population.availability.p"
    with pytest.raises(ConfigError) as info:
        override("population.availability=trace", "population.availability.path=x.csv",
                 "population.availability.period_s=Infinity")
    assert info.value.field == "population.availability.period_s"


def test_infinity_only_where_a_field_opts_in():
    assert simfl.FixedRate(rate_bps=float("inf")).rate_bps == float("inf")
    assert simfl.Diurnal(strategy="sine", peak_trough_ratio=float("inf"), mean_p=0.5).amplitude == 1.0
    with pytest.raises(ConfigError, match="not NaN"):
        simfl.FixedRate(rate_bps=float("nan"))
    with pytest.raises(ConfigError, match="finite"):
        simfl.ShannonRate(bandwidth_hz=float("inf"))


@pytest.mark.parametrize("pair, field", [
    ("task.local_epochs=1000000000000000000000", "task.local_epochs"),
    ("task.local_epochs=2000000", "task.local_epochs"),
    ("task.local_steps=100000000000000000000", "task.local_steps"),
    ("task.local_steps=10000000000", "task.local_steps"),
    ("task.batch_size=100000000000000000000", "task.batch_size"),
    ("task.batch_size=10000000000", "task.batch_size"),
    ("task.n_clients=10000000000", "task.n_clients"),
    ("server.clients_per_round=100000000000000000000", "server.clients_per_round"),
    ("server.clients_per_round=2000000000", "server.clients_per_round"),
    ("server.overcommit=1e300", "server.overcommit"),
    ("server.overcommit=1e9", "server.overcommit"),
    ("network.model_bytes=100000000000000000000", "network.model_bytes"),
    ("network.model_bytes=1e300", "network.model_bytes"),
    ("seed=100000000000000000000", "seed"),
    ("seed=1e300", "seed"),
    ("seed=-1", "seed"),
])
def test_huge_numbers_are_rejected_with_a_bound(pair, field):
    with pytest.raises(ConfigError) as info:
        override(pair)
    assert info.value.field == field
    assert len(str(info.value)) < 300


def test_largest_int64_seed_is_accepted():
    assert override(f"seed={2**63 - 1}").seed == 2**63 - 1


def test_min_updates_above_clients_per_round_is_rejected():
    with pytest.raises(ConfigError) as info:
        override("server.min_updates=11")
    assert info.value.field == "server.min_updates" and "clients_per_round = 10" in str(info.value)
    assert override("server.min_updates=10").server.min_updates == 10


@pytest.mark.parametrize("name", ["../../x", "a/b", "a\\b", "x\x00y", "..", ".hidden", "",
                                  "a..b", "n" * 101, "with space", "tab\there"])
def test_names_that_are_not_plain_file_names_are_rejected(name):
    with pytest.raises(ConfigError) as info:
        Scenario(name=name)
    assert info.value.field == "name"
    assert "\n" not in str(info.value) and "\x00" not in str(info.value)


@pytest.mark.parametrize("name", ["quickstart", "bench_gpu", "mac-study.v2", "n" * 100, "run@2+x=1,y"])
def test_plain_names_are_accepted(name):
    assert Scenario(name=name).name == name


def test_deep_or_long_override_values_are_one_error():
    with pytest.raises(ConfigError) as info:
        parse_override("task.lr=" + "[" * 50_000 + "]" * 50_000)
    assert info.value.field == "task.lr" and len(str(info.value)) < 400
    with pytest.raises(ConfigError) as info:
        parse_override("seed=" + "9" * 5000)
    assert info.value.field == "seed" and len(str(info.value)) < 400
    with pytest.raises(ConfigError) as info:  # a float of 5,000 digits parses to infinity
        override("task.lr=" + "9" * 5000 + ".0")
    assert info.value.field == "task.lr"
    with pytest.raises(ConfigError) as info:  # nested, but within the parser's reach
        override("task.lr=" + "[" * 500 + "]" * 500)
    assert info.value.field == "task.lr" and len(str(info.value)) < 400


def test_error_messages_echo_at_most_about_200_characters_of_the_value():
    err = ConfigError("task.lr", "a" + "x" * 10_000 + "z", "a number")
    assert len(str(err)) < 300 and "10,004 characters" in str(err)
    assert "'axx" in str(err) and "xxz'" in str(err)  # the start and the end
