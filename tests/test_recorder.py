"""The run recorder: appended tables, bounded memory, invariants, strict JSON."""

import dataclasses
import json
import math

import pytest

from conftest import outcome
from simfl.core.records import Arrival
from simfl.metrics import recorder as recorder_module
from simfl.metrics.recorder import RunRecorder
from simfl.metrics.rundir import read_csv


def recorder(tmp_path, **kwargs):
    return RunRecorder(tmp_path, {"x": 1}, kwargs.pop("target", None), 0.0,
                       flush_every_s=kwargs.pop("flush_every_s", 0.0), **kwargs)


def test_rows_are_appended_never_rewritten(tmp_path, monkeypatch):
    rec = recorder(tmp_path)

    def no_rewrite(path, text):
        raise AssertionError(f"{path} rewritten whole")

    monkeypatch.setattr(recorder_module, "write_atomic", no_rewrite)
    for r in range(5):
        rec.round(outcome(r, [0, 1, 2]), 3, 3)
        rec.evaluation(r + 1.0, r + 1, 0.5 + r / 10, 1.0)
        rec.flush(force=True)
    rows = read_csv(tmp_path / "rounds.csv")
    assert [int(row["round"]) for row in rows] == [0, 1, 2, 3, 4]
    assert [row["n_received"] for row in rows] == ["3"] * 5
    evals = read_csv(tmp_path / "evals.csv")
    assert [float(row["accuracy"]) for row in evals] == pytest.approx([0.5, 0.6, 0.7, 0.8, 0.9])


def test_tables_have_their_header_before_the_first_round(tmp_path):
    recorder(tmp_path)
    assert (tmp_path / "rounds.csv").read_text().startswith("round,t_open_s,")
    assert (tmp_path / "evals.csv").read_text() == "t_s,round,accuracy,loss\n"


def test_memory_is_bounded_and_the_summary_comes_from_running_totals(tmp_path):
    rec = recorder(tmp_path, keep_outcome_records=40, target=0.75)
    for r in range(100):
        rec.round(outcome(r, list(range(9))), 9, 9)  # 10 records a round
        rec.evaluation(r + 1.0, r + 1, [0.7, 0.8, 0.6][r % 3], 0.1)
    assert len(rec.outcomes) == 4 and rec.outcomes[-1].round == 99
    assert len(rec.eval_rows) == 1 and rec.eval_rows[-1][0] == 100.0
    summary = rec.finish(100.0, 0, None)
    assert summary["rounds"] == 100
    assert summary["trained_updates"] == summary["aggregated_updates"] == 900
    assert summary["final_accuracy"] == 0.7 and summary["best_accuracy"] == 0.8
    assert summary["time_to_target_s"] == 2.0
    assert len(read_csv(tmp_path / "rounds.csv")) == 100


def test_every_round_is_still_checked_after_it_leaves_memory(tmp_path):
    rec = recorder(tmp_path, keep_outcome_records=5)
    bad = outcome(3, [0, 1])
    bad = dataclasses.replace(bad, received=(Arrival(0, 3, 99.0, 10), bad.received[1]))
    for r in range(10):
        rec.round(bad if r == 3 else outcome(r, [0, 1]), 2, 2)
    with pytest.raises(RuntimeError, match="round 3: received after the deadline"):
        rec.finish(10.0, 0, None)


def test_a_clock_going_backwards_between_rounds_is_caught(tmp_path):
    rec = recorder(tmp_path)
    rec.round(outcome(5, [0]), 1, 1)
    rec.round(outcome(1, [0]), 1, 1)  # opens at 1 s, before round 5 closed at 6 s
    with pytest.raises(RuntimeError, match="round 1: clock not monotone"):
        rec.finish(10.0, 0, None)


def test_energy_of_the_rounds_must_match_the_clients(tmp_path):
    rec = recorder(tmp_path, keep_outcome_records=1)
    for r in range(4):
        rec.round(dataclasses.replace(outcome(r, [0]), energy_j=2.5), 1, 1)
    rec.clients({"client": [0], "energy_j": [10.0], "battery_deaths": [0]})
    assert rec.finish(4.0, 0, None)["energy_j"] == 10.0
    (tmp_path / "second").mkdir()
    rec = recorder(tmp_path / "second")
    rec.round(dataclasses.replace(outcome(0, [0]), energy_j=2.5), 1, 1)
    rec.clients({"client": [0], "energy_j": [3.0], "battery_deaths": [0]})
    with pytest.raises(RuntimeError, match="energy of the rounds"):
        rec.finish(1.0, 0, None)


def test_summary_is_strict_json(tmp_path):
    rec = recorder(tmp_path)
    rec.round(outcome(0, [0]), 1, 1)
    rec.evaluation(1.0, 1, math.nan, 0.25)  # the quadratic data set has no accuracy
    summary = rec.finish(math.inf, 0, None, {"query_time_s": math.nan})
    text = (tmp_path / "summary.json").read_text()

    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")

    data = json.loads(text, parse_constant=refuse)
    assert data["final_accuracy"] is None and data["best_accuracy"] is None
    assert data["sim_time_s"] is None and data["query_time_s"] is None
    assert math.isnan(summary["final_accuracy"])  # the returned dict keeps the numbers


def test_temporary_files_have_unique_names_and_vanish(tmp_path, monkeypatch):
    from simfl.metrics import rundir

    names = []
    real = rundir.tempfile.mkstemp

    def spy(**kwargs):
        fd, name = real(**kwargs)
        names.append(name)
        return fd, name

    monkeypatch.setattr(rundir.tempfile, "mkstemp", spy)
    for _ in range(3):
        rundir.write_json(tmp_path / "a.json", {"a": 1})
    assert len(set(names)) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


def test_claiming_run_folders_from_many_threads_gives_each_its_own(tmp_path):
    import threading

    from simfl.metrics.rundir import fresh_run_dir

    barrier = threading.Barrier(8)
    got = []

    def claim():
        barrier.wait()
        got.append(fresh_run_dir(tmp_path / "runs" / "same_seed1"))

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(got)) == 8


def test_an_existing_empty_folder_is_claimed_and_a_full_one_skipped(tmp_path):
    from simfl.metrics.rundir import fresh_run_dir

    (tmp_path / "empty").mkdir()
    assert fresh_run_dir(tmp_path / "empty") == tmp_path / "empty"
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    assert fresh_run_dir(tmp_path / "full") == tmp_path / "full_2"
