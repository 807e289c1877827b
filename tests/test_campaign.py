"""Campaigns: grid expansion and run ids, the index, resuming, engines, results, and the
command line's manners (--version, --quiet, progress bars, provenance.json)."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import simfl
from simfl.campaign import CampaignError, sweep
from simfl.campaign import scheduling as sweep_module
from simfl.campaign.grid import expand, folder_name, parse_grid, parse_seeds, run_id, short_keys
from simfl.campaign.index import CampaignIndex
from simfl.campaign.results import csv_table, results, table, text_table
from simfl.cli import main
from simfl.core.config import load_scenario
from simfl.core.errors import ConfigError, SimflError

ROOT = Path(__file__).resolve().parents[1]
#: small training runs: a few seconds each
TINY = ["run.rounds=2", "task.n_clients=10", "task.model=logreg"]
#: timing-only runs: no torch, well under a second each
TIMING = ["run.rounds=3", "task.n_clients=10", "run.timing_only=true"]


def statuses(folder):
    index = CampaignIndex(folder)
    try:
        return {r.folder: r.status for r in index.rows()}
    finally:
        index.close()


# ---------------------------------------------------------------------------------
# grid, ids and folder names


def test_seeds_parse_ranges_and_lists():
    assert parse_seeds("1-5") == [1, 2, 3, 4, 5]
    assert parse_seeds("1,3,7") == [1, 3, 7]
    assert parse_seeds("2-3,9,3") == [2, 3, 9]
    for bad in ("5-1", "a", "1-", "-3", ""):
        with pytest.raises(ConfigError, match="--seeds"):
            parse_seeds(bad)


def test_grid_values_are_json_when_they_parse():
    assert parse_grid("server.deadline_s=5,10") == ("server.deadline_s", [5, 10])
    assert parse_grid("task.model.hidden=[32],[64,64]") == ("task.model.hidden", [[32], [64, 64]])
    assert parse_grid("network.mac=tdma,ideal") == ("network.mac", ["tdma", "ideal"])
    for bad in ("nokey", "=1,2", "seed=1,2", "x="):
        with pytest.raises(ConfigError, match="--grid"):
            parse_grid(bad)


def test_folder_names_are_readable_sanitised_and_short():
    keys = ["network.uplink.p", "network.downlink.p", "server.deadline_s"]
    short = short_keys(keys)
    assert short == {"network.uplink.p": "uplink.p", "network.downlink.p": "downlink.p",
                     "server.deadline_s": "deadline_s"}
    name = folder_name({"server.deadline_s": 6, "seed": 3}, short, "0" * 16)
    assert name == "deadline_s=6,seed=3"
    odd = folder_name({"name": "a/b c*", "seed": 1}, {}, "0" * 16)
    assert odd == "name=a_b_c_,seed=1"
    long = folder_name({"name": "x" * 300, "seed": 1}, {}, "f" * 16)
    assert len(long) <= 120 and long.endswith("@" + "f" * 16)


def test_run_id_hashes_the_resolved_scenario_and_the_version():
    base = load_scenario("quickstart")
    specs = expand(base, [], [("server.deadline_s", [6, 6.0, 12])], [1, 2], "1.0")
    assert len(specs) == 4  # 6 and 6.0 resolve to the same scenario: one run
    assert len({s.id for s in specs}) == 4 and len({s.folder for s in specs}) == 4
    again = expand(base, [], [("server.deadline_s", [6, 12])], [1, 2], "1.0")
    assert [s.id for s in again] == [s.id for s in specs]
    assert run_id(specs[0].scenario, "1.0") != run_id(specs[0].scenario, "1.1")
    assert specs[0].params == {"server.deadline_s": 6, "seed": 1}
    assert specs[0].scenario["seed"] == 1 and specs[1].scenario["seed"] == 2


def test_bad_grid_values_are_refused_before_anything_runs(tmp_path):
    with pytest.raises(ConfigError, match="server.deadline_s"):
        sweep("quickstart", grid=["server.deadline_s=5,-1"], out=tmp_path / "c")
    assert not (tmp_path / "c").exists()


# ---------------------------------------------------------------------------------
# the index: skip, retry, grow, resume


def test_a_second_sweep_runs_nothing_and_a_grown_grid_runs_only_the_new_points(tmp_path):
    out = tmp_path / "c"
    first = sweep("quickstart", seeds="1-2", grid=["server.deadline_s=5,7"], set=TIMING, out=out)
    assert (first.total, first.ran, first.skipped, first.failed) == (4, 4, 0, 0)
    assert sorted(statuses(out)) == ["deadline_s=5,seed=1", "deadline_s=5,seed=2",
                                     "deadline_s=7,seed=1", "deadline_s=7,seed=2"]
    stamps = {p: p.stat().st_mtime_ns for p in out.glob("*/rounds.csv")}
    second = sweep("quickstart", seeds="1-2", grid=["server.deadline_s=5,7"], set=TIMING, out=out)
    assert (second.ran, second.skipped) == (0, 4)
    assert {p: p.stat().st_mtime_ns for p in out.glob("*/rounds.csv")} == stamps
    grown = sweep("quickstart", seeds="1-3", grid=["server.deadline_s=5,7,9"], set=TIMING, out=out)
    assert (grown.total, grown.ran, grown.skipped) == (9, 5, 4)
    assert set(statuses(out).values()) == {"done"}
    with sqlite3.connect(out / "index.sqlite") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_failed_runs_are_retried_and_keep_a_one_line_error(tmp_path, monkeypatch):
    out = tmp_path / "c"
    real = sweep_module.make_engine

    def failing(*args):
        engine = real(*args)
        submit = engine.submit

        def broken(task, done):
            if task.scenario["seed"] == 2:
                done({"id": task.id, "ok": False, "folder": task.folder, "summary": None,
                      "wall_time_s": 0.1, "error": "ValueError: broken on purpose"})
            else:
                submit(task, done)

        engine.submit = broken
        return engine

    monkeypatch.setattr(sweep_module, "make_engine", failing)
    report = sweep("quickstart", seeds="1-2", set=TIMING, out=out)
    assert (report.ran, report.failed) == (2, 1)
    index = CampaignIndex(out)
    failed = [r for r in index.rows() if r.status == "failed"]
    index.close()
    assert [r.error for r in failed] == ["ValueError: broken on purpose"]
    monkeypatch.setattr(sweep_module, "make_engine", real)
    retried = sweep("quickstart", seeds="1-2", set=TIMING, out=out)
    assert (retried.ran, retried.failed, retried.skipped) == (1, 0, 1)
    assert set(statuses(out).values()) == {"done"}


def test_ctrl_c_marks_unfinished_runs_pending_and_a_rerun_finishes_them(tmp_path, monkeypatch):
    out = tmp_path / "c"
    from simfl.campaign import engines

    real = engines.execute_run
    calls = []

    def interrupted(task):
        calls.append(task.id)
        if len(calls) == 3:  # Ctrl-C during the third run, which has written its config
            Path(task.folder).mkdir(parents=True)
            (Path(task.folder) / "config.json").write_text("{half")
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(engines, "execute_run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sweep("quickstart", seeds="1-5", set=TIMING, out=out)
    seen = statuses(out)
    assert sorted(seen.values()) == ["done", "done", "pending", "pending", "pending"]
    monkeypatch.setattr(engines, "execute_run", real)
    again = sweep("quickstart", seeds="1-5", set=TIMING, out=out)
    assert (again.ran, again.skipped) == (3, 2)
    assert set(statuses(out).values()) == {"done"}
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == sorted(seen)
    for folder in out.iterdir():  # the half-written folder was redone from scratch
        if folder.is_dir():
            json.loads((folder / "config.json").read_text())


def test_a_run_left_running_by_a_killed_sweep_is_redone_in_a_fresh_folder(tmp_path):
    out = tmp_path / "c"
    sweep("quickstart", seeds="1-2", set=TIMING, out=out)
    index = CampaignIndex(out)
    victim = index.rows()[1]
    index.set_running(victim.id)  # as a sweep killed with SIGKILL leaves it
    index.close()
    (out / victim.folder / "summary.json").unlink()
    report = sweep("quickstart", seeds="1-2", set=TIMING, out=out)
    assert (report.ran, report.skipped) == (1, 1)
    assert statuses(out) == {"seed=1": "done", "seed=2_2": "done"}
    assert not (out / "seed=2").exists()  # the old folder, which the index owned, is gone
    assert (out / "seed=2_2" / "summary.json").is_file()


def test_only_one_sweep_at_a_time_per_campaign(tmp_path):
    import fcntl

    out = tmp_path / "c"
    out.mkdir()
    with open(out / "index.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(CampaignError, match="in use"):
            sweep("quickstart", set=TIMING, out=out)


def test_a_folder_that_is_no_campaign_is_one_line(tmp_path, capsys):
    assert main(["results", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "index.sqlite" in err


# ---------------------------------------------------------------------------------
# engines: per-run tables do not depend on where runs execute


def _tables(folder):
    return {p.parent.name + "/" + p.name: p.read_bytes()
            for p in sorted(folder.glob("*/*.csv")) if p.name in ("rounds.csv", "evals.csv")}


ENGINE_ARGS = dict(seeds="1-2", grid=["server.deadline_s=6,12"], set=TINY)


@pytest.fixture(scope="module")
def sequential(tmp_path_factory):
    out = tmp_path_factory.mktemp("seq") / "c"
    assert sweep("quickstart", out=out, **ENGINE_ARGS).ran == 4
    return _tables(out)


def test_a_local_pool_gives_the_same_tables_as_sequential_runs(tmp_path, sequential):
    assert len(sequential) == 8 and any(b"accuracy" in v for v in sequential.values())
    assert sweep("quickstart", out=tmp_path / "c", jobs=2, **ENGINE_ARGS).ran == 4
    assert _tables(tmp_path / "c") == sequential


def test_a_dask_local_cluster_gives_the_same_tables_as_sequential_runs(tmp_path, sequential):
    pytest.importorskip("distributed")
    assert sweep("quickstart", out=tmp_path / "c", jobs=2, engine="dask", **ENGINE_ARGS).ran == 4
    assert _tables(tmp_path / "c") == sequential


def test_a_missing_dask_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)
    assert main(["sweep", "quickstart", "--engine", "dask", "--out", str(tmp_path / "c"),
                 *[a for s in TIMING for a in ("--set", s)]]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and 'pip install "simfl[dask]"' in err


@pytest.mark.parametrize("argv, field", [
    (["--jobs", "0"], "--jobs"),
    (["--scheduler", "tcp://x:1"], "--scheduler"),
    (["--seeds", "3-1"], "--seeds"),
    (["--grid", "seed=1,2"], "--grid"),
    (["--grid", "server.deadline_s=5", "--grid", "server.deadline_s=7"], "--grid"),
])
def test_bad_sweep_arguments_are_one_line_and_exit_2(tmp_path, capsys, argv, field):
    assert main(["sweep", "quickstart", "--out", str(tmp_path / "c"), *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"error: {field} = " in err


# ---------------------------------------------------------------------------------
# results


def test_results_is_one_tidy_row_per_run(tmp_path, capsys, monkeypatch):
    out = tmp_path / "c"
    sweep("quickstart", seeds="1-2", grid=["server.deadline_s=5,7"], set=TIMING, out=out)
    sweep("quickstart", seeds="1", grid=["network.uplink.p=0.1"], set=TIMING, out=out)
    frame = simfl.results(out)
    assert list(frame.columns[:5]) == ["run", "server.deadline_s", "network.uplink.p", "seed",
                                       "status"]
    assert len(frame) == 5 and set(frame["status"]) == {"done"}
    # a key a run was not swept over shows its scenario's value
    assert sorted(frame["server.deadline_s"]) == [5, 5, 6.0, 7, 7]
    assert list(frame["network.uplink.p"]) == [0.2, 0.2, 0.2, 0.2, 0.1]
    for _, row in frame.iterrows():
        summary = json.loads((out / row["run"] / "summary.json").read_text())
        assert row["rounds"] == summary["rounds"] == 3
        assert row["sim_time_s"] == summary["sim_time_s"]
        assert row["energy_j"] == summary["energy_j"]
    monkeypatch.setitem(sys.modules, "pandas", None)
    rows = results(out)
    assert isinstance(rows, list) and rows[0]["run"] == frame["run"][0]
    monkeypatch.undo()
    assert main(["results", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:5] == ["run", "server.deadline_s", "network.uplink.p", "seed",
                                    "status"]
    assert len(lines) == 6 and len({len(l) for l in lines[1:]}) <= 2
    assert main(["results", str(out), "--csv", str(tmp_path / "t.csv")]) == 0
    import csv

    with open(tmp_path / "t.csv") as handle:
        parsed = list(csv.DictReader(handle))
    assert [float(r["sim_time_s"]) for r in parsed] == list(frame["sim_time_s"])


def test_text_table_aligns_and_drops_empty_columns():
    text = text_table(["run", "x", "status", "never"],
                      [{"run": "a", "x": 1.5, "status": "done"}, {"run": "bb", "x": 10, "status": "failed"}])
    assert text == ("run    x  status\n"
                    "a    1.5  done\n"
                    "bb    10  failed\n")
    assert csv_table(["run", "x"], [{"run": "a", "x": 0.1}]) == "run,x\na,0.1\n"


# ---------------------------------------------------------------------------------
# command-line manners


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out.strip() == f"simfl {simfl.__version__}"


def test_quiet_hides_the_bar_but_keeps_the_one_line_summary(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    args = ["run", "quickstart", "--timing-only", "--set", "run.rounds=3"]
    assert main([*args, "--quiet", "--out", str(tmp_path / "q")]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.startswith(f"{tmp_path / 'q'}: 3 rounds, ")
    assert main([*args, "--out", str(tmp_path / "loud")]) == 0
    captured = capsys.readouterr()
    assert "3/3" in captured.err and captured.out.startswith(f"{tmp_path / 'loud'}: 3 rounds")


def test_the_bar_is_off_when_stderr_is_no_terminal(tmp_path):
    done = subprocess.run([sys.executable, "-m", "simfl", "run", "quickstart", "--timing-only",
                           "--set", "run.rounds=3", "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith(f"{tmp_path / 'r'}: 3 rounds")


def test_the_bar_starts_at_the_first_round_not_at_import(monkeypatch):
    from simfl.cli import Progress

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    bar = Progress(load_scenario("quickstart"))
    assert bar.bar is None  # nothing timed while the data loads
    bar(1, 5.0, 0.5)
    assert bar.bar is not None and bar.bar.n == 1
    bar.close()


def test_provenance_is_apart_and_config_json_is_byte_stable(tmp_path, capsys):
    args = ["run", "quickstart", "--timing-only", "--quiet", "--set", "run.rounds=2"]
    before = time.time()
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    time.sleep(1.1)
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    assert (tmp_path / "a" / "config.json").read_bytes() == (tmp_path / "b" / "config.json").read_bytes()
    first = json.loads((tmp_path / "a" / "provenance.json").read_text())
    second = json.loads((tmp_path / "b" / "provenance.json").read_text())
    assert first["command"] == ["simfl", *args, "--out", str(tmp_path / "a")]
    assert first["simfl_version"] == simfl.__version__ and first["host"]
    started = time.mktime(time.strptime(first["started_at"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    assert before - 2 <= started <= time.time()
    assert first["started_at"] != second["started_at"]
    assert first["scenario_file"].endswith("quickstart.py")
    assert first["git_commit"] is None or len(first["git_commit"].split("+")[0]) == 40


def test_git_commit_never_fails(tmp_path, monkeypatch):
    from simfl.metrics import rundir

    assert rundir.git_commit(tmp_path) is None  # not a repository
    assert rundir.git_commit(None) is None
    monkeypatch.setenv("PATH", "")  # no git at all
    assert rundir.git_commit(ROOT) is None


def test_sweep_runs_have_provenance(tmp_path):
    out = tmp_path / "c"
    sweep("quickstart", set=TIMING, out=out, command=["simfl", "sweep", "quickstart"])
    record = json.loads((out / "seed=1" / "provenance.json").read_text())
    assert record["command"] == ["simfl", "sweep", "quickstart"]


# ---------------------------------------------------------------------------------
# a real coordinator killed half-way (slow: several processes, each importing torch)


#: seeds of the killed campaign (two grid points each): enough runs that a signal sent
#: after the second one finished lands half-way even on an idle machine
KILL_SEEDS = 10
KILL_RUNS = 2 * KILL_SEEDS


def _sweep_proc(out, *extra):
    cmd = [sys.executable, "-m", "simfl", "sweep", "quickstart", "--seeds", f"1-{KILL_SEEDS}", "--grid",
           "server.deadline_s=6,12", *[a for s in TINY for a in ("--set", s)],
           "--set", "run.rounds=6", "--out", str(out), "--quiet", *extra]
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_a_killed_sweep_resumes_with_only_the_unfinished_runs(tmp_path, signum):
    out = tmp_path / "c"
    proc = _sweep_proc(out, "--jobs", "2")
    deadline = time.time() + 300
    while time.time() < deadline:  # wait for some runs to finish
        time.sleep(0.1)
        try:  # the index may exist before its tables do
            if list(statuses(out).values()).count("done") >= 2:
                break
        except CampaignError:
            continue
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    if signum != signal.SIGKILL:
        assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err
    before = statuses(out)
    done_before = [f for f, s in before.items() if s == "done"]
    assert 2 <= len(done_before) < KILL_RUNS
    if signum != signal.SIGKILL:
        assert set(before.values()) <= {"done", "pending"}
    stamps = {f: (out / f / "summary.json").stat().st_mtime_ns for f in done_before}
    rerun = _sweep_proc(out, "--jobs", "2")
    stdout, err = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, err
    assert (f"{KILL_RUNS - len(done_before)} run now" in stdout
            and f"{len(done_before)} already done" in stdout)
    after = statuses(out)
    assert len(after) == KILL_RUNS and set(after.values()) == {"done"}
    assert {f: (out / f / "summary.json").stat().st_mtime_ns for f in done_before} == stamps


def test_a_timing_only_sweep_shows_no_bar_off_a_terminal_and_never_imports_torch(tmp_path):
    code = ("import sys; from simfl.cli import main; "
            f"code = main(['sweep', 'quickstart', '--seeds', '1-2', '--out', {str(tmp_path / 'c')!r}, "
            "'--set', 'run.timing_only=true', '--set', 'run.rounds=3']); "
            "assert 'torch' not in sys.modules, 'torch imported'; sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout == f"{tmp_path / 'c'}: 2 runs, 2 run now, 0 already done, in " \
        f"{done.stdout.rsplit('in ', 1)[1]}"


# ---------------------------------------------------------------------------------
# what results and sweep print


def test_results_columns_picks_and_orders_columns(tmp_path, capsys):
    out = tmp_path / "c"
    sweep("quickstart", seeds="1-2", grid=["server.deadline_s=5,7"], set=TIMING, out=out)
    assert main(["results", str(out), "--columns", "seed, energy_j,run,error"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["seed", "energy_j", "run", "error"]  # asked for: kept if empty
    assert len(lines) == 5 and all(line.split()[2].startswith("deadline_s=") for line in lines[1:])
    assert main(["results", str(out), "--columns", "run,sim_time_s",
                 "--csv", str(tmp_path / "t.csv")]) == 0
    assert (tmp_path / "t.csv").read_text().splitlines()[0] == "run,sim_time_s"


@pytest.mark.parametrize("columns", ["run,nope", ","])
def test_an_unknown_column_is_one_line_listing_the_columns(tmp_path, capsys, columns):
    out = tmp_path / "c"
    sweep("quickstart", seeds="1", set=TIMING, out=out)
    assert main(["results", str(out), "--columns", columns]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "error: --columns = " in err
    assert "run, seed, status, final_accuracy" in err


def test_sweep_prints_its_folder_relative_to_where_the_user_is(tmp_path, monkeypatch, capsys):
    here = tmp_path / "here"
    (here / "sub").mkdir(parents=True)
    monkeypatch.chdir(here / "sub")
    args = ["sweep", "quickstart", "--quiet", *[a for s in TIMING for a in ("--set", s)]]
    assert main([*args, "--out", str(here / "sub" / "c")]) == 0
    assert main([*args, "--out", "../elsewhere"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("c: 1 runs")
    assert lines[1].startswith(f"{here / 'elsewhere'}: 1 runs")  # not below: absolute
