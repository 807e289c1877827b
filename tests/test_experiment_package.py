"""The composition root as a package: one build context, a null trainer,
executors from one choice, the probe asking the trainer, bundled scenarios found anywhere."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import simfl
from simfl.core.config import apply_overrides, parse_override
from simfl.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def test_timing_only_runs_get_the_null_trainer(tiny_scenario):
    from simfl.experiment.build import build_context, build_online, build_trainer
    from simfl.experiment.training import ModelTrainer, NullTrainer

    timing = apply_overrides(tiny_scenario, [parse_override("run.timing_only=true")])
    ctx = build_context(timing)
    assert ctx.data is None and ctx.n_clients == 12 and len(ctx.n_samples) == 12
    trainer = build_trainer(ctx, build_online(ctx))
    assert isinstance(trainer, NullTrainer) and trainer.params is None
    assert trainer.train(0, None, {}) == (0, 0)
    ctx = build_context(tiny_scenario)
    assert isinstance(build_trainer(ctx, build_online(ctx)), ModelTrainer)


def test_timing_only_run_does_not_import_torch(tiny_scenario, tmp_path):
    code = ("import sys, simfl; from simfl.experiment import run_scenario; "
            "s = simfl.load_scenario('quickstart'); "
            "s = simfl.apply_overrides(s, [('run.timing_only', True), ('run.rounds', 2)]); "
            f"r = run_scenario(s, {str(tmp_path / 'r')!r}); "
            "assert r.params is None and r.summary['rounds'] == 2, r.summary; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("executor, expected", [("inline", "InlineExecutor"),
                                                ("batched", "BatchedExecutor"),
                                                ("auto", "BatchedExecutor")])
def test_session_gradient_rounds_use_the_runs_executor_choice(tiny_scenario, executor,
                                                               expected):
    from simfl.experiment.build import build_context, build_online, build_trainer

    sessions = {"rounds_per_session": 2, "pilot_sessions": 1, "init": "similarity"}
    scenario = apply_overrides(tiny_scenario, [("population.sessions", sessions),
                                               ("run.executor", executor)])
    ctx = build_context(scenario)
    trainer = build_trainer(ctx, build_online(ctx))
    assert type(trainer.compute.executor).__name__ == expected
    assert type(trainer.sessions._half_lr).__name__ == expected
    assert trainer.sessions._half_lr.task.lr == scenario.task.lr / 2


class _Sim:
    now_s = 0.0
    n_samples = np.array([3, 4, 5])

    def run_query(self, round, clients, work, reply_bytes, stream):
        self.now_s += 1.0
        return np.asarray(clients)


class _Trainer:
    """Answers a client's loss as the current model's value plus the client's id."""

    params = 10.0

    def client_losses(self, clients):
        return self.params + np.asarray(clients, dtype=float)


def test_the_probe_answers_about_the_trainers_current_model():
    from simfl.experiment.probe import RunProbe

    trainer = _Trainer()
    probe = RunProbe(_Sim(), None, trainer)
    answered, losses = probe.losses(0, [0, 2])
    assert answered.tolist() == [0, 2] and losses.tolist() == [10.0, 12.0]
    trainer.params = 20.0  # the next round's model: nobody writes it into the probe
    assert probe.losses(1, [1])[1].tolist() == [21.0]
    assert probe.counts == {"queried_losses": 3, "graph_updates": 0, "query_time_s": 2.0}
    assert not hasattr(probe, "params")


def test_group_waiting_fedavg_is_its_own_kind(tiny_scenario):
    from simfl.core.registry import REGISTRIES

    assert "fedavg_s_wait" in REGISTRIES["aggregators"].names()
    scenario = apply_overrides(tiny_scenario, [parse_override(o) for o in (
        "server.algorithm.kind=fedavg_s_wait", "server.sampler.kind=wait_group")])
    assert isinstance(scenario.server.algorithm, simfl.FedAvgSWait)
    with pytest.raises(ConfigError, match="server.sampler.kind"):
        apply_overrides(tiny_scenario, [parse_override("server.algorithm.kind=fedavg_s_wait")])
    with pytest.raises(ConfigError, match="variant"):  # the old spelling is gone
        apply_overrides(tiny_scenario, [parse_override(o) for o in (
            "server.algorithm.kind=fedavg_s", "server.algorithm.variant=wait")])


def test_bundled_scenarios_are_found_from_any_folder(tmp_path, monkeypatch):
    from simfl.core.config.scripts import bundled_scenarios_dir

    monkeypatch.chdir(tmp_path)
    assert (bundled_scenarios_dir() / "quickstart.py").is_file()
    assert simfl.load_scenario("quickstart").name == "quickstart"


@pytest.mark.slow
def test_a_non_editable_install_finds_the_bundled_scenarios(tmp_path):
    import shutil

    source, target = tmp_path / "source", tmp_path / "site"  # built from a copy: no build/ here
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", "build", "*.egg-info", "runs", ".hypothesis", ".pytest_cache", "__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                           "--no-build-isolation", "--target", str(target), str(source)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (target / "simfl" / "scenarios" / "quickstart.py").is_file()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-m", "simfl", "validate", "quickstart"],
                         capture_output=True, text=True, cwd=elsewhere, env=env)
    assert run.returncode == 0, run.stderr
    assert '"name": "quickstart"' in run.stdout


class Sealed:
    """A trainer that refuses every write from outside: the loops may only call it."""

    def __init__(self, inner):
        object.__setattr__(self, "_inner", inner)

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def __setattr__(self, name, value):
        raise AssertionError(f"a loop wrote trainer.{name}")


@pytest.mark.parametrize("mode", ["sync", "async", "buffered"])
def test_the_loops_use_the_trainer_only_through_its_protocol(tiny_scenario, tmp_path,
                                                             monkeypatch, mode):
    import simfl.experiment.run as run
    from simfl.experiment.run import run_scenario

    overrides = [("server.mode", mode)] + (
        [("server.mode.buffer_size", 2)] if mode == "buffered" else []) + [
        ("run.rounds", 4), ("network.uplink", {"kind": "ideal"})]
    scenario = apply_overrides(tiny_scenario, overrides)
    plain = run_scenario(scenario, tmp_path / "plain")
    build = run.build_trainer
    monkeypatch.setattr(run, "build_trainer", lambda ctx, online: Sealed(build(ctx, online)))
    sealed = run_scenario(scenario, tmp_path / "sealed")
    assert sealed.summary["trained_updates"] == plain.summary["trained_updates"] > 0
    for table in ("rounds.csv", "evals.csv"):
        assert (sealed.out_dir / table).read_bytes() == (plain.out_dir / table).read_bytes()


class Counting:
    """An inner trainer whose steps train two updates and apply two."""

    params = None
    calls = 0

    def apply(self, version, updates, staleness, versions):
        self.calls += 1
        return 2, 2


def test_a_journal_records_server_steps_and_answers_them_in_a_replay():
    from simfl.experiment.checkpoint import CheckpointError
    from simfl.experiment.journal import JournaledTrainer

    live = JournaledTrainer(Counting())
    assert live.apply(0, (), (), {}) == (2, 2) and live.entries == [("apply", 2, 2)]
    inner = Counting()
    replay = JournaledTrainer(inner, live.entries)
    assert replay.apply(0, (), (), {}) == (2, 2) and inner.calls == 0
    replay.end_replay()
    assert replay.apply(1, (), (), {}) == (2, 2) and inner.calls == 1
    with pytest.raises(CheckpointError, match="asked for train"):
        JournaledTrainer(Counting(), [("apply", 2, 2)]).train(0, None, {})
