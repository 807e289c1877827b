"""Hostile scenario values and files: no hang, no non-finite result at exit 0, no
traceback, no file content on stderr.

Each case ends with one line and exit 2, or runs within a bound the documentation
states; the hangs are checked against the simulated work they now cost (legs walked,
exchanges tried), never against the wall clock.
"""

from __future__ import annotations

import json
import math
import sys
import tracemalloc
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from simfl.cli import main
from simfl.core.config.placement import MAX_PPP_POINTS, PppPlacement, RandomWaypoint
from simfl.core.errors import ConfigError, SimflError
from simfl.core.records import RoundOutcome
from simfl.core.rng import RngTree
from simfl.experiment.loop import check_finite
from simfl.sim.hierarchy.topology import hierarchy_from_graph
from simfl.sim.mac.csma import dcf
from simfl.sim.radio import mobility
from simfl.sim.radio.placement import place
from simfl.sim.traces import formats as traces

RADIO = ["--set", 'population.placement={"kind":"disc"}', "--set", "network.radio={}",
         "--set", "network.uplink=ideal"]
SECRET = "SIMFL_TEST_SECRET=correct-horse-battery-staple"


def _cli(capsys, command: str, *args: str) -> tuple[int, str]:
    status = main([command, "quickstart", *args])
    captured = capsys.readouterr()
    return status, captured.err


def _refused(capsys, command: str, *args: str) -> str:
    status, err = _cli(capsys, command, *args)
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _run(tmp_path: Path, *sets: str) -> list[str]:
    return ["--timing-only", "--quiet", "--out", str(tmp_path / "run"),
            "--set", "run.rounds=2", *[a for s in sets for a in ("--set", s)]]


# ---------------------------------------------------------------------------------
# hangs: bounded

def test_waypoint_speeds_beyond_the_cap_are_refused_at_validate(capsys):
    line = _refused(capsys, "validate", *RADIO, "--set", 'population.mobility={"kind":'
                    '"random_waypoint","min_speed_mps":1e6,"max_speed_mps":1e9}')
    assert "population.mobility.max_speed_mps" in line and "1000" in line
    line = _refused(capsys, "validate", *RADIO, "--set", 'population.mobility={"kind":'
                    '"random_waypoint","max_speed_mps":900,"radius_m":1}')
    assert "0.01 s" in line
    line = _refused(capsys, "validate", *RADIO, "--set", 'population.mobility={"kind":'
                    '"constant_velocity","speed_mps":1e9}')
    assert "population.mobility.speed_mps" in line


class _Map:
    def __init__(self, n: int) -> None:
        rng = np.random.default_rng(0)
        self.n_clients, self.x_m, self.y_m = n, rng.random(n) * 10, rng.random(n) * 10
        self.ap = np.zeros(n, dtype=np.int64)


class _Flat:
    def assign(self, x, y):
        return np.zeros(len(x), dtype=np.int64), np.zeros(len(x))

    def tx_power_dbm(self, gain):
        return gain


def _walk(cfg: RandomWaypoint, times) -> mobility.RandomWaypointMover:
    mover = mobility.RandomWaypointMover(cfg, _Map(30), _Flat(), RngTree(3))
    for t_s in times:
        mover.advance(t_s)
    return mover


def test_fast_waypoint_walkers_take_few_passes_and_the_same_positions(monkeypatch):
    cfg = RandomWaypoint(min_speed_mps=500.0, max_speed_mps=1000.0, radius_m=10.0)
    times = np.cumsum(np.full(5, 20.0))
    passes = []
    original = mobility.RandomWaypointMover._skip
    monkeypatch.setattr(mobility.RandomWaypointMover, "_skip",
                        lambda self, *a: passes.append(1) or original(self, *a))
    fast = _walk(cfg, times)
    legs = int(fast.leg.max())
    assert legs > 5_000  # about 80 legs per client and simulated second
    # passes grow with the legs over the batch, not one per leg
    assert len(passes) <= len(times) * (math.log2(mobility.MAX_LEG_BATCH) + 2) \
        + legs // mobility.MAX_LEG_BATCH
    monkeypatch.setattr(mobility, "MAX_LEG_BATCH", 1)  # one leg per pass, as before
    slow = _walk(cfg, times)
    assert np.array_equal(fast.radio_map.x_m, slow.radio_map.x_m)
    assert np.array_equal(fast.radio_map.y_m, slow.radio_map.y_m)
    assert np.array_equal(fast.leg, slow.leg)


def test_a_window_of_one_slot_without_retry_limit_is_refused_at_validate(capsys):
    line = _refused(capsys, "validate", *RADIO, "--set", 'network.mac={"kind":"csma_ca",'
                    '"carrier_sense_range_m":1e-300,"retry_limit":null,"cw_min":1,"cw_max":1,'
                    '"phy_rate_bps":2e6}', "--set", "server.deadline_s=1e6")
    assert "network.mac.cw_max" in line and "collide forever" in line


def test_a_contention_that_cannot_end_stops_after_the_failures_allowed(
        capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(dcf, "MAX_FAILED_IN_A_ROW", 2000)
    tried = []
    original = dcf.check_progress
    monkeypatch.setattr("simfl.sim.mac.csma.hidden.check_progress",
                        lambda cfg, n: tried.append(n) or original(cfg, n))
    line = _refused(capsys, "run", *RADIO, *_run(
        tmp_path, 'network.mac={"kind":"csma_ca","carrier_sense_range_m":1e-300,'
        '"retry_limit":null,"cw_min":1,"cw_max":2,"phy_rate_bps":2e6}',
        "server.deadline_s=1e6"))
    assert "2000 frame exchanges in a row failed" in line and max(tried) == 2000


def test_arq_attempts_are_bounded_and_a_certain_loss_runs_to_its_bound(capsys, tmp_path):
    lossy = ["--set", "network.uplink=erasure", "--set", "network.uplink.p=1",
             "--set", "server.deadline_s=1e9"]
    line = _refused(capsys, "validate", *lossy, "--set", "network.arq_max_attempts=1000000")
    assert "network.arq_max_attempts" in line and "1000" in line
    status, _ = _cli(capsys, "run", *lossy, *_run(tmp_path, "network.arq_max_attempts=1000"))
    assert status == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["aggregated_updates"] == 0 and math.isfinite(summary["sim_time_s"])


def test_a_ppp_mean_beyond_the_cap_is_refused_and_only_the_clients_are_drawn(capsys):
    side = 1000.0
    line = _refused(capsys, "validate", "--set", 'population.placement={"kind":"ppp",'
                    f'"density_per_m2":{2 * MAX_PPP_POINTS / side ** 2},"side_m":{side}}}')
    assert "population.placement.density_per_m2" in line
    cfg = PppPlacement(density_per_m2=MAX_PPP_POINTS / side ** 2, side_m=side)
    tracemalloc.start()
    try:
        x, _ = place(cfg, 50, RngTree(0).stream("placement"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(x) == 50 and peak < 1 << 20  # not 10^8 points (1.6 GB)


# ---------------------------------------------------------------------------------
# nonsense at exit 0: refused

def test_a_backhaul_latency_that_overflows_the_clock_is_refused(capsys):
    line = _refused(capsys, "validate", "--set",
                    'server.hierarchy={"kappa2":2,"backhaul":[{"latency_s":1e308}]}')
    assert "latency_s" in line
    line = _refused(capsys, "validate", "--set",
                    'server.hierarchy={"kappa2":2,"backhaul":[{"rate_bps":1e-300}]}')
    assert "rate_bps" in line


@pytest.mark.parametrize("t_close_s, energy_j", [(math.inf, 1.0), (1.0, math.nan)])
def test_a_round_with_a_non_finite_close_or_energy_is_refused(t_close_s, energy_j):
    outcome = RoundOutcome(round=3, t_open_s=0.0, t_deadline_s=1.0, t_close_s=t_close_s,
                           n_available=1, selected=(), received=(), missing=(),
                           energy_j=energy_j)
    with pytest.raises(SimflError, match="round 3 .* no longer a finite number"):
        check_finite(outcome)


def test_a_factory_that_exits_is_an_error_not_a_silent_success(capsys, tmp_path,
                                                               monkeypatch):
    (tmp_path / "exiting_net.py").write_text(
        "import sys\n\ndef make_net(input_shape, n_classes):\n    sys.exit(0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    own = Path(__file__).resolve().parents[1] / "scenarios" / "own_model.py"
    for command in (["validate"], ["run", "--timing-only", "--out", str(tmp_path / "run")]):
        status = main([*command, str(own), "--set",
                       "task.model.factory=exiting_net:make_net"])
        err = capsys.readouterr().err
        assert status == 2 and len(err.strip().splitlines()) == 1, err
        assert "SystemExit" in err
    sys.modules.pop("exiting_net", None)


def test_an_sinr_threshold_nothing_reads_is_refused(capsys):
    line = _refused(capsys, "validate", "--set", "network.sinr_threshold_db=5")
    assert "network.sinr_threshold_db" in line
    status, _ = _cli(capsys, "validate", "--set", "network.sinr_threshold_db=5",
                     "--set", "network.mac=slotted_aloha")
    assert status == 0  # slotted ALOHA's capture reads it


def _positions(tmp_path: Path, rows: dict[int, str]) -> Path:
    lines = ["client,x_m,y_m"] + [f"{i},{i},{i}" for i in range(50)]
    for index, text in rows.items():
        lines[index] = text
    path = tmp_path / "positions.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("rows, where", [
    ({3: "2,1e300,5"}, "line 4, column 3"),
    ({3: "2,5,-1e7"}, "line 4, column 5"),
    ({3: "2,1_00,5"}, "line 4, column 3"),
    ({3: "2_0,1,5"}, "line 4, column 1"),
    ({3: "2,0x10,5"}, "line 4, column 3"),
    ({0: SECRET}, "line 1"),
    ({5: f"4,3,{SECRET}"}, "line 6, column 5"),
    ({5: f"4,3,3,{SECRET}"}, "line 6, column 7"),
    ({5: "4,3"}, "line 6, column 4"),
])
def test_a_bad_position_file_says_where_and_never_what(capsys, tmp_path, rows, where):
    path = _positions(tmp_path, rows)
    line = _refused(capsys, "validate", "--set", "network.radio={}", "--set",
                    "network.uplink=ideal", "--set", 'population.placement={"kind":"file",'
                    f'"path":"{path}"}}')
    assert f"{path} {where} is not allowed" in line
    assert "SECRET" not in line and "horse" not in line and "1_00" not in line


@pytest.mark.parametrize("fmt, content", [
    ("csv", f"{SECRET}\n"),
    ("csv", f"client,start_s,end_s\n0,1,{SECRET}\n"),
    ("csv", "client,start_s,end_s\n0,1_0,20\n"),
    ("fedscale_csv", f"{SECRET}\n"),
    ("fedscale_csv", f"client,active,inactive,finish_time\n0,1,2,{SECRET},x\n"),
    ("fedscale_json", json.dumps({SECRET: {"active": [0], "inactive": [1],
                                           "finish_time": 5}})),
    ("fedscale_json", json.dumps([SECRET])),
    ("flash", json.dumps([{"messages": f"{SECRET}\tscreen_lock"}])),
    ("flash", json.dumps(SECRET)),
])
def test_a_bad_trace_file_never_repeats_its_content(tmp_path, fmt, content):
    path = tmp_path / "trace.txt"
    path.write_text(content)
    with pytest.raises(ConfigError) as caught:
        traces.load_trace(path, fmt)
    assert "SECRET" not in str(caught.value) and "horse" not in str(caught.value)
    assert str(path) in str(caught.value)


def test_a_trace_error_names_line_and_column(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text("client,start_s,end_s\n0,0,10\n1,5,nope\n")
    with pytest.raises(ConfigError) as caught:
        traces.load_trace(path, "csv")
    assert f"{path} line 3, column 5" in str(caught.value)


def test_the_process_environment_named_as_a_position_file_stays_unprinted(
        capsys, monkeypatch):
    monkeypatch.setenv("SIMFL_TEST_SECRET", "correct-horse-battery-staple")
    import subprocess

    out = subprocess.run(
        [sys.executable, "-m", "simfl", "validate", "quickstart", "--set", "network.radio={}",
         "--set", "network.uplink=ideal", "--set",
         'population.placement={"kind":"file","path":"/proc/self/environ"}'],
        capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1],
        env={"SIMFL_TEST_SECRET": "correct-horse-battery-staple", "PATH": "/usr/bin:/bin",
             "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert out.returncode == 2 and "horse" not in out.stderr and "horse" not in out.stdout
    assert "/proc/self/environ line 1" in out.stderr


def test_a_graph_with_an_edge_server_listed_twice_or_parallel_links_is_refused():
    graph = nx.Graph([(0, "a"), (1, "b"), ("a", "cloud"), ("b", "cloud")])
    with pytest.raises(ConfigError, match="listed once"):
        hierarchy_from_graph(graph, 2, edges=["a", "b", "a"])
    with pytest.raises(ConfigError, match="MultiGraph"):
        hierarchy_from_graph(nx.MultiGraph(graph), 2)
    with pytest.raises(ConfigError, match="MultiGraph or DiGraph"):
        hierarchy_from_graph(nx.DiGraph(graph), 2)


def _leaf(where: Path, edit) -> Path:
    from test_readers import leaf_folder

    leaf_folder(where, users=(3, 5))
    path = sorted((where / "train").glob("*.json"))[0]
    edit(path)
    return where


@pytest.mark.parametrize("edit", [
    lambda p: p.write_text("{not json"),
    lambda p: p.write_text(json.dumps({"users": ["a"], "num_samples": [1]})),
    lambda p: p.write_text(p.read_text().replace('"num_samples": [3', '"num_samples": [4')),
    lambda p: p.write_bytes(b"\xff\xfe" + p.read_bytes()),
])
def test_a_timing_only_run_checks_data_files_as_validate_does(capsys, tmp_path, edit):
    folder = _leaf(tmp_path / "leaf", edit)
    sets = ("task.dataset=leaf", f"task.dataset.path={folder}", "task.n_clients=2",
            "server.clients_per_round=2")
    flat = [a for s in sets for a in ("--set", s)]
    said = _refused(capsys, "validate", *flat)
    told = _refused(capsys, "run", *_run(tmp_path, *sets))
    assert said.split(": error: ", 1)[1] == told.split(": error: ", 1)[1]


# ---------------------------------------------------------------------------------
# tracebacks: one line

@pytest.mark.parametrize("sets", [
    ["network.uplink.rate=shannon", "network.uplink.rate.snr_db=-400"],
    ["network.uplink.rate.rate_bps=1e-310"],
])
def test_a_rate_that_rounds_to_zero_is_a_warning_not_a_traceback(capsys, tmp_path, sets):
    flat = [a for s in sets for a in ("--set", s)]
    status, err = _cli(capsys, "validate", *flat)
    assert status == 0 and "Traceback" not in err and "no update can arrive" in err
    status, err = _cli(capsys, "run", *_run(tmp_path, *sets))
    assert status == 0 and "Traceback" not in err


@pytest.mark.parametrize("out", ["", "/"])
def test_an_output_folder_without_a_name_is_one_line(capsys, out):
    line = _refused(capsys, "run", "--timing-only", "--quiet", "--out", out)
    assert "--out" in line


def test_studies_refuse_a_file_as_campaign_folder_and_counts_below_one(capsys, tmp_path):
    from studies import cvar, fedar, fedgs, run_all

    taken = tmp_path / "taken"
    taken.write_text("")
    for args in (["--quick", "--out", str(taken)], ["--quick", "--out", "/dev/null"],
                 ["--quick", "--jobs", "0", "--out", str(tmp_path / "a")]):
        for study in (fedar, cvar, fedgs):
            assert study.main(args) == 2
            err = capsys.readouterr().err
            assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert run_all.main(["--quick", "--out", str(taken)]) == 2
    assert run_all.main(["--quick", "--jobs", "0", "--out", str(tmp_path / "b")]) == 2
    for study in (cvar, fedgs):
        assert study.main(["--quick", "--model", "bogus", "--out", str(tmp_path / "c")]) == 2
        assert "--model" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "c").exists()
