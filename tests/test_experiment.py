"""End-to-end runs of small scenarios: files, determinism, decide-then-compute."""

import csv
import json

import pytest

from simfl import apply_overrides, run
from simfl.core.config import parse_override
from simfl.metrics.invariants import check_rounds
from simfl.metrics.rundir import EVAL_COLUMNS, ROUND_COLUMNS

TIMING_COLUMNS = ("round", "t_open_s", "t_close_s", "n_available", "n_selected", "n_received",
                  "n_late", "n_erased", "n_offline", "retries")


def rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


def with_(scenario, *pairs):
    return apply_overrides(scenario, [parse_override(p) for p in pairs])


def test_run_writes_every_file(tiny_scenario, tmp_path):
    result = run(with_(tiny_scenario, "run.events=true"), tmp_path / "r")
    names = {p.name for p in result.out_dir.iterdir()}
    assert {"config.json", "rounds.csv", "evals.csv", "events.csv", "summary.json"} <= names
    assert tuple(rows(result.out_dir / "rounds.csv")[0]) == ROUND_COLUMNS
    assert tuple(rows(result.out_dir / "evals.csv")[0]) == EVAL_COLUMNS
    config = json.loads((result.out_dir / "config.json").read_text())
    assert config["scenario"]["server"]["deadline_s"] == 7.0 and config["seed"] == 3
    assert "torch" in config["versions"]
    summary = json.loads((result.out_dir / "summary.json").read_text())
    assert summary == result.summary
    assert summary["trained_updates"] == summary["aggregated_updates"] > 0
    assert summary["rounds"] == 6
    assert summary["events"] == len(rows(result.out_dir / "events.csv"))


def test_same_seed_gives_byte_identical_tables(tiny_scenario, tmp_path):
    a, b = run(tiny_scenario, tmp_path / "a"), run(tiny_scenario, tmp_path / "b")
    for name in ("rounds.csv", "evals.csv"):
        assert (a.out_dir / name).read_bytes() == (b.out_dir / name).read_bytes()
    c = run(with_(tiny_scenario, "seed=4"), tmp_path / "c")
    assert (a.out_dir / "rounds.csv").read_bytes() != (c.out_dir / "rounds.csv").read_bytes()


def test_existing_run_directory_is_never_overwritten(tiny_scenario, tmp_path):
    first = run(tiny_scenario, tmp_path / "r").out_dir
    second = run(tiny_scenario, tmp_path / "r").out_dir
    assert first != second and (first / "summary.json").exists()


def test_timing_is_independent_of_training(tiny_scenario, tmp_path):
    """Decide, then compute: timing-only (no trainer) and real runs share every timing column."""
    real = rows(run(tiny_scenario, tmp_path / "real").out_dir / "rounds.csv")
    fake = rows(run(with_(tiny_scenario, "run.timing_only=true"), tmp_path / "fake").out_dir
                / "rounds.csv")
    assert [[r[c] for c in TIMING_COLUMNS] for r in real] == \
           [[r[c] for c in TIMING_COLUMNS] for r in fake]
    assert all(r["trained_updates"] == "0" for r in fake)


def test_training_changes_nothing_in_timing_even_with_another_learning_rate(tiny_scenario, tmp_path):
    a = rows(run(tiny_scenario, tmp_path / "a").out_dir / "rounds.csv")
    b = rows(run(with_(tiny_scenario, "task.lr=0.9", "task.model=mlp"), tmp_path / "b").out_dir
             / "rounds.csv")
    # the model size changes upload time, so compare only what the MLP cannot change
    assert [r["n_selected"] for r in a] == [r["n_selected"] for r in b]


def test_lossy_run_counts_losses_and_aggregates_only_arrivals(tiny_scenario, tmp_path):
    scenario = with_(tiny_scenario, "run.rounds=15", "network.uplink.p=0.5", "server.deadline_s=4")
    result = run(scenario, tmp_path / "r")
    table = rows(result.out_dir / "rounds.csv")
    assert sum(int(r["n_erased"]) for r in table) > 0
    assert sum(int(r["n_late"]) for r in table) > 0
    for r in table:
        assert int(r["aggregated_updates"]) == int(r["n_received"]) == int(r["trained_updates"])
        assert int(r["n_selected"]) == int(r["n_received"]) + int(r["n_late"]) + \
            int(r["n_erased"]) + int(r["n_offline"])


def test_min_updates_abandons_rounds_without_training(tiny_scenario, tmp_path):
    result = run(with_(tiny_scenario, "server.min_updates=5", "network.uplink.p=0.6"), tmp_path / "r")
    table = rows(result.out_dir / "rounds.csv")
    short = [r for r in table if int(r["n_received"]) < 5]
    assert short and all(r["aggregated_updates"] == "0" for r in short)


def test_evaluation_every_simulated_interval(tiny_scenario, tmp_path):
    result = run(with_(tiny_scenario, "run.eval_every_s=5"), tmp_path / "r")
    evals = rows(result.out_dir / "evals.csv")
    times = [float(e["t_s"]) for e in evals]
    assert times[0] == 0.0 and times == sorted(times)
    scheduled = [t for t in times[:-1]]
    assert scheduled == [5.0 * k for k in range(len(scheduled))]
    assert times[-1] == result.summary["sim_time_s"]


def test_horizon_stops_the_run(tiny_scenario, tmp_path):
    result = run(with_(tiny_scenario, "run.rounds=null", "run.horizon_s=20"), tmp_path / "r")
    table = rows(result.out_dir / "rounds.csv")
    assert float(table[-1]["t_open_s"]) < 20 <= float(table[-1]["t_close_s"])


def test_target_accuracy_time(tiny_scenario, tmp_path):
    result = run(with_(tiny_scenario, "run.target_accuracy=0.5", "run.rounds=10"), tmp_path / "r")
    evals = rows(result.out_dir / "evals.csv")
    first = next(float(e["t_s"]) for e in evals if float(e["accuracy"]) >= 0.5)
    assert result.summary["time_to_target_s"] == first


def test_invariant_checker_catches_a_broken_round(tiny_scenario, tmp_path):
    from dataclasses import replace

    result = run(tiny_scenario, tmp_path / "r")
    good = result.outcomes
    n = [len(o.received) for o in good]
    assert check_rounds(good, n, n) == []
    broken = [replace(good[0], t_close_s=good[0].t_deadline_s + 1)] + good[1:]
    assert check_rounds(broken, n, n)
    assert check_rounds(good, [x + 1 for x in n], n)
    dropped = [replace(good[0], selected=good[0].selected + (999,))] + good[1:]
    assert check_rounds(dropped, n, n)


def test_fedar_store_trains_and_aggregates_late_uploads(tiny_scenario, tmp_path):
    pairs = ("run.rounds=15", "server.deadline_s=4", "server.algorithm=fedar")
    stored = run(with_(tiny_scenario, *pairs, "server.algorithm.late_policy=store"),
                 tmp_path / "store")
    table = rows(stored.out_dir / "rounds.csv")
    assert sum(int(r["n_late_stored"]) for r in table) > 0
    for r in table:
        assert int(r["aggregated_updates"]) == int(r["trained_updates"]) == \
            int(r["n_received"]) + int(r["n_late_stored"])
    summary = stored.summary
    assert summary["trained_updates"] == summary["aggregated_updates"] == \
        sum(len(o.received) + len(o.late_received) for o in stored.outcomes)
    late = [a for o in stored.outcomes for a in o.late_received]
    assert all(a.base_round < o.round for o in stored.outcomes for a in o.late_received)
    n = [int(r["aggregated_updates"]) for r in table]
    assert check_rounds(stored.outcomes, n, n, late_allowed=True) == []
    assert check_rounds(stored.outcomes, n, n) and late  # only when the aggregator asked
    discarded = run(with_(tiny_scenario, *pairs), tmp_path / "discard")
    assert "n_late_stored" not in rows(discarded.out_dir / "rounds.csv")[0]
    assert all(o.late_received == () for o in discarded.outcomes)
    assert any((stored.params[k] != discarded.params[k]).any() for k in stored.params)


@pytest.mark.parametrize("dataset, partition", [("synthetic", "native"), ("blobs", "dirichlet")])
def test_other_datasets_run(tiny_scenario, tmp_path, dataset, partition):
    scenario = with_(tiny_scenario, f"task.dataset={dataset}", f"task.partition={partition}",
                     "run.rounds=3")
    assert run(scenario, tmp_path / "r").summary["rounds"] == 3


def test_inline_and_batched_executors_agree_end_to_end(tiny_scenario, tmp_path):
    inline = run(with_(tiny_scenario, "run.executor=inline", "task.model=mlp"), tmp_path / "i")
    batched = run(with_(tiny_scenario, "run.executor=batched", "task.model=mlp"), tmp_path / "b")
    a, b = rows(inline.out_dir / "evals.csv"), rows(batched.out_dir / "evals.csv")
    assert [r["t_s"] for r in a] == [r["t_s"] for r in b]
    assert max(abs(float(x["loss"]) - float(y["loss"])) for x, y in zip(a, b)) < 1e-4
    assert inline.summary["aggregated_updates"] == batched.summary["aggregated_updates"]
