"""Bring your own kinds: simfl.register, the ``simfl.plugins`` entry points, ``simfl list``."""

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

import simfl
from simfl.core.config import load_scenario
from simfl.core import registry as registry_module
from simfl.core.registry import REGISTRIES
from simfl.plugins import point_of, register

ROOT = Path(__file__).resolve().parents[1]

#: an installed-looking package: every extension point gets one kind
PLUGIN = '''
from dataclasses import dataclass

import numpy as np
import torch

import simfl
from simfl.train.datasets import Samples


@dataclass(frozen=True)
class Stripes(simfl.Dataset):
    """Two classes told apart by the sign of the first feature."""
    kind = "stripes"
    n_samples: int = 400

    def shape(self):
        return 4, 2


def load_stripes(cfg, n_clients, rngs):
    x = rngs.stream("data/stripes").standard_normal((cfg.n_samples, 4)).astype(np.float32)
    return Samples(x, (x[:, 0] > 0).astype(np.int64))


@dataclass(frozen=True)
class NoBias(simfl.Model):
    """A linear classifier without bias."""
    kind = "nobias"


class NoBiasNet:
    def __init__(self, n_in, n_out):
        self.shape = (n_out, n_in)

    def param_shapes(self):  # what simfl sizes transfers by, without torch
        return {"w": self.shape}

    def init(self, generator):
        return {"w": torch.zeros(self.shape)}

    def forward(self, params, x):
        return x @ params["w"].T


@dataclass(frozen=True)
class Halved(simfl.Aggregator):
    """FedAvg's plain mean with half the step."""
    kind = "halved"
    local_rule = "signed_sgd"


@dataclass(frozen=True, eq=False)
class SignedPayload(simfl.LocalPayload):
    """SGD along the sign of the gradient."""
    kind = "signed_sgd"


class SignedSgd(simfl.LocalRule):
    adds_term = True

    def init(self, payloads, start):
        return True

    def term(self, state, name, p, g):
        g.copy_(torch.sign(g))


class HalvedAggregator:
    def __init__(self, cfg, local_lr):
        pass

    def init(self, params, n_samples):
        return 0

    def client_payload(self, state, client):
        return SignedPayload()

    def aggregate(self, state, params, outcome, updates):
        if not updates:
            return params, state, {"n_aggregated": 0.0, "stepped": 0.0}
        new = {k: v + 0.5 * torch.stack([u.delta[k] for u in updates]).mean(0)
               for k, v in params.items()}
        return new, state + 1, {"n_aggregated": float(len(updates)), "stepped": 1.0}


@dataclass(frozen=True)
class FirstK(simfl.Sampler):
    """The k available clients of lowest id."""
    kind = "first_k"


class FirstKSampler:
    def __init__(self, cfg, probe):
        pass

    def init(self, n_samples):
        return None

    def select(self, state, view, k, rng):
        return np.asarray(view.available[:k])

    def observe(self, state, outcome):
        return state


def register():
    simfl.register(Stripes, load_stripes)
    simfl.register(NoBias, lambda cfg, shape, n_classes: NoBiasNet(shape[0], n_classes))
    simfl.register(Halved, HalvedAggregator)
    simfl.register(SignedPayload, SignedSgd)
    simfl.register(FirstK, FirstKSampler)
'''

SCENARIO = '''
import simfl

def scenario():
    return simfl.Scenario(name="plugged", seed=3, task=simfl.Task(
        dataset={"kind": "stripes"}, model="nobias", n_clients=8, local_steps=3, lr=0.05),
        server=simfl.Server(algorithm="halved", sampler="first_k", clients_per_round=4),
        run=simfl.Run(rounds=4, eval_every_rounds=2, executor="auto"))
'''


def install(tmp_path, name, module_text, entry):
    """A package ``name`` on a folder with a dist-info carrying a simfl.plugins entry point."""
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(module_text))
    info = tmp_path / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[simfl.plugins]\n{name} = {entry}\n")


def simfl_cli(tmp_path, *args):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    return subprocess.run([sys.executable, "-m", "simfl", *args], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=300)


def test_a_plugin_package_is_listed_and_runs_end_to_end(tmp_path):
    install(tmp_path, "myplug", PLUGIN, "myplug:register")
    (tmp_path / "plugged.py").write_text(SCENARIO)
    # the three commands in one process (each loads the plug-ins once, as it would alone)
    code = ("import sys; from simfl.cli import main; codes = [main(['list']), print('@@'), "
            "main(['validate', 'plugged.py']), print('@@'), "
            "main(['run', 'plugged.py', '--quiet', '--out', 'out']), "
            "main(['run', 'plugged.py', '--quiet', '--out', 'out_b', '--set', "
            "'run.executor=batched'])]; "
            "sys.exit(10 * max(codes[0:5:2]) + codes[5])")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)
    # list, validate, run and a batched run (a model that cannot be stacked trains one job
    # at a time, as char_lstm does) all succeed
    assert done.returncode == 0, done.stderr
    listed, checked, ran = done.stdout.split("@@\n")
    assert [line.split(": ")[0] for line in ran.splitlines()] == ["out", "out_b"]
    for name in ("halved", "signed_sgd", "first_k", "stripes", "nobias"):
        line = next(l for l in listed.splitlines() if l.split()[:1] == [name])
        assert "(plug-in: myplug)" in line, line
    assert "plug-in" not in next(l for l in listed.splitlines() if l.split()[:1] == ["fedavg"])
    assert json.loads(checked)["server"]["algorithm"] == {"kind": "halved"}
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["rounds"] == 4 and summary["aggregated_updates"] > 0
    evals = (tmp_path / "out" / "evals.csv").read_text().split()[1:]
    losses = [line.split(",")[3] for line in evals]
    assert len(set(losses)) > 1, "the plug-in model never moved"


def test_a_broken_plugin_is_reported_in_one_line_and_skipped(tmp_path):
    install(tmp_path, "brokenplug", "raise RuntimeError('no GPU here\\nsecond line')\n",
            "brokenplug")
    listed = simfl_cli(tmp_path, "list", "aggregators")
    assert listed.returncode == 0
    assert "fedavg" in listed.stdout
    assert listed.stderr.strip().splitlines() == [
        "simfl list: warning: plug-in 'brokenplug' (brokenplug) was not loaded: "
        "RuntimeError: no GPU here"]
    ran = simfl_cli(tmp_path, "validate", "quickstart")
    assert ran.returncode == 0 and "was not loaded" in ran.stderr


def test_a_kind_without_an_implementation_is_a_config_error(monkeypatch):
    from simfl.algorithms import build_aggregator

    registry = REGISTRIES["aggregators"]
    monkeypatch.setattr(registry, "_entries", dict(registry._entries))  # forget Orphan after

    @dataclass(frozen=True)
    class Orphan(simfl.Aggregator):
        """Never given an implementation."""
        kind = "orphan"

    with pytest.raises(simfl.ConfigError) as err:
        build_aggregator(simfl.Server(algorithm="orphan").algorithm, 0.1)
    assert str(err.value).startswith("server.algorithm.kind = 'orphan' is not allowed")
    assert "simfl.register(Orphan, implementation)" in str(err.value)


def test_register_needs_a_kind_of_a_supported_point():
    with pytest.raises(TypeError, match="not a kind's config class"):
        register(simfl.Aggregator, object)
    with pytest.raises(TypeError, match="rates: a kind is implemented by its config class"):
        register(simfl.FixedRate, object)
    assert point_of(simfl.ProxPayload) == "local_rules"
    assert point_of(simfl.Mlp) == "models"
    assert point_of(simfl.IdealChannel) == "channels"
    assert point_of(simfl.TdmaMac) == "macs"


def test_a_scenario_script_loaded_twice_registers_its_kinds_again():
    first = load_scenario("custom_rule")
    second = load_scenario("custom_rule")
    assert type(first.server.algorithm) is not type(second.server.algorithm)
    assert REGISTRIES["aggregators"].get("median") is type(second.server.algorithm)
    assert REGISTRIES["aggregators"].get("median")().local_rule == "clipped_sgd"
    entry = next(e for e in REGISTRIES["local_rules"] if e.name == "clipped_sgd")
    assert entry.plugin and not next(iter(REGISTRIES["local_rules"])).plugin


def test_custom_rule_clips_each_parameter_gradient():
    from simfl.train.local import StepRule

    load_scenario("custom_rule")
    payload = REGISTRIES["local_rules"].get("clipped_sgd")(max_norm=1.0)
    start = {"w": torch.zeros(2, 2)}
    rule = StepRule([payload, None], start, lr=0.5, weight_decay=0.0)
    assert not rule.gradient_only
    p = start["w"].clone()
    g = torch.tensor([[3.0, 4.0], [3.0, 4.0]])  # norm 5: client 0 clipped to 1, client 1 not
    rule.step([("w", p, g)], torch.zeros(2))
    assert torch.allclose(p, torch.tensor([[-0.3, -0.4], [-1.5, -2.0]]))
    results = rule.extras({"w": p}, [1, 1])
    assert results == [simfl.LocalResult(), simfl.LocalResult()]


def test_custom_rule_scenario_runs_with_both_executors(tmp_path):
    from simfl.core.config.scenario import apply_overrides

    base = load_scenario("custom_rule")
    small = [("run.rounds", 2), ("task.n_clients", 8), ("server.clients_per_round", 4)]
    runs = [simfl.run(apply_overrides(base, small + [("run.executor", ex)]),
                      tmp_path / ex) for ex in ("inline", "batched")]
    for r in runs:
        assert r.summary["aggregated_updates"] > 0
    for k, v in runs[0].params.items():
        assert torch.allclose(v, runs[1].params[k], atol=1e-5), k


def test_a_plugin_server_optimizer_steps_the_server_model(monkeypatch, tmp_path):
    """A registered transform is the one the server applies: halving the aggregator's step
    through the plug-in gives the same model, round by round, as the built-in ``sgd``
    with lr 0.5, and a different one from no optimiser."""
    from simfl.algorithms import server_optimizers as so
    from simfl.core.config import apply_overrides, parse_override

    registry = REGISTRIES["server_optimizers"]
    monkeypatch.setattr(registry, "_entries", dict(registry._entries))  # forget Halving after
    monkeypatch.setattr(registry_module, "_IMPLEMENTATIONS",
                        dict(registry_module._IMPLEMENTATIONS))

    @dataclass(frozen=True)
    class Halving(simfl.ServerOptimizer):
        """Half of the aggregator's step."""
        kind = "halving_for_test"

    built = []
    register(Halving, lambda config: built.append(config) or so.chain(so.scale(0.5)))
    assert point_of(Halving) == "server_optimizers"

    def evals(*pairs):
        scenario = apply_overrides(load_scenario("quickstart"),
                                   [parse_override(p) for p in ("run.rounds=4", *pairs)])
        out = tmp_path / str(len(list(tmp_path.iterdir())))
        simfl.run(scenario, out)
        return (out / "evals.csv").read_text()

    plugged = evals("server.optimizer.kind=halving_for_test")
    assert built == [Halving()]
    assert plugged == evals("server.optimizer.kind=sgd", "server.optimizer.lr=0.5")
    assert plugged != evals("server.optimizer.kind=none")


def test_a_server_optimizer_kind_without_an_implementation_is_a_config_error(monkeypatch):
    from simfl.algorithms.server_optimizers import build_server_optimizer

    registry = REGISTRIES["server_optimizers"]
    monkeypatch.setattr(registry, "_entries", dict(registry._entries))

    @dataclass(frozen=True)
    class Unbuilt(simfl.ServerOptimizer):
        """Never given an implementation."""
        kind = "unbuilt_here"

    with pytest.raises(simfl.ConfigError) as err:
        build_server_optimizer(Unbuilt())
    assert str(err.value).startswith("server.optimizer.kind = 'unbuilt_here' is not allowed")
    assert "simfl.register(Unbuilt, implementation)" in str(err.value)


def test_list_marks_a_built_in_kind_whose_implementation_a_plugin_replaced(monkeypatch, capsys):
    from simfl.cli import main
    from simfl.sim.links.channel import Link

    monkeypatch.setattr(registry_module, "_IMPLEMENTATIONS",
                        dict(registry_module._IMPLEMENTATIONS))
    monkeypatch.setattr(registry_module, "_PLUGGED", set())

    class LoggedLink(Link):
        """The ideal link, swapped in by a plug-in."""

    register(simfl.IdealChannel, LoggedLink)
    registry_module.implements(simfl.IdealChannel, Link)  # as simfl's module, imported later

    assert registry_module.implementation_of(simfl.IdealChannel()) is LoggedLink
    assert main(["list", "channels"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert "(plug-in implementation)" in lines["ideal"]
    assert "plug-in" not in lines["erasure"]
