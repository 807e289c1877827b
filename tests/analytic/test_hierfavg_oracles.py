"""HierFAVG (server.hierarchy) against FedAvg and against its closed form.

1. With kappa1 = kappa2 = 1, one edge server and an ideal backhaul, hierarchical FL is
   FedAvg: the same rounds.csv (apart from its tier columns), evals.csv and clients.csv,
   byte for byte, and the same final model.
2. Four noise-free clients of the ``quadratic`` task, f_i(w) = (w - e_i)^2 with
   e = (0, 1, 2, 4), clients 0 and 1 under edge 0 and clients 2 and 3 under edge 1;
   kappa1 = 2 (two exact gradient steps of lr gamma per edge round: s = q^2 with
   q = 1 - 2 gamma), kappa2 = 2; client 3 is offline in every odd round. From the cloud
   model w, the even round gives w_0 = 0.5 + s (w - 0.5), w_1 = 3 + s (w - 3); the odd
   round w_0 = 0.5 + s^2 (w - 0.5), w_1 = 2 + s (w_1 - 2); the cloud averages them with
   equal data weights (10 samples under each edge, whoever arrived):

       w' = (2.5 + s - 3.5 s^2) / 2 + s^2 w,
       fixed point w* = (2.5 + s - 3.5 s^2) / (2 (1 - s^2)).

   At gamma = 0.1: s = 0.64, w* = 1.7064 / 1.1808 = 1.445121951... Flat FedAvg with the
   same local work would weigh the odd round's three clients equally instead (a fixed
   point of its own), and with kappa2 = 1 the cloud would average after every round.
"""

from __future__ import annotations

import csv
import io

import pytest
import torch

import simfl
from simfl import experiment
from simfl.core.config import apply_overrides, load_scenario
from simfl.core.config.hierarchy import Backhaul, Hierarchy
from simfl.core.config.scripted import ScriptedAvailability
from simfl.metrics.recorder import TIER_COLUMNS


def _without_tier_columns(text: str) -> str:
    rows = list(csv.reader(io.StringIO(text)))
    keep = [i for i, name in enumerate(rows[0]) if name not in TIER_COLUMNS]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([[r[i] for i in keep] for r in rows])
    return out.getvalue()


def test_one_edge_with_ideal_links_gives_fedavgs_tables_and_model(tmp_path):
    base = [("run.rounds", 4), ("task.n_clients", 20)]
    flat_scenario = apply_overrides(load_scenario("quickstart"), base)
    flat = experiment.run_scenario(flat_scenario, tmp_path / "flat")
    tiered = experiment.run_scenario(
        apply_overrides(flat_scenario, [("server.hierarchy", {})]), tmp_path / "tiered")
    rounds = (tiered.out_dir / "rounds.csv").read_text()
    assert rounds.splitlines()[0].endswith(",".join(TIER_COLUMNS))
    assert [line.split(",")[-4] for line in rounds.splitlines()[1:]] == ["cloud"] * 4
    flat_rounds = (flat.out_dir / "rounds.csv").read_text()
    assert _without_tier_columns(rounds) == _without_tier_columns(flat_rounds)
    for name in ("evals.csv", "clients.csv"):
        assert (tiered.out_dir / name).read_bytes() == (flat.out_dir / name).read_bytes(), name
    assert tiered.summary["final_accuracy"] == flat.summary["final_accuracy"]
    assert flat.summary["aggregated_updates"] > 0
    for name, value in flat.params.items():
        assert torch.equal(tiered.params[name], value), name


GAMMA = 0.1
S = (1 - 2 * GAMMA) ** 2  # kappa1 = 2 exact steps
W_STAR = (2.5 + S - 3.5 * S**2) / (2 * (1 - S**2))


def _four_clients(tmp_path, name, hierarchy, rounds):
    scenario = simfl.Scenario(
        name=name, seed=5,
        task=simfl.Task(dataset=simfl.Quadratic(targets=(0.0, 1.0, 2.0, 4.0),
                                                samples_per_client=5),
                        partition=simfl.Native(), model=simfl.Logreg(), n_clients=4,
                        batch_size=8, local_steps=1, lr=GAMMA),
        population=simfl.Population(availability=ScriptedAvailability(
            online=((0, 1, 2, 3), (0, 1, 2)))),
        server=simfl.Server(algorithm=simfl.FedAvg(), sampler=simfl.AllAvailable(),
                            clients_per_round=4, deadline_s=1e6, hierarchy=hierarchy),
        run=simfl.Run(rounds=rounds, eval_every_rounds=rounds))
    return experiment.run_scenario(scenario, tmp_path / name)


def test_kappa_two_two_with_two_edges_reaches_the_closed_forms_fixed_point(tmp_path):
    assert W_STAR == pytest.approx(1.445121951, abs=1e-9)
    result = _four_clients(tmp_path, "hier", Hierarchy(kappa1=2, kappa2=2,
                                                       edge_of=(0, 0, 1, 1)), rounds=60)
    assert float(result.params["layer0.bias"][0]) == pytest.approx(W_STAR, abs=1e-5)
    tiers = [o.tier.tier for o in result.outcomes]
    assert tiers == ["edge", "cloud"] * 30  # kappa2 = 2: every second round
    # each edge aggregation counts its own clients: 4 + 3 updates per cloud period
    assert result.summary["aggregated_updates"] == 30 * 7


def test_without_the_hierarchy_the_fixed_point_is_another(tmp_path):
    # the same clients under one edge that the cloud averages every round: flat FedAvg
    result = _four_clients(tmp_path, "flat", Hierarchy(kappa1=2), rounds=60)
    assert abs(float(result.params["layer0.bias"][0]) - W_STAR) > 0.1


def test_an_edge_whose_backhaul_loses_everything_never_reaches_the_cloud(tmp_path):
    # the cloud hears edge 0 only (clients 0 and 1): its model goes to e-bar = 0.5
    lossy = (Backhaul(), Backhaul(p_loss=1.0))
    result = _four_clients(tmp_path, "lossy", Hierarchy(kappa1=2, kappa2=2, edge_of=(0, 0, 1, 1),
                                                       backhaul=lossy), rounds=40)
    assert float(result.params["layer0.bias"][0]) == pytest.approx(0.5, abs=1e-5)
    clouds = [o.tier for o in result.outcomes if o.tier.cloud]
    assert {(t.edges_up, t.edges_down) for t in clouds} == {((0,), (0,))}
