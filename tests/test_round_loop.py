"""The round loop's bookkeeping: over-selection, evaluation labels, who counts the
updates, and the warnings a run gives when its result cannot mean what it seems to."""

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simfl import apply_overrides, run
from simfl.core.config import load_scenario, parse_override
from simfl.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
LOSS_COLUMNS = ("n_late", "n_erased", "n_collided", "n_battery", "n_offline")


def rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


def with_(scenario, *pairs):
    return apply_overrides(scenario, [parse_override(p) for p in pairs])


def simfl(*args):
    return subprocess.run([sys.executable, "-m", "simfl", *args], capture_output=True, text=True,
                          cwd=ROOT)


# --- server.overcommit ----------------------------------------------------------------

def test_overcommit_invites_more_and_closes_at_the_kth_arrival(tmp_path):
    """quickstart: k = 10, deadline 6 s; overcommit 2 invites 20 of the available clients,
    a round ends with at most 10 updates and, once it has 10, before its deadline; the
    invitees still at work then are ``late`` ("round closed" in events.csv)."""
    done = simfl("run", "quickstart", "--timing-only", "--events", "--quiet",
                 "--set", "server.overcommit=2.0", "--set", "run.rounds=8",
                 "--out", str(tmp_path / "oc"))
    assert done.returncode == 0, done.stderr
    table = rows(tmp_path / "oc" / "rounds.csv")
    assert len(table) == 8
    for r in table:
        n_selected, n_received = int(r["n_selected"]), int(r["n_received"])
        assert n_selected == min(20, int(r["n_available"]))
        assert n_received <= 10
        assert n_selected == n_received + sum(int(r[c]) for c in LOSS_COLUMNS)
        if n_received == 10:  # closed by the 10th arrival, not by the deadline
            assert float(r["t_close_s"]) - float(r["t_open_s"]) <= 6.0
    full = [r for r in table if int(r["n_received"]) == 10 and int(r["n_late"]) > 0]
    assert full, "no round closed early with surplus invitees"
    assert any(float(r["t_close_s"]) - float(r["t_open_s"]) < 6.0 for r in full)
    surplus = [e for e in rows(tmp_path / "oc" / "events.csv") if e["kind"] == "late"]
    assert surplus and all(e["detail"] == "round closed" for e in surplus)


def test_overcommit_one_invites_exactly_k(tmp_path):
    done = simfl("run", "quickstart", "--timing-only", "--quiet", "--set", "run.rounds=3",
                 "--out", str(tmp_path / "k"))
    assert done.returncode == 0, done.stderr
    assert [int(r["n_selected"]) for r in rows(tmp_path / "k" / "rounds.csv")] == [10] * 3


# --- evals.csv round column -------------------------------------------------------------

def test_timed_evaluations_are_labelled_with_the_rounds_completed(tiny_scenario, tmp_path):
    """Evaluations every 3 s fall inside rounds (the tiny deadline is 7 s); each one's
    ``round`` is the number of rounds closed by its time: 0 first, never negative,
    never decreasing."""
    result = run(with_(tiny_scenario, "run.eval_every_s=3", "run.rounds=4"), tmp_path / "r")
    closes = np.array([o.t_close_s for o in result.outcomes])
    evals = rows(result.out_dir / "evals.csv")
    labels = [int(e["round"]) for e in evals]
    assert labels[0] == 0 and min(labels) >= 0 and labels == sorted(labels)
    for e in evals:
        assert int(e["round"]) == int(np.sum(closes <= float(e["t_s"]))), e
    inside = [e for e in evals if float(e["t_s"]) not in set(closes.tolist())]
    assert len(inside) > len(result.outcomes)  # most of them are mid-round


# --- trained == aggregated is counted by two parties ------------------------------------

class _DropsOne:
    """An aggregator that silently loses the first update of every round it is given."""

    def __init__(self, inner):
        self.inner = inner

    def init(self, params, n_samples):
        return self.inner.init(params, n_samples)

    def client_payload(self, state, client):
        return self.inner.client_payload(state, client)

    def aggregate(self, state, params, outcome, updates):
        return self.inner.aggregate(state, params, outcome, list(updates)[1:])


def test_invariant_check_catches_an_aggregator_that_drops_an_update(tiny_scenario, tmp_path,
                                                                    monkeypatch):
    import simfl.experiment.build as experiment

    build = experiment.build_aggregator
    monkeypatch.setattr(experiment, "build_aggregator",
                        lambda *args, **kwargs: _DropsOne(build(*args, **kwargs)))
    with pytest.raises(RuntimeError, match=r"trained (\d+), aggregated (?!\1)\d+"):
        run(with_(tiny_scenario, "run.rounds=2"), tmp_path / "r")
    table = rows(tmp_path / "r" / "rounds.csv")
    assert any(int(r["trained_updates"]) == int(r["aggregated_updates"]) + 1 for r in table)


def test_invariant_check_catches_an_executor_that_drops_a_job(tiny_scenario, tmp_path,
                                                              monkeypatch):
    from simfl.train.batched import BatchedExecutor
    from simfl.train.executor import InlineExecutor

    for executor in (InlineExecutor, BatchedExecutor):
        submit = executor.submit
        monkeypatch.setattr(executor, "submit",
                            lambda self, jobs, *rest, _submit=submit, **kw:
                            _submit(self, jobs, *rest, **kw)[1:])
    with pytest.raises(RuntimeError, match="received"):
        run(with_(tiny_scenario, "run.rounds=2"), tmp_path / "r")


def test_an_honest_run_counts_the_same_on_both_sides(tiny_scenario, tmp_path):
    result = run(tiny_scenario, tmp_path / "r")
    table = rows(result.out_dir / "rounds.csv")
    assert all(r["trained_updates"] == r["aggregated_updates"] == r["n_received"] for r in table)
    assert result.summary["warnings"] == []


# --- a model that never moves -----------------------------------------------------------

@pytest.mark.parametrize("pairs, words", [
    # 2 rounds of 5 invitees cannot reach all 12 clients: MIFA's wait_for_all never starts
    (("server.algorithm.kind=mifa",), ("mifa", "waiting for the updates of")),
    (("server.algorithm.kind=fedlaavg", "server.algorithm.warmup_rounds=50"), ("fedlaavg",)),
])
def test_a_run_whose_model_never_moves_says_so(tiny_scenario, tmp_path, pairs, words):
    result = run(with_(tiny_scenario, "run.rounds=2", *pairs), tmp_path / "r")
    assert result.summary["trained_updates"] > 0
    [warning] = result.summary["warnings"]
    assert "never updated" in warning and all(w in warning for w in words)
    assert json.loads((result.out_dir / "summary.json").read_text())["warnings"] == [warning]


def test_mifa_that_can_start_gives_no_warning(tiny_scenario, tmp_path):
    result = run(with_(tiny_scenario, "run.rounds=2", "server.algorithm.kind=mifa",
                       "server.algorithm.init=zeros"), tmp_path / "r")
    assert result.summary["warnings"] == []


def test_the_command_line_prints_the_warning(tmp_path, capsys):
    from simfl.cli import main

    assert main(["run", "quickstart", "--quiet", "--set", "server.algorithm.kind=mifa",
                 "--set", "run.rounds=2", "--set", "task.model=logreg",
                 "--out", str(tmp_path / "m")]) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("simfl run: warning: the global model was "
                                                   "never updated")
    summary = json.loads((tmp_path / "m" / "summary.json").read_text())
    assert len(summary["warnings"]) == 1


# --- FedGS without a graph; label-based models need labels ------------------------------

@pytest.mark.parametrize("timing_only", [False, True])
def test_fedgs_with_no_graph_answers_falls_back_to_an_empty_graph(tmp_path, timing_only):
    scenario = with_(load_scenario("fedgs"), "server.deadline_s=0.001", "run.rounds=3",
                     f"run.timing_only={json.dumps(timing_only)}")
    result = run(scenario, tmp_path / "g")
    assert result.summary["graph_updates"] == 0 and result.summary["rounds"] == 3
    warnings = result.summary["warnings"]
    [warning] = [w for w in warnings if "graph" in w]
    assert "no edges" in warning
    # a 1 ms deadline: nothing arrives, and the run says so
    assert any(w.startswith("no update arrived in the first 3 rounds") for w in warnings)


def test_fedgs_with_graph_answers_gives_no_warning(tmp_path):
    result = run(with_(load_scenario("fedgs"), "run.rounds=1", "run.timing_only=true"),
                 tmp_path / "g")
    assert result.summary["graph_updates"] > 0 and result.summary["warnings"] == []


QUADRATIC = ("task.dataset=quadratic", "task.partition=native")


@pytest.mark.parametrize("pairs, field", [
    (("population.availability.kind=y_cycle",), "population.availability.kind"),
    (("population.availability.kind=mifa_adversarial",), "population.availability.kind"),
    (("population.availability.kind=diurnal",), "population.availability.strategy"),
    (("server.sampler.kind=fedgs", "server.sampler.feature=oracle"), "server.sampler.feature"),
    (("server.sampler.kind=fedgs", "server.sampler.feature=optimum"), "server.sampler.feature"),
])
def test_label_based_models_need_a_classification_data_set(pairs, field):
    scenario = load_scenario("quickstart")
    with pytest.raises(ConfigError) as err:
        with_(scenario, *QUADRATIC, *pairs)
    assert err.value.field == field and "classification" in str(err.value)


def test_label_free_models_still_run_on_the_quadratic_set():
    with_(load_scenario("quickstart"), *QUADRATIC, "population.availability.kind=diurnal",
          "population.availability.strategy=sine")
    with_(load_scenario("quickstart"), *QUADRATIC, "population.availability.kind=bernoulli")


def test_quadratic_with_y_cycle_is_one_line_exit_2():
    done = simfl("run", "quickstart", "--timing-only", "--quiet", *[a for p in QUADRATIC
                                                                    for a in ("--set", p)],
                 "--set", "population.availability.kind=y_cycle")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "population.availability.kind" in done.stderr
