"""Compressed uploads in runs: their exact size drives airtime and energy (also in
timing-only runs), the bits columns of events.csv and clients.csv agree, every
aggregator works on the decoded updates, and ``none`` changes nothing."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
import torch

import simfl
from simfl.algorithms import build_aggregator
from simfl.algorithms.compressed import compressed, with_vote
from simfl.algorithms.server_optimizers import server_step
from simfl.core.config import apply_overrides, load_scenario, parse_override
from simfl.core.errors import ConfigError
from simfl.core.records import ClientUpdate, RoundOutcome
from simfl.core.rng import RngTree
from simfl.experiment import run_scenario
from simfl.experiment.payload import upload_bits

UPLINK_BPS = 1e5


def _scenario(*overrides: str) -> simfl.Scenario:
    base = simfl.Scenario(
        name="compressed", seed=3,
        task=simfl.Task(dataset=simfl.Digits(), model=simfl.Mlp(hidden=(16,)), n_clients=12,
                        batch_size=16, local_steps=2, lr=0.1),
        population=simfl.Population(energy=simfl.Energy(compute_w=0.0, tx_j_per_bit=1e-6)),
        network=simfl.Network(
            uplink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=UPLINK_BPS)),
            downlink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=1e7))),
        server=simfl.Server(clients_per_round=4, deadline_s=1e4),
        run=simfl.Run(rounds=3, eval_every_rounds=1, events=True))
    return apply_overrides(base, [parse_override(o) for o in overrides])


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def test_bits_come_from_the_models_parameter_count_or_from_model_bytes():
    mlp = 64 * 16 + 16 + 16 * 10 + 10  # digits: 64 inputs, 10 classes
    sizes = [64 * 16, 16, 16 * 10, 10]
    assert upload_bits(_scenario()) is None
    assert upload_bits(_scenario("server.compression.kind=top_k")) == \
        max(1, mlp // 100) * (32 + math.ceil(math.log2(mlp)))
    assert upload_bits(_scenario("server.compression.kind=int8")) == 8 * sum(sizes) + 32 * 4
    # a size set by hand is one tensor of ceil(model_bytes / 4) float32 numbers
    assert upload_bits(_scenario("server.compression.kind=float16",
                                 "network.model_bytes=4001")) == 16 * 1001


@pytest.mark.parametrize("timing_only", [True, False])
def test_compressed_uploads_take_their_own_airtime_and_energy(tmp_path, timing_only):
    runs = {}
    for kind in ("none", "top_k"):
        scenario = _scenario(f"server.compression.kind={kind}",
                             f"run.timing_only={str(timing_only).lower()}")
        runs[kind] = run_scenario(scenario, tmp_path / f"{kind}{timing_only}")
    model_bytes = (64 * 16 + 16 + 16 * 10 + 10) * 4
    bits = upload_bits(_scenario("server.compression.kind=top_k"))
    saved_s = 8 * (model_bytes - math.ceil(bits / 8)) / UPLINK_BPS
    plain, small = (runs[k].outcomes[0] for k in ("none", "top_k"))
    assert [a.client for a in plain.received] == [a.client for a in small.received]
    for a, b in zip(plain.received, small.received):
        assert a.t_s - b.t_s == pytest.approx(saved_s, rel=1e-9)
    # energy: tx at 1 uJ per bit, the rest free: 8 bits per byte sent per upload
    clients = {k: _rows(runs[k].out_dir / "clients.csv") for k in runs}
    n_up = [len([e for e in _rows(runs[k].out_dir / "events.csv") if e["kind"] == "arrived"])
            for k in ("none", "top_k")]
    rx_j = sum(float(r["energy_j"]) for r in clients["none"]) - n_up[0] * 8 * model_bytes * 1e-6
    spent_j = sum(float(r["energy_j"]) for r in clients["top_k"])
    assert spent_j == pytest.approx(rx_j + n_up[1] * 8 * math.ceil(bits / 8) * 1e-6, rel=1e-9)


def test_events_and_clients_tables_show_the_same_bits(tmp_path):
    run = run_scenario(_scenario("server.compression.kind=qsgd"), tmp_path / "q")
    bits = upload_bits(_scenario("server.compression.kind=qsgd"))
    events = _rows(run.out_dir / "events.csv")
    by_client: dict[int, int] = {}
    for e in events:
        assert int(e["bits"]) == (bits if e["kind"] == "arrived" else 0)
        by_client[int(e["client"])] = by_client.get(int(e["client"]), 0) + int(e["bits"])
    sent = {int(r["client"]): int(r["bits_sent"]) for r in _rows(run.out_dir / "clients.csv")}
    assert sum(sent.values()) > 0
    assert sent == {c: by_client.get(c, 0) for c in sent}
    plain = run_scenario(_scenario(), tmp_path / "plain").out_dir
    assert "bits" not in _rows(plain / "events.csv")[0]
    assert "bits_sent" not in _rows(plain / "clients.csv")[0]


@pytest.mark.parametrize("algorithm", ["fedavg", "mifa", "scaffold", "fedvarp", "fedar"])
@pytest.mark.parametrize("kind", ["top_k", "qsgd"])
def test_every_aggregator_trains_on_decoded_updates(tmp_path, algorithm, kind):
    overrides = (f"server.algorithm.kind={algorithm}", "run.rounds=4", "run.events=false",
                 "server.sampler.kind=longest_absent")
    exact = run_scenario(_scenario(*overrides), tmp_path / "exact")
    lossy = run_scenario(_scenario(*overrides, f"server.compression.kind={kind}"),
                         tmp_path / "lossy")
    assert lossy.summary["aggregated_updates"] == exact.summary["aggregated_updates"] > 0
    moved = [float((lossy.params[k] - exact.params[k]).abs().max()) for k in exact.params]
    assert max(moved) > 0  # the operator reached the model
    assert all(torch.isfinite(v).all() for v in lossy.params.values())


def _update(client: int, values: list[float]) -> ClientUpdate:
    return ClientUpdate(client, 0, 10, {"w": torch.tensor(values)})


def test_majority_vote_moves_each_coordinate_by_the_step_times_the_votes_sign():
    config = simfl.Sign(vote="majority", server_step=0.5)
    agg = compressed(build_aggregator(simfl.FedAvg(), 0.1), config, RngTree(0))
    params = {"w": torch.zeros(4)}
    updates = [_update(0, [1.0, -2.0, 3.0, -0.5]), _update(1, [1.0, 2.0, -3.0, -0.5]),
               _update(2, [-9.0, 2.0, 3.0, -0.5])]
    outcome = RoundOutcome(0, 0.0, 1.0, 1.0, 3, (0, 1, 2), (), ())
    state = agg.init(params, np.full(3, 10))
    moved, state, metrics = agg.aggregate(state, params, outcome, updates)
    vote = with_vote(config, None)
    new, _ = server_step(vote, vote.init(params), params, moved)
    # votes per coordinate: +2-1, -1+2, +2-1, -3: every sign wins by majority, not by size
    assert torch.equal(new["w"], torch.tensor([0.5, 0.5, 0.5, -0.5]))
    assert with_vote(simfl.Sign(), None) is None


def test_none_uses_the_aggregator_itself_and_async_modes_refuse_compression():
    agg = build_aggregator(simfl.FedAvg(), 0.1)
    assert compressed(agg, simfl.NoCompression(), RngTree(0)) is agg
    with pytest.raises(ConfigError, match="compression.kind"):
        _scenario("server.mode.kind=async", "server.compression.kind=int8")


def test_quickstart_with_compression_none_is_unchanged(tmp_path):
    base = load_scenario("quickstart")
    short = [parse_override("run.rounds=3")]
    a = run_scenario(apply_overrides(base, short), tmp_path / "a").out_dir
    b = run_scenario(apply_overrides(base, short + [parse_override(
        "server.compression.kind=none")]), tmp_path / "b").out_dir
    for name in ("rounds.csv", "evals.csv", "clients.csv"):
        assert (a / name).read_bytes() == (b / name).read_bytes()


def test_the_airtime_warning_weighs_the_compressed_upload(tmp_path):
    short = ("server.deadline_s=0.1", "run.timing_only=true", "run.rounds=1")
    warned = run_scenario(_scenario(*short), tmp_path / "plain").summary["warnings"]
    assert any("one upload" in w for w in warned)
    small = run_scenario(_scenario(*short, "server.compression.kind=top_k"), tmp_path / "k")
    assert not any("one upload" in w for w in small.summary["warnings"])


def test_the_wrapper_reads_the_rules_attributes_through_and_copies():
    import copy

    inner = build_aggregator(simfl.FedAvg(), 0.1)
    agg = compressed(inner, simfl.TopK(), RngTree(0))
    assert agg.needs is None and agg.sum_weight == inner.sum_weight
    assert copy.copy(agg).aggregator is inner
