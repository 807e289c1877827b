"""A run with top-k error feedback resumes byte for byte: each client's residual (what it
has not sent yet) is part of the checkpoint and comes back with it."""

from __future__ import annotations

import json

import torch

from simfl.algorithms.compressed import CompressionState
from simfl.core.config import apply_overrides, load_scenario, parse_override
from simfl.experiment import checkpoint, resume_run, run_scenario
from stopped_runs import stopped_copy

TABLES = ("rounds.csv", "evals.csv", "clients.csv")


def _scenario(*overrides: str):
    base = ("run.rounds=7", "server.compression.kind=top_k", "server.compression.fraction=0.05")
    return apply_overrides(load_scenario("quickstart"),
                           [parse_override(o) for o in (*base, *overrides)])


def test_a_resumed_top_k_run_keeps_its_residuals_and_its_tables(tmp_path):
    whole = run_scenario(_scenario(), tmp_path / "plain")
    plain = whole.out_dir
    kept = run_scenario(_scenario("run.checkpoint_every_rounds=3"), tmp_path / "kept").out_dir
    latest = checkpoint.latest(kept)
    assert latest.name == "round_000006"
    state = checkpoint.load(latest)["trainer"]["agg_state"]
    assert isinstance(state, CompressionState)
    assert len(state.clients) > 5  # every client that uploaded owes something
    assert all(isinstance(r, torch.Tensor) and float(r.abs().sum()) > 0
               for r in state.clients.values())
    stopped = stopped_copy(kept, tmp_path / "stopped")
    result = resume_run(stopped)
    assert result.summary["resumed_after_round"] == 6
    for name in TABLES:
        assert (plain / name).read_bytes() == (stopped / name).read_bytes(), name
    summary = json.loads((plain / "summary.json").read_text())
    for key in ("final_accuracy", "best_accuracy", "rounds", "trained_updates", "energy_j"):
        assert result.summary[key] == summary[key], key
    assert all(torch.equal(value, whole.params[name]) for name, value in result.params.items())
