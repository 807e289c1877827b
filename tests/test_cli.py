"""The command line as a user meets it: exit codes, messages, files."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from simfl.cli import main

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--set", "run.rounds=3", "--set", "task.n_clients=10", "--set", "task.model=logreg"]


def simfl(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "simfl", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT)


@pytest.mark.parametrize("args, words", [
    (["--set", "server.deadline_s=-5"], "server.deadline_s"),
    (["--set", "server.algorithm=fedsgd"], "fedavg"),
    (["--set", "population.availability=bernoulli", "--set", "population.availability.p=2"],
     "population.availability.p"),
    (["--set", "server.no_such_key=1"], "server.deadline_s"),
    (["--set", "oops"], "KEY=VALUE"),
])
def test_invalid_input_exits_2_with_the_field_and_no_traceback(args, words):
    done = simfl("validate", "quickstart", *args)
    assert done.returncode == 2
    assert words in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_unknown_scenario_exits_2():
    done = simfl("run", "no_such_scenario")
    assert done.returncode == 2 and "quickstart" in done.stderr


def test_bad_argument_exits_2():
    assert simfl("plot").returncode == 2
    assert simfl("list", "nonsense").returncode == 2


def test_validate_prints_the_resolved_scenario(capsys):
    assert main(["validate", "quickstart", "--set", "server.deadline_s=9"]) == 0
    resolved = json.loads(capsys.readouterr().out)
    assert resolved["server"]["deadline_s"] == 9.0
    assert resolved["task"]["local_epochs"] == 2


def test_list_shows_names_and_descriptions(capsys):
    assert main(["list", "aggregators"]) == 0
    out = capsys.readouterr().out
    assert "fedavg" in out and "McMahan" in out
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for word in ("samplers:", "uniform", "channels:", "erasure", "bernoulli", "digits", "mlp"):
        assert word in out


def test_list_covers_every_extension_point_with_a_description(capsys):
    from simfl.cli import LIST_TOPICS
    from simfl.core.registry import REGISTRIES

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert set(LIST_TOPICS) == set(REGISTRIES)
    for topic in ("aggregators", "samplers", "availability", "channels", "macs", "datasets",
                  "models", "partitions", "rates", "initialisers"):
        assert f"{topic}:" in out
        for entry in REGISTRIES[topic]:
            assert entry.summary, (topic, entry.name)
            assert f"  {entry.name} " in out
    assert "similarity" in out and "Chang et al." in out


def test_quick_commands_do_not_import_torch():
    code = ("import sys; from simfl.cli import main; main(['list']); "
            "main(['validate', 'quickstart']); assert 'torch' not in sys.modules, 'torch imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def test_timing_only_runs_do_not_import_torch(tmp_path):
    code = ("import sys; from simfl.cli import main; "
            f"assert main(['run', 'sessions', '--timing-only', '--quiet', '--set', 'run.rounds=3', "
            f"'--out', {str(tmp_path / 'run')!r}]) == 0; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def test_run_and_plot(tmp_path, capsys):
    for seed in (1, 2):
        assert main(["run", "quickstart", *TINY, "--seed", str(seed), "--quiet",
                     "--out", str(tmp_path / f"s{seed}")]) == 0
    assert (tmp_path / "s1" / "summary.json").exists()
    png = tmp_path / "plot.png"
    assert main(["plot", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["plot", str(tmp_path / "s1"), "--metric", "loss", "--x", "round",
                 "--out", str(tmp_path / "loss.png")]) == 0


def test_plot_of_a_timing_only_run_explains_itself(tmp_path, capsys):
    assert main(["run", "quickstart", *TINY, "--timing-only", "--quiet",
                 "--out", str(tmp_path / "t")]) == 0
    assert main(["plot", str(tmp_path / "t"), "--out", str(tmp_path / "p.png")]) == 2
    assert "timing-only" in capsys.readouterr().err
