"""Checkpoints and ``simfl resume``: a safe file format, atomic writes, and resumed runs
whose tables are byte-identical to uninterrupted ones (also after kill -9)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
import torch

import simfl
from simfl.core.config import apply_overrides, load_scenario, parse_override
from simfl.experiment import checkpoint, resume_run, run_scenario
from simfl.experiment.checkpoint import CheckpointError
from stopped_runs import stopped_copy

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
    stopped = stopped_copy(kept, tmp_path / "stopped")
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


# ---- tampered checkpoints: one line, and the run folder unchanged ----------------------

def _tiny_checkpointed(rounds: int = 3, every: int = 2) -> simfl.Scenario:
    """Trains for real in about a second; power of choice journals loss arrays, FedAdam
    keeps records of tensors."""
    return simfl.Scenario(
        name="tamper", seed=3,
        task=simfl.Task(dataset=simfl.Digits(), model=simfl.Logreg(), n_clients=12,
                        batch_size=16, local_epochs=1, lr=0.2),
        population=simfl.Population(compute=simfl.Compute(median_samples_per_s=20.0, sigma=0.8),
                                    availability=simfl.Bernoulli(p=0.8)),
        network=simfl.Network(uplink=simfl.ErasureChannel(p=0.3), arq_max_attempts=2),
        server=simfl.Server(clients_per_round=5, deadline_s=7.0,
                            sampler=simfl.PowerOfChoice(d=8), optimizer=simfl.FedAdam()),
        run=simfl.Run(rounds=rounds, checkpoint_every_rounds=every))


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory):
    """A finished 3-round run, and a copy stopped after its round-2 checkpoint."""
    base = tmp_path_factory.mktemp("tamper")
    whole = run_scenario(_tiny_checkpointed(), base / "whole").out_dir
    stopped = stopped_copy(whole, base / "stopped")
    assert checkpoint.latest(stopped).name == "round_000002"
    return whole, stopped


def _digest(folder: Path) -> dict[str, str]:
    """Every path under ``folder`` with its content (a link: its target)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_symlink():
            found[key] = "link:" + os.readlink(path)
        elif path.is_file():
            found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[key] = "folder"
    return found


_CK = Path("checkpoint") / "round_000002"


def _edit_state(edit):
    def tamper(folder: Path) -> None:
        path = folder / _CK / "state.json"
        state = json.loads(path.read_text())
        result = edit(state)
        path.write_text(result if isinstance(result, str) else json.dumps(state))
    return tamper


def _write(name: str, data):
    def tamper(folder: Path) -> None:
        path = folder / name
        if data is None:
            path.unlink()
        else:
            path.write_bytes(data(path) if callable(data) else data)
    return tamper


def _tensors(change):
    def tamper(folder: Path) -> None:
        path = folder / _CK / "tensors.pt"
        tensors = torch.load(path, weights_only=True)
        change(tensors)
        torch.save(tensors, path)
    return tamper


def _arrays(change):
    def tamper(folder: Path) -> None:
        path = folder / _CK / "arrays.npz"
        with np.load(path) as stored:
            arrays = {k: stored[k] for k in stored.files}
        change(arrays)
        np.savez(path, **arrays)
    return tamper


class _Marker:
    """Unpickled, it would create a file: the test sees whether pickle ran."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _pickle(folder: Path) -> None:
    import pickle

    (folder / _CK / "tensors.pt").write_bytes(pickle.dumps(_Marker(str(folder.parent /
                                                                        "PICKLE_RAN"))))


def _zip_pickle(folder: Path) -> None:  # torch's own format, a hostile pickle inside
    torch.save({"t0": _Marker(str(folder.parent / "PICKLE_RAN"))}, folder / _CK / "tensors.pt")


def _trainer(key, value):
    return _edit_state(lambda s: s["trainer"].__setitem__(key, value))


def _set(*keys_value):
    *keys, value = keys_value

    def edit(state):
        node = state
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value
    return _edit_state(edit)


def _opt_fields(state):
    state["trainer"]["opt_state"]["$tuple"][0]["fields"]["z"] = 1


def _config_list(folder: Path) -> None:
    config = json.loads((folder / "config.json").read_text())
    config["scenario"] = [config["scenario"]]
    (folder / "config.json").write_text(json.dumps(config))


def _os_system(state):
    state["trainer"]["opt_state"]["$tuple"][1]["$record"] = "os:system"


TAMPERED = {
    "state_empty": _edit_state(lambda s: "{}"),
    "journal_missing": _edit_state(lambda s: s.pop("journal")),
    "rounds_done_string": _set("rounds_done", "2"),
    "rounds_done_infinity": _edit_state(
        lambda s: json.dumps(s).replace('"rounds_done": 2', '"rounds_done": Infinity')),
    "rounds_done_other": _set("rounds_done", 1),
    "float_garbage": _trainer("accuracy", {"$float": "garbage"}),
    "float_unknown_key": _trainer("accuracy", {"$float": "nan", "extra": 1}),
    "array_garbage": _set("fingerprint", "energy_j", {"$array": [1], "scalar": True}),
    "array_unknown_key": _set("fingerprint", "energy_j", {"$array": "a0", "scalar": True,
                                                          "x": 0}),
    "array_missing": _set("fingerprint", "energy_j", {"$array": "a99", "scalar": True}),
    "tensor_garbage": _set("trainer", "params", "layer0.bias", {"$tensor": {"t": 1}}),
    "tensor_unknown_key": _set("trainer", "params", "layer0.bias", {"$tensor": "t1",
                                                                    "y": 2}),
    "unknown_node": _trainer("versions", {"$set": [1]}),
    "record_wrong_fields": _edit_state(_opt_fields),
    "record_os_system": _edit_state(_os_system),
    "dict_list_key": _trainer("versions", {"$dict": [[[1, 2], None]]}),
    "params_missing_key": _edit_state(lambda s: s["trainer"]["params"].pop("layer0.bias")),
    "stepped_string": _trainer("stepped", "yes"),
    "trainer_unknown_key": _trainer("extra", 1),
    "journal_bad_entry": _edit_state(lambda s: s["journal"].__setitem__(1, {"$tuple": [
        "train", "x"]})),
    "size_negative": _set("recorder", "sizes", "rounds.csv", -5),
    "size_unknown_table": _set("recorder", "sizes", "notes.txt", 0),
    "size_longer_than_file": _set("recorder", "sizes", "rounds.csv", 10 ** 9),
    "eval_rows_bad": _set("recorder", "eval_rows", [[1, 2]]),
    "tensors_truncated": _write(_CK / "tensors.pt", lambda p: p.read_bytes()[:300]),
    "tensors_empty": _write(_CK / "tensors.pt", b""),
    "tensors_removed": _write(_CK / "tensors.pt", None),
    "tensors_wrong_shape": _tensors(lambda t: t.__setitem__("t0", t["t0"][:, :3])),
    "tensors_wrong_dtype": _tensors(lambda t: t.__setitem__("t1", t["t1"].double())),
    "tensors_nan": _tensors(lambda t: t["t0"].__setitem__((0, 0), float("nan"))),
    "tensors_moment_shape": _tensors(lambda t: t.__setitem__("t3", torch.zeros(2))),
    "tensors_pickle": _pickle,
    "tensors_zip_pickle": _zip_pickle,
    "arrays_removed": _write(_CK / "arrays.npz", None),
    "arrays_garbage": _write(_CK / "arrays.npz", b"PK\x03\x04 not a zip at all" * 10),
    "arrays_object": _arrays(lambda a: a.__setitem__("a1", np.array([object()]))),
    "arrays_wrong_shape": _arrays(lambda a: a.__setitem__("a0", np.zeros(3))),
    "arrays_losses_2d": _arrays(lambda a: a.__setitem__("a1", np.zeros((2, 2)))),
    "latest_binary": _write("checkpoint/LATEST", bytes(range(256))),
    "latest_10mb": _write("checkpoint/LATEST", b"round_000002" + b" " * 10_000_000),
    "latest_outside": _write("checkpoint/LATEST", b"../../whole/checkpoint/round_000002"),
    "config_scenario_list": _config_list,
}


@pytest.mark.parametrize("case", sorted(TAMPERED))
def test_a_tampered_checkpoint_is_refused_in_one_line_and_the_folder_is_unchanged(
        stopped_run, tmp_path, case):
    folder = tmp_path / "run"
    shutil.copytree(stopped_run[1], folder, symlinks=True)
    TAMPERED[case](folder)
    before = _digest(folder)
    with pytest.raises(simfl.SimflError) as caught:
        resume_run(folder)
    assert len(str(caught.value).splitlines()) == 1, str(caught.value)
    assert _digest(folder) == before
    assert not (tmp_path / "PICKLE_RAN").exists()


def test_simfl_resume_says_what_is_wrong_with_a_tampered_checkpoint_in_one_line(
        stopped_run, tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(stopped_run[1], folder)
    TAMPERED["config_scenario_list"](folder)  # also read for the progress bar
    out = _cli("resume", str(folder), "--quiet", cwd=tmp_path)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "Traceback" not in out.stderr


def test_a_torchscript_archive_as_tensors_is_one_line_without_torch_warnings(
        stopped_run, tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(stopped_run[1], folder)
    with warnings.catch_warnings():  # torch.jit is deprecated; its archives still load
        warnings.simplefilter("ignore")
        torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), str(folder / _CK / "tensors.pt"))
    out = _cli("resume", str(folder), "--quiet", cwd=tmp_path)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert out.stderr.startswith("simfl resume: error:") and "Warning" not in out.stderr


def test_a_checkpoint_touches_no_file_outside_its_run_folder(stopped_run, tmp_path):
    outside = tmp_path / "elsewhere" / "file.txt"
    outside.parent.mkdir()
    outside.write_text("precious\n")
    folder = tmp_path / "a" / "b" / "run"
    shutil.copytree(stopped_run[1], folder)
    names = ("../../../elsewhere/file.txt", str(outside))
    for name in names:  # a path as a table name: refused, whether sized or None
        for size in (0, None):
            _set("recorder", "sizes", name, size)(folder)
            with pytest.raises(simfl.SimflError, match="recorder sizes"):
                resume_run(folder)
            assert outside.read_text() == "precious\n"
            _edit_state(lambda s: s["recorder"]["sizes"].pop(name))(folder)
    rounds = folder / "rounds.csv"  # a table that is a link out of the folder: refused
    kept = rounds.read_bytes()
    rounds.unlink()
    rounds.symlink_to(outside)
    with pytest.raises(simfl.SimflError, match="not a plain file"):
        resume_run(folder)
    assert outside.read_text() == "precious\n"
    rounds.unlink()
    rounds.write_bytes(kept)
    result = resume_run(folder)  # the untouched checkpoint still resumes
    assert result.summary["resumed_after_round"] == 2
    _same_tables(stopped_run[0], folder, ("rounds.csv", "evals.csv"))


def test_two_resumes_of_one_folder_at_once_cannot_both_write(stopped_run, tmp_path):
    from simfl.metrics.run_lock import RunLock

    folder = tmp_path / "run"
    shutil.copytree(stopped_run[1], folder)
    lock = RunLock(folder).acquire()  # a resume (or the run itself) going on
    try:
        out = _cli("resume", str(folder), "--quiet", cwd=tmp_path)
    finally:
        lock.release()
    assert out.returncode == 2 and "in use by another simfl" in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    refused = []

    def second(round, t_s, accuracy):  # a second resume while the first one runs
        with pytest.raises(simfl.SimflError, match="in use") as caught:
            resume_run(folder)
        refused.append(str(caught.value))

    resume_run(folder, second)
    assert len(refused) == 1
    _same_tables(stopped_run[0], folder, ("rounds.csv", "evals.csv"))
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
    stopped = stopped_copy(kept, tmp_path / "stopped",
                           drop=("summary.json", "clients.csv", "events.csv", "mobility.csv"))
    assert resume_run(stopped).summary["resumed_after_round"] == 6
    _same_tables(plain, stopped, names)
