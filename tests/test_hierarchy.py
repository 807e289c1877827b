"""Hierarchical FL (server.hierarchy): the cloud phase's timing, edges per access point,
topologies from a graph, checkpoints inside a cloud period, and bad input in one line."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from simfl.core.config import apply_overrides, load_scenario, parse_override
from simfl.core.config.hierarchy import Backhaul
from simfl.core.errors import ConfigError
from simfl.experiment import checkpoint, resume_run, run_scenario
from simfl.sim.hierarchy.backhaul import cloud_phase
from simfl.sim.hierarchy.topology import hierarchy_from_graph
from stopped_runs import stopped_copy

ROOT = Path(__file__).resolve().parents[1]


def _scenario(*overrides: str):
    return apply_overrides(load_scenario("quickstart"), [parse_override(o) for o in overrides])


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_cloud_waits_for_its_deadline_and_sends_to_the_slowest_edge():
    links = [Backhaul(latency_s=2.0), Backhaul(latency_s=5.0), Backhaul(latency_s=1.0)]
    phase = cloud_phase(10.0, links, 0, 2.0, np.random.default_rng(0))
    # edge 0 lands exactly at the deadline (on time), edge 1 after it
    assert phase.edges_up == (0, 2) and phase.edges_down == (0, 1, 2)
    assert phase.t_aggregate_s == 12.0 and phase.t_end_s == 17.0
    # every upload in before the deadline: the cloud aggregates at the last one
    phase = cloud_phase(10.0, links, 0, 60.0, np.random.default_rng(0))
    assert phase.t_aggregate_s == 15.0 and phase.edges_up == (0, 1, 2)
    # nothing arrives: nothing is sent back
    lost = cloud_phase(10.0, [Backhaul(p_loss=1.0)] * 2, 0, 60.0, np.random.default_rng(0))
    assert (lost.edges_up, lost.edges_down, lost.t_end_s) == ((), (), 10.0)


def test_cloud_rounds_take_the_backhauls_time_and_edge_rounds_none(tmp_path):
    base = ("run.rounds=6", "run.timing_only=true", "network.model_bytes=1000000",
            'server.hierarchy={"kappa2": 3, "backhaul": [{"rate_bps": 8e6, "latency_s": 0.5}]}')
    out = run_scenario(_scenario(*base), tmp_path / "slow").out_dir
    rows = _rows(out / "rounds.csv")
    assert [r["tier"] for r in rows] == ["edge", "edge", "cloud"] * 2
    for row in rows:  # up 1.5 s, down 1.5 s
        phase_s = float(row["t_close_s"]) - float(row["t_edge_close_s"])
        assert phase_s == pytest.approx(3.0 if row["tier"] == "cloud" else 0.0, abs=1e-9)
        assert (row["edges_up"], row["edges_down"]) == (("1", "1") if row["tier"] == "cloud"
                                                        else ("0", "0"))
    for before, after in zip(rows, rows[1:]):
        assert after["t_open_s"] == before["t_close_s"]
    late = run_scenario(_scenario(*base, "server.hierarchy.cloud_deadline_s=1"),
                        tmp_path / "late").out_dir
    for row in _rows(late / "rounds.csv")[2::3]:  # the edge model misses the cloud
        assert row["edges_up"] == "0"
        assert float(row["t_close_s"]) - float(row["t_edge_close_s"]) == pytest.approx(1.0)


def test_edges_follow_the_access_points_clients_are_associated_with(tmp_path):
    scenario = _scenario(
        "run.rounds=3", "run.timing_only=true", "population.placement=disc",
        "network.uplink=ideal", "network.downlink=ideal", "network.radio={}",
        'network.cells={"access_points": [[-200, 0], [200, 0]]}', "server.hierarchy={}")
    result = run_scenario(scenario, tmp_path / "cells")
    ap = {int(r["client"]): int(r["ap"]) for r in _rows(result.out_dir / "clients.csv")}
    assert set(ap.values()) == {0, 1}
    for outcome in result.outcomes:
        assert outcome.tier.n_edges == 2
        assert outcome.tier.edges == tuple(ap[c] for c in outcome.selected)


def test_a_graph_gives_each_client_its_edge_and_each_edge_its_backhaul():
    graph = nx.Graph()
    graph.add_edges_from([(0, "north"), (1, "south"), (2, "north")])
    graph.add_edge("north", "cloud", rate_bps=1e8, latency_s=0.02)
    graph.add_edge("south", "cloud", p_loss=0.1)
    tiers = hierarchy_from_graph(graph, 3, kappa2=4)
    assert tiers.edge_of == (0, 1, 0) and tiers.kappa2 == 4
    assert tiers.backhaul == (Backhaul(rate_bps=1e8, latency_s=0.02), Backhaul(p_loss=0.1))
    graph.add_edge(3, "west")
    with pytest.raises(ConfigError, match="node = 'west'.*listed edge server"):
        hierarchy_from_graph(graph, 4, edges=["north", "south"])
    graph.add_edge("west", "cloud", rate_bps=-5.0)
    with pytest.raises(ConfigError, match=r"backhaul\[2\] \(west-cloud\)\.rate_bps = -5"):
        hierarchy_from_graph(graph, 4)


@pytest.mark.parametrize("key, value, field", [
    ("server.hierarchy.kappa1", "0", "server.hierarchy.kappa1 = 0"),
    ("server.hierarchy.backhaul", '[{"rate_bps": -1}]',
     "server.hierarchy.backhaul.[0].rate_bps = -1.0"),
    ("server.hierarchy", '{"edge_of": [' + ", ".join(["0"] * 49) + ', 2], "backhaul": [{}, {}]}',
     "server.hierarchy.edge_of[49] = 2"),
    ("server.hierarchy", '{"kappa2": 2}', "server.algorithm.kind = 'scaffold'"),
])
def test_bad_hierarchies_are_refused_in_one_line(key, value, field):
    extra = ["server.algorithm=scaffold"] if "scaffold" in field else []
    with pytest.raises(ConfigError) as err:
        _scenario(*extra, f"{key}={value}")
    assert str(err.value).startswith(field) and "\n" not in str(err.value)


def test_simfl_validate_refuses_a_bad_kappa_with_exit_status_2():
    done = subprocess.run([sys.executable, "-m", "simfl", "validate", "quickstart", "--set",
                           "server.hierarchy.kappa2=0"], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "server.hierarchy.kappa2 = 0" in done.stderr


def test_a_run_resumed_inside_a_cloud_period_ends_the_same(tmp_path):
    # two edges, the cloud every 4th round; the checkpoint after round 6 holds edge models
    # two rounds into a cloud period, and round 8's cloud aggregation averages them
    base = ("run.rounds=8", "task.n_clients=20", "server.clients_per_round=8",
            'server.hierarchy={"kappa2": 4, "edge_of": [' + ", ".join(["0", "1"] * 10) + '],'
            ' "backhaul": [{"rate_bps": 1e7, "latency_s": 0.1}, {"latency_s": 0.3}]}')
    plain = run_scenario(_scenario(*base), tmp_path / "plain")
    kept = run_scenario(_scenario(*base, "run.checkpoint_every_rounds=3"), tmp_path / "kept")
    assert checkpoint.latest(kept.out_dir).name == "round_000006"
    stopped = stopped_copy(kept.out_dir, tmp_path / "stopped")
    resumed = resume_run(stopped)
    assert resumed.summary["resumed_after_round"] == 6
    for name in ("rounds.csv", "evals.csv", "clients.csv"):
        assert (stopped / name).read_bytes() == (plain.out_dir / name).read_bytes(), name
    assert resumed.summary["final_accuracy"] == plain.summary["final_accuracy"]


def test_kappa1_multiplies_the_local_work_once():
    from simfl.core.config.hierarchy import edge_work

    steps = _scenario("task.local_steps=1000", 'server.hierarchy={"kappa1": 2000}')
    scaled = edge_work(steps)
    assert (scaled.task.local_steps, scaled.server.hierarchy.kappa1) == (2_000_000, 1)
    epochs = edge_work(_scenario('server.hierarchy={"kappa1": 3}'))  # quickstart: 2 epochs
    assert (epochs.task.local_epochs, epochs.task.local_steps) == (6, None)
    with pytest.raises(ConfigError, match="server.hierarchy.kappa1 = 500000 .*at most 100000 "):
        _scenario("task.local_steps=10000", 'server.hierarchy={"kappa1": 500000}')


def test_kappa1_doubles_each_clients_compute_time(tmp_path):
    def computed_s(kappa1):
        out = run_scenario(_scenario("run.rounds=1", "run.timing_only=true", "run.events=true",
                                     "server.deadline_s=1e6", "network.uplink=ideal",
                                     f'server.hierarchy={{"kappa1": {kappa1}}}'),
                           tmp_path / f"k{kappa1}").out_dir
        return {int(r["client"]): float(r["t_s"]) for r in _rows(out / "events.csv")
                if r["kind"] == "computed"}

    one, two = computed_s(1), computed_s(2)
    download_s = min(one.values()) - (min(two.values()) - min(one.values()))
    assert one.keys() == two.keys() and len(one) > 1
    for client, t_s in one.items():  # t = download + work / speed
        assert two[client] - download_s == pytest.approx(2 * (t_s - download_s), rel=1e-9)
