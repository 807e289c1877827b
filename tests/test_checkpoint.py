"""Checkpoints and ``simfl resume``: a safe file format, atomic writes, and resumed runs
whose tables are byte-identical to uninterrupted ones (also after kill -9)."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
import torch

import simfl
from simfl.core.config import apply_overrides, load_scenario, parse_override
from simfl.experiment import checkpoint, resume_run, run_scenario
from simfl.experiment.checkpoint import CheckpointError

ROOT = Path(__file__).resolve().parents[1]
TABLES = ("rounds.csv", "evals.csv", "clients.csv")


@dataclasses.dataclass(frozen=True)
class _Memory:
    models: tuple
    weights: np.ndarray | None = None


class _Pair(NamedTuple):
    left: float
    right: object


def test_a_state_tree_comes_back_equal(tmp_path):
    state = {
        "params": {"w": torch.arange(6, dtype=torch.float32).reshape(2, 3) / 7,
                   "b": torch.tensor([1e-30, -0.0])},
        "versions": {3: {"w": torch.ones(2)}, 7: None},
        "table": np.array([[1, 2], [3, 4]], dtype=np.int64),
        "scalars": (np.float64(0.1), np.int32(-5), 1.5, float("nan"), float("inf"), -2, True),
        "memory": _Memory(models=({"w": torch.zeros(1)},), weights=np.array([0.25, 0.75])),
        "pair": _Pair(left=-float("inf"), right=["a", {"$odd": 1}]),
        "empty": {},
    }
    checkpoint.save(tmp_path, 4, state)
    found = checkpoint.latest(tmp_path)
    assert found == tmp_path / "checkpoint" / "round_000004"
    back = checkpoint.load(found)
    assert torch.equal(back["params"]["w"], state["params"]["w"])
    assert torch.equal(back["params"]["b"], state["params"]["b"])
    assert str(back["params"]["b"][1].item()) == "-0.0"
    assert list(back["versions"]) == [3, 7] and back["versions"][7] is None
    assert torch.equal(back["versions"][3]["w"], torch.ones(2))
    assert back["table"].dtype == np.int64 and np.array_equal(back["table"], state["table"])
    f64, i32, plain, nan, inf, neg, flag = back["scalars"]
    assert isinstance(f64, np.float64) and f64 == 0.1 and isinstance(i32, np.int32)
    assert (plain, inf, neg, flag) == (1.5, float("inf"), -2, True) and nan != nan
    assert isinstance(back["memory"], _Memory) and np.array_equal(back["memory"].weights,
                                                                   [0.25, 0.75])
    assert back["pair"] == _Pair(-float("inf"), ["a", {"$odd": 1}])
    assert back["empty"] == {}
    # plain JSON on disk, no pickle anywhere
    text = (found / "state.json").read_text()
    json.loads(text)
    assert not list(found.glob("*.pkl"))


def test_values_a_checkpoint_cannot_hold_are_refused_with_their_path(tmp_path):
    with pytest.raises(CheckpointError, match=r"state\['agg'\]\['fn'\]: a function"):
        checkpoint.save(tmp_path, 1, {"agg": {"fn": lambda: 0}})
    with pytest.raises(CheckpointError, match="array of Python objects"):
        checkpoint.save(tmp_path, 1, {"x": np.array([object()])})


def test_a_checkpoint_naming_a_class_that_is_not_a_loaded_dataclass_is_refused(tmp_path):
    checkpoint.save(tmp_path, 1, {"m": _Memory(models=())})
    state_file = tmp_path / "checkpoint" / "round_000001" / "state.json"
    for name in ("os:system", "no_such_module_xyz:Thing"):
        state_file.write_text(state_file.read_text().replace(
            f"{_Memory.__module__}:{_Memory.__qualname__}", name))
        with pytest.raises(CheckpointError, match="not a loaded dataclass"):
            checkpoint.load(state_file.parent)
        checkpoint.save(tmp_path, 1, {"m": _Memory(models=())})
    assert "no_such_module_xyz" not in sys.modules


def test_a_writer_that_dies_half_way_leaves_the_previous_checkpoint(tmp_path, monkeypatch):
    checkpoint.save(tmp_path, 2, {"a": np.arange(3)})

    def killed(*args, **kwargs):
        raise OSError("killed while writing")

    monkeypatch.setattr(np, "savez", killed)
    with pytest.raises(OSError):
        checkpoint.save(tmp_path, 3, {"a": np.arange(4)})
    monkeypatch.undo()
    assert checkpoint.latest(tmp_path).name == "round_000002"
    assert np.array_equal(checkpoint.load(checkpoint.latest(tmp_path))["a"], np.arange(3))
    checkpoint.save(tmp_path, 4, {"a": np.arange(5)})  # the partial folder is cleared
    assert sorted(p.name for p in (tmp_path / "checkpoint").iterdir()) == ["LATEST",
                                                                            "round_000004"]


def _scenario(*overrides: str):
    return apply_overrides(load_scenario("quickstart"), [parse_override(o) for o in overrides])


def _same_tables(a: Path, b: Path, names=TABLES) -> None:
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_checkpoints_change_no_table_and_a_resumed_run_ends_the_same(tmp_path):
    # power of choice asks the model for losses: the journal answers them in the replay;
    # FedAdam's moments are state the checkpoint must carry
    base = ("run.rounds=7", "server.sampler.kind=power_of_choice", "server.sampler.d=15",
            "server.optimizer.kind=fedadam")
    plain = run_scenario(_scenario(*base), tmp_path / "plain").out_dir
    kept = run_scenario(_scenario(*base, "run.checkpoint_every_rounds=3"),
                        tmp_path / "kept").out_dir
    _same_tables(plain, kept)
    assert checkpoint.latest(kept).name == "round_000006"
    summary = json.loads((kept / "summary.json").read_text())
    assert summary["queried_losses"] > 0
    # stopped after round 7 was written but before the summary: resume from round 6
    stopped = tmp_path / "stopped"
    shutil.copytree(kept, stopped)
    for name in ("summary.json", "clients.csv"):
        (stopped / name).unlink()
    result = resume_run(stopped)
    assert result.summary["resumed_after_round"] == 6
    _same_tables(plain, stopped)
    for key in ("final_accuracy", "best_accuracy", "rounds", "trained_updates",
                "queried_losses", "energy_j", "events"):
        assert result.summary[key] == summary[key], key


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simfl", *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_resume_refuses_what_it_cannot_continue_in_one_line(tmp_path):
    done = run_scenario(_scenario("run.rounds=2", "run.checkpoint_every_rounds=1"),
                        tmp_path / "done").out_dir
    none = run_scenario(_scenario("run.rounds=2"), tmp_path / "none").out_dir
    (none / "summary.json").unlink()
    edited = tmp_path / "edited"
    shutil.copytree(done, edited)
    (edited / "summary.json").unlink()
    config = json.loads((edited / "config.json").read_text())
    config["scenario"]["task"]["lr"] = 0.5
    (edited / "config.json").write_text(json.dumps(config))
    cases = {done: "is finished", none: "has no checkpoint", edited: "another scenario",
             tmp_path / "missing": "has no config.json"}
    for folder, message in cases.items():
        out = _cli("resume", str(folder), cwd=tmp_path)
        assert out.returncode == 2 and message in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    bad = _cli("validate", "quickstart", "--set", "run.checkpoint_every_rounds=0", cwd=tmp_path)
    assert bad.returncode == 2 and "run.checkpoint_every_rounds = 0" in bad.stderr
    unsupported = _cli("validate", "quickstart", "--set", "server.mode.kind=buffered", "--set",
                       "run.checkpoint_every_rounds=2", cwd=tmp_path)
    assert unsupported.returncode == 2 and "null with server.mode = 'buffered'" in \
        unsupported.stderr


# ---- kill -9 at three random rounds, then resume ---------------------------------------

HARD_SCENARIO = '''
import simfl


def scenario() -> simfl.Scenario:
    sessions = {sessions}
    return simfl.Scenario(
        name="hard", seed=5,
        task=simfl.Task(dataset=simfl.Digits(), partition=simfl.Dirichlet(alpha=0.7),
                        model=simfl.Logreg(), n_clients=30, batch_size=16, local_steps=5,
                        lr=0.05),
        population=simfl.Population(
            compute=simfl.Compute(median_samples_per_s=20.0, sigma=0.6),
            availability=simfl.Markov(on_rate_per_s=0.05, off_rate_per_s=0.025),
            battery=simfl.Battery(capacity_j=400.0, initial_soc=1.0, initial_soc_min=0.3,
                                  restart_soc=0.2),
            energy=simfl.Energy(idle_w=0.5, compute_w=5.0, tx_w=4.0, rx_w=1.0),
            sessions=simfl.Sessions(groups=2, rounds_per_session=4, pilot_sessions=1,
                                    label_overlap=2,
                                    init=simfl.Similarity(gradient_rounds=1, scale=10.0))
            if sessions else None),
        network=simfl.Network(
            uplink=simfl.ErasureChannel(p=0.3, rate=simfl.FixedRate(rate_bps=2e5)),
            downlink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=1e6)),
            arq_max_attempts=2,
            mac=simfl.SlottedAlohaMac(access_prob=0.3, slot_s=0.05, channels=2) if sessions
            else simfl.IdealMac()),
        server=simfl.Server(algorithm=simfl.Mifa() if sessions else
                            simfl.FedAR(late_policy="store"),
                            sampler=simfl.Uniform(), clients_per_round=8, deadline_s=6.0),
        run=simfl.Run(rounds=30, eval_every_rounds=1, checkpoint_every_rounds=1, events=True),
    )
'''


def _latest_round(folder: Path) -> int:
    try:
        return int((folder / "checkpoint" / "LATEST").read_text().split("_")[1])
    except (OSError, ValueError, IndexError):
        return 0


@pytest.mark.parametrize("sessions", [False, True], ids=["fedar_store", "sessions"])
def test_a_run_killed_at_three_random_rounds_resumes_to_the_same_tables(tmp_path, sessions):
    """Lossy uplink with ARQ, Markov availability, batteries that run flat; FedAR keeping
    late uploads (devices still at work across checkpoints), or sessions with the
    similarity warm start and MIFA's table over a slotted-ALOHA uplink (mac.csv)."""
    script = tmp_path / "hard.py"
    script.write_text(HARD_SCENARIO.format(sessions=sessions))
    whole = _cli("run", str(script), "--out", "whole", "--quiet", cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr
    rounds = (tmp_path / "whole" / "rounds.csv").read_text().splitlines()
    if not sessions:  # the hard parts happen: late uploads stored, erasures, flat batteries
        columns = rounds[0].split(",")
        totals = {c: sum(float(r.split(",")[columns.index(c)]) for r in rounds[1:])
                  for c in ("n_late_stored", "n_erased", "n_battery", "n_offline")}
        assert all(v > 0 for v in totals.values()), totals

    pick = random.Random(1234 + sessions)
    # rounds take ~0.1 s: stopping by round 20 leaves a second of margin for a slow poller
    kills = sorted(pick.sample(range(2, 21), 3))
    folder = tmp_path / "killed"
    command = [sys.executable, "-m", "simfl", "run", str(script), "--out", str(folder),
               "--quiet"]
    killed_at = []
    for k in kills:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
        while _latest_round(folder) < k and proc.poll() is None:
            time.sleep(0.002)
        time.sleep(pick.uniform(0.0, 0.05))  # somewhere inside the next round
        assert proc.poll() is None, "the run ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert not (folder / "summary.json").exists()
        killed_at.append(_latest_round(folder))
        command = [sys.executable, "-m", "simfl", "resume", str(folder), "--quiet"]
    assert killed_at == sorted(killed_at) and killed_at[0] >= kills[0]
    last = _cli("resume", str(folder), "--quiet", cwd=tmp_path)
    assert last.returncode == 0, last.stderr
    _same_tables(tmp_path / "whole", folder,
                 TABLES + ("events.csv",) + (("mac.csv",) if sessions else ()))
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["resumed_after_round"] == killed_at[-1]


# ---- a sweep resumes its interrupted runs --------------------------------------------

def test_a_sweep_resumes_an_interrupted_run_from_its_checkpoint(tmp_path):
    from simfl.campaign.index import CampaignIndex

    out = tmp_path / "c"
    args = dict(seeds="1-2", set=["run.rounds=7", "run.checkpoint_every_rounds=3"], out=out)
    simfl.sweep("quickstart", **args)
    index = CampaignIndex(out)
    rows = {row.folder: row for row in index.rows()}
    index.close()
    first, second = sorted(rows)
    originals = {f: {t: (out / f / t).read_bytes() for t in TABLES} for f in rows}
    # one run stopped after its round-6 checkpoint (pending, as Ctrl-C leaves it); the
    # other left "running" by a killed sweep: it goes to a fresh folder, with a copy
    for f in rows:
        for name in ("summary.json", "clients.csv"):
            (out / f / name).unlink()
    index = CampaignIndex(out)
    index.set_pending([rows[first].id])
    index.set_running(rows[second].id)
    index.close()
    report = simfl.sweep("quickstart", **args)
    assert report.ran == 2 and report.failed == 0
    index = CampaignIndex(out)
    after = {row.id: row for row in index.rows()}
    index.close()
    assert after[rows[first].id].folder == first
    moved = after[rows[second].id].folder
    assert moved != second
    for old, new in ((first, first), (second, moved)):
        summary = json.loads((out / new / "summary.json").read_text())
        assert summary["resumed_after_round"] == 6
        assert {t: (out / new / t).read_bytes() for t in TABLES} == originals[old]


def test_a_resumed_run_on_a_moving_fading_radio_ends_the_same(tmp_path):
    """Positions (random waypoint), Gauss-Markov fading per client and direction, and ARQ
    retries whose SNR those two decide: the replay rebuilds them, so the tables, events
    and mobility.csv of a resumed run are byte-identical to an uninterrupted run's."""
    base = ("run.rounds=7", "run.timing_only=true", "run.events=true", "run.mobility_csv=true",
            "population.placement=disc", "network.uplink=ideal", "network.downlink=ideal",
            'network.radio={"fading": {"kind": "rayleigh", "doppler_hz": 5.0}, '
            '"shadowing_db": 6.0}', "network.sinr_threshold_db=18",
            "network.arq_max_attempts=3",
            'population.mobility={"kind": "random_waypoint", "min_speed_mps": 5.0, '
            '"max_speed_mps": 20.0, "pause_s": 1.0}')
    plain = run_scenario(_scenario(*base), tmp_path / "plain").out_dir
    rounds = (plain / "rounds.csv").read_text().splitlines()
    retries = sum(int(r.split(",")[rounds[0].split(",").index("retries")]) for r in rounds[1:])
    assert retries > 0, "the fading decides some attempts"
    client_0 = [r for r in (plain / "mobility.csv").read_text().splitlines()[1:]
                if r.split(",")[1] == "0"]
    assert len(client_0) == 7 and client_0[0].split(",")[2] != client_0[-1].split(",")[2]
    kept = run_scenario(_scenario(*base, "run.checkpoint_every_rounds=3"),
                        tmp_path / "kept").out_dir
    names = TABLES + ("events.csv", "mobility.csv")
    _same_tables(plain, kept, names)
    stopped = tmp_path / "stopped"
    shutil.copytree(kept, stopped)
    for name in ("summary.json", "clients.csv", "events.csv", "mobility.csv"):
        (stopped / name).unlink()
    assert resume_run(stopped).summary["resumed_after_round"] == 6
    _same_tables(plain, stopped, names)
