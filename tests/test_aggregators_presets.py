"""Presets: ``server.algorithm.kind = X`` alone brings X's local rule, end to end.

Every registered aggregator runs a tiny scenario from its defaults with both executors;
the two executors give the same model, and every local rule it needs exists.
"""

import csv

import pytest
import torch

import simfl
from simfl.core.config.scenario import apply_overrides
from simfl.core.registry import REGISTRIES
from simfl.experiment import LOCAL_RULES, run_scenario

NAMES = REGISTRIES["aggregators"].names()
#: the other settings a kind's validation requires with it
COMPANIONS = {"fedavg_s_wait": [("server.sampler.kind", "wait_group")]}


def tiny(kind, executor):
    base = simfl.Scenario(
        name="preset", seed=5,
        task=simfl.Task(dataset=simfl.Digits(), partition=simfl.Iid(), model=simfl.Logreg(),
                        n_clients=4, batch_size=16, local_steps=2, lr=0.1),
        population=simfl.Population(availability=simfl.Bernoulli(p=0.7)),
        server=simfl.Server(sampler=simfl.AllAvailable(), clients_per_round=4),
        run=simfl.Run(rounds=3, eval_every_rounds=3, executor=executor))
    return apply_overrides(base, [("server.algorithm.kind", kind), *COMPANIONS.get(kind, [])])


def test_every_aggregator_has_its_local_rule():
    for name in NAMES:
        assert REGISTRIES["aggregators"].get(name)().local_rule in LOCAL_RULES, name


@pytest.mark.parametrize("name", NAMES)
def test_preset_runs_and_executors_agree(name, tmp_path):
    results = [run_scenario(tiny(name, ex), tmp_path / ex) for ex in ("inline", "batched")]
    for r in results:
        assert r.summary["trained_updates"] == r.summary["aggregated_updates"] > 0
    inline, batched = (r.params for r in results)
    for k in inline:
        assert torch.allclose(inline[k], batched[k], atol=1e-5), k
    losses = [row["loss"] for row in csv.DictReader(open(results[0].out_dir / "evals.csv"))]
    assert losses[0] != losses[-1], "the model never moved"
