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


# ---------------------------------------------------------------------------------
# one line for every bad input, the file system and the pipe


def one_error_line(capsys, argv, status=2):
    assert main(argv) == status
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize("pair, field", [
    ("server.deadline_s=Infinity", "server.deadline_s"),
    ("task.lr=NaN", "task.lr"),
    ("population.compute.sigma=Infinity", "population.compute.sigma"),
    ("server.min_updates=11", "server.min_updates"),
    ("task.local_epochs=1000000000000000000000", "task.local_epochs"),
    ("server.clients_per_round=100000000000000000000", "server.clients_per_round"),
    ("name=../../x", "name"),
    ("name=a\x00b", "name"),
    ("seed=" + "7" * 5000, "seed"),
    ("task.lr=" + "[" * 50_000 + "]" * 50_000, "task.lr"),
])
def test_bad_values_give_one_line_naming_the_field(capsys, pair, field):
    err = one_error_line(capsys, ["validate", "quickstart", "--set", pair])
    assert f"error: {field} = " in err and len(err) < 400


def test_a_name_with_a_path_never_writes_outside_runs(tmp_path, capsys):
    err = one_error_line(capsys, ["run", "quickstart", "--timing-only", "--quiet",
                                  "--set", "name=../../escaped", "--set", "run.rounds=1"])
    assert "--out" in err
    assert not (ROOT.parent / "escaped_seed1").exists()


def test_out_pointing_at_a_file_is_one_line_and_exit_2(tmp_path, capsys):
    target = tmp_path / "a_file"
    target.write_text("keep me")
    err = one_error_line(capsys, ["run", "quickstart", *TINY, "--timing-only", "--quiet",
                                  "--out", str(target)])
    assert "--out" in err and str(target) in err
    assert target.read_text() == "keep me"


@pytest.mark.parametrize("errno_name", ["ENOSPC", "EROFS", "EACCES"])
def test_a_file_system_that_refuses_writes_is_one_line_exit_1_and_no_temp_files(
        tmp_path, capsys, monkeypatch, errno_name):
    import errno
    import os

    from simfl.metrics import rundir

    real_fsync = os.fsync
    calls = {"n": 0}

    def failing_fsync(fd):
        calls["n"] += 1
        if calls["n"] >= 2:  # config.json is written, then the disk fills up
            raise OSError(getattr(errno, errno_name), os.strerror(getattr(errno, errno_name)))
        real_fsync(fd)

    monkeypatch.setattr(rundir.os, "fsync", failing_fsync)
    err = one_error_line(capsys, ["run", "quickstart", *TINY, "--timing-only", "--quiet",
                                  "--out", str(tmp_path / "r")], status=1)
    assert "cannot write" in err and os.strerror(getattr(errno, errno_name)) in err
    assert not [p for p in (tmp_path / "r").iterdir() if p.name.endswith(".tmp")]


def test_a_folder_that_cannot_be_created_is_one_line(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    err = one_error_line(capsys, ["run", "quickstart", *TINY, "--timing-only", "--quiet",
                                  "--out", str(tmp_path / "file" / "run")], status=1)
    assert "cannot create" in err


def test_validate_into_a_closed_pipe_prints_no_traceback():
    # the reader is gone before simfl writes (as ``| head`` that has read its lines)
    proc = subprocess.Popen([sys.executable, "-m", "simfl", "validate", "quickstart"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=60)
    assert err == "" and proc.returncode == 141


def test_a_run_bounded_by_horizon_shows_a_bar_in_simulated_time(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # the bar shows on terminals only
    assert main(["run", "battery", "--timing-only", "--set", "run.horizon_s=20000",
                 "--out", str(tmp_path / "b")]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "20,000 sim s" in err


def test_two_runs_with_the_same_name_and_seed_started_at_once_get_their_own_folders(tmp_path):
    cmd = [sys.executable, "-m", "simfl", "run", "quickstart", "--timing-only", "--quiet",
           "--set", "run.rounds=20"]
    procs = [subprocess.Popen(cmd + ["--set", f"server.deadline_s={d}", "--name", "same"],
                              cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
             for d in (5, 7)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    dirs = sorted(out.strip().split(": ")[0] for out, _ in outs)
    assert dirs == ["runs/same", "runs/same_2"]
    for d in dirs:  # each folder holds one run's config and tables
        config = json.loads((tmp_path / d / "config.json").read_text())
        deadline = config["scenario"]["server"]["deadline_s"]
        assert json.loads((tmp_path / d / "summary.json").read_text())["rounds"] == 20
        assert deadline in (5.0, 7.0)
    deadlines = {json.loads((tmp_path / d / "config.json").read_text())["scenario"]["server"]
                 ["deadline_s"] for d in dirs}
    assert deadlines == {5.0, 7.0}
    assert not list(tmp_path.rglob("*.tmp"))


# run folders named by what the command line set, or by --name


def test_folder_labels_show_the_values_set():
    from simfl.cli.naming import labelled_name

    assert labelled_name("cvar", [("server.algorithm.alpha", 1.0)], 11) == "cvar_alpha=1.0_seed11"
    assert labelled_name("q", [], 3) == "q_seed3"
    assert labelled_name("q", [("network.uplink.p", 0.1), ("population.availability.p", 0.5),
                               ("name", "x"), ("seed", 9)], 9) == \
        "q_uplink.p=0.1_availability.p=0.5_seed9"
    assert labelled_name("q", [("task.dataset.path", "~/a b/c"), ("task.model.hidden", [32, 8])],
                         1) == "q_path=__a_b_c_hidden=_32,8__seed1"
    assert labelled_name("q", [("server.deadline_s", 3), ("server.deadline_s", 5)], 1) == \
        "q_deadline_s=5_seed1"
    long = [labelled_name("q", [("task.dataset.path", "x" * 300 + end)], 1) for end in "ab"]
    assert long[0] != long[1] and all(len(n) <= 126 and n.endswith("_seed1") for n in long)


def test_a_run_folder_is_named_by_the_values_set(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["run", "quickstart", "--timing-only", "--quiet", "--seed", "4",
            "--set", "run.rounds=1", "--set", "server.deadline_s=3"]
    assert main(argv) == 0 and main(argv) == 0
    firsts = [line.split(": ")[0] for line in capsys.readouterr().out.splitlines()]
    assert firsts == ["runs/quickstart_rounds=1_deadline_s=3_seed4",
                      "runs/quickstart_rounds=1_deadline_s=3_seed4_2"]
    config = json.loads((tmp_path / firsts[0] / "config.json").read_text())
    assert config["scenario"]["server"]["deadline_s"] == 3.0


def test_name_names_the_run_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["run", "quickstart", "--timing-only", "--quiet", "--set", "run.rounds=1"]
    assert main([*argv, "--name", "baseline"]) == 0 and main([*argv, "--name", "baseline"]) == 0
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["baseline", "baseline_2"]


@pytest.mark.parametrize("name", ["../x", "a/b", "..", ".hidden", "", "/abs", "a\x00b", "x" * 121])
def test_a_bad_name_is_one_line_and_makes_nothing(tmp_path, monkeypatch, capsys, name):
    monkeypatch.chdir(tmp_path)
    err = one_error_line(capsys, ["run", "quickstart", "--timing-only", "--quiet", "--name", name])
    assert "error: --name = " in err
    assert list(tmp_path.iterdir()) == []


def test_name_and_out_together_are_refused(tmp_path, capsys):
    err = one_error_line(capsys, ["run", "quickstart", "--timing-only", "--quiet", "--name", "a",
                                  "--out", str(tmp_path / "b")])
    assert "--name or --out" in err and not (tmp_path / "b").exists()


def test_list_scenarios_gives_each_name_and_its_first_sentence_without_running_it(
        tmp_path, monkeypatch, capsys):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "mine.py").write_text(
        '"""Mine: a study of\nmy own.  More words.\n\nDetails."""\n'
        'open("ran.txt", "w").close()\n')
    (tmp_path / "scenarios" / "broken.py").write_bytes(b"x = (\n")
    monkeypatch.chdir(tmp_path)
    assert main(["list", "scenarios"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "scenarios:"
    names = {line.split()[0]: line for line in lines[1:]}
    bundled = {p.stem for p in (ROOT / "scenarios").glob("*.py") if not p.stem.startswith("_")}
    assert set(names) == bundled | {"mine", "broken"}
    assert names["mine"].endswith("(./scenarios) Mine: a study of my own.")
    assert "unreadable" in names["broken"]
    assert "Quickstart: FedAvg on handwritten digits" in names["quickstart"]
    assert not (tmp_path / "ran.txt").exists()
