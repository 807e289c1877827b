"""Checks without training: validate finds what run would fail on, memory is estimated."""

import subprocess
import sys
from pathlib import Path

import pytest

import simfl
from simfl.cli import main
from simfl.core.config import apply_overrides, load_scenario, parse_override
from simfl.core.errors import ConfigError
from simfl.preflight import available_memory, check_memory, estimate_memory, preflight

ROOT = Path(__file__).resolve().parents[1]


def with_(name, *pairs):
    return apply_overrides(load_scenario(name), [parse_override(p) for p in pairs])


#: scenarios that built fine but failed once the run met the data, the lists or files
FAIL_IN_RUN = [
    (("task.n_clients=5000",), "task.n_clients"),
    (("population.availability=bernoulli", "population.availability.p=[0.5,0.5]"),
     "population.availability.p"),
    (("server.algorithm=fedavg_is", "server.algorithm.p=[0.5,0.5]"), "server.algorithm.p"),
    (("network.mac=slotted_aloha", "network.mac.access_prob=[0.5,0.5]"), "network.mac.access_prob"),
    (("network.mac=relay", "network.mac.probs=[0.5,0.5]"), "network.mac.probs"),
    (("task.partition=dirichlet", "task.partition.min_samples=100"), "task.partition.min_samples"),
    (("task.partition=shards", "task.partition.per_client=100"), "task.partition.per_client"),
    (("task.partition=native",), "task.partition"),
    (("population.availability=trace", "population.availability.path=/no/such.csv"),
     "population.availability.path"),
    (("population.sessions={}", "population.sessions.label_overlap=9"),
     "population.sessions.label_overlap"),
    (("population.sessions={}", "population.sessions.groups=60"), "population.sessions.groups"),
    (("task.dataset=quadratic", "task.partition=native", "population.availability=y_cycle"),
     "population.availability.kind"),
    (("network.model_bytes=10000000000000000",), "network.model_bytes"),
    (("task.test_fraction=0.0001",), "task.test_fraction"),
    (("network.uplink.rate.rate_bps=Infinity",), "network.uplink.rate.rate_bps"),
]


@pytest.mark.parametrize("pairs, field", FAIL_IN_RUN)
def test_validate_finds_what_run_would_fail_on(capsys, pairs, field):
    argv = ["validate", "quickstart"]
    for pair in pairs:
        argv += ["--set", pair]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"error: {field} = " in err and len(err.strip().splitlines()) == 1


def test_a_trace_file_that_does_not_parse_is_found_by_validate(tmp_path, capsys):
    bad = tmp_path / "t.csv"
    bad.write_text("client,start_s,end_s\n0,5,oops\n")
    assert main(["validate", "quickstart", "--set", "population.availability=trace",
                 "--set", f"population.availability.path={bad}"]) == 2
    assert "population.availability.path" in capsys.readouterr().err


def test_valid_bundled_scenarios_pass_preflight():
    for name in ("quickstart", "fedar", "cvar", "fedgs", "diurnal", "sessions", "battery"):
        preflight(load_scenario(name))


def test_memory_estimate_grows_with_the_population_and_with_training():
    small = estimate_memory(with_("quickstart", "run.timing_only=true"))
    big = estimate_memory(with_("quickstart", "run.timing_only=true", "task.n_clients=1000"))
    trained = estimate_memory(with_("quickstart", "task.n_clients=1000"))
    assert big.total > small.total and trained.total > big.total
    huge = estimate_memory(with_("quickstart", "run.timing_only=true", "task.dataset=synthetic",
                                 "task.partition=native", "task.n_clients=100000000"))
    assert huge.total > 2e10 and huge.largest_field() == "task.n_clients"


def test_a_scenario_above_the_available_memory_is_refused_with_the_estimate():
    scenario = with_("quickstart", "run.timing_only=true", "task.dataset=synthetic",
                     "task.partition=native", "task.n_clients=100000000")
    with pytest.raises(ConfigError) as info:
        check_memory(scenario, available=(4e9, "a test limit"))
    assert info.value.field == "task.n_clients"
    assert "GB" in str(info.value) and "4.00 GB is available (a test limit)" in str(info.value)
    check_memory(scenario, available=(1e12, "a test limit"))


def test_available_memory_sees_the_address_space_limit():
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30)); "
            "from simfl.preflight import available_memory; b, s = available_memory(); "
            "print(b, s)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    free_bytes, source = done.stdout.split(maxsplit=1)
    assert float(free_bytes) < 3 * 2**30 and "ulimit -v" in source


def test_a_huge_population_under_a_memory_limit_is_one_line(tmp_path):
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30)); "
            "from simfl.cli import main; sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", code, "run", "quickstart", "--timing-only",
                           "--quiet", "--set", "task.dataset=synthetic", "--set",
                           "task.partition=native", "--set", "task.n_clients=100000000",
                           "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "task.n_clients" in done.stderr and "memory" in done.stderr
    assert not (tmp_path / "r").exists()  # refused before the run folder was made


def test_preflight_runs_before_a_run_allocates_anything(tmp_path):
    scenario = simfl.Scenario(task=simfl.Task(n_clients=5000), run=simfl.Run(rounds=1,
                                                                             timing_only=True))
    from simfl.experiment import run_scenario

    with pytest.raises(ConfigError, match="task.n_clients"):
        run_scenario(scenario, tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_available_memory_is_positive_here():
    free_bytes, source = available_memory()
    assert free_bytes > 0 and source
