"""``run_scenario``: build a run's components, run its rounds, write its run directory."""

from __future__ import annotations

import importlib.metadata
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simfl.core.config import Scenario
from simfl.core.records import RoundOutcome
from simfl.experiment.build import (build_client_sampler, build_context, build_online,
                                    build_probe, build_simulation, build_trainer,
                                    check_local_rule)
from simfl.experiment.loop import ProgressFn, RoundLoop
from simfl.metrics.recorder import RunRecorder
from simfl.metrics.rundir import fresh_run_dir
from simfl.preflight import preflight


@dataclass(frozen=True)
class RunResult:
    out_dir: Path
    summary: dict[str, Any]
    outcomes: list[RoundOutcome]
    params: Any = None  # the final global model (None in timing-only runs)


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in ("simfl", "numpy", "simpy", "torch", "scikit-learn"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "not installed"
    return found


def default_out_dir(scenario: Scenario) -> Path:
    return Path("runs") / f"{scenario.name}_seed{scenario.seed}"


def run_scenario(scenario: Scenario, out_dir: Path | None = None,
                 progress: ProgressFn | None = None) -> RunResult:
    """Simulate ``scenario`` and write its run directory (a fresh one by default)."""
    preflight(scenario)  # every check that needs no training, before anything is allocated
    started_s = time.perf_counter()
    check_local_rule(scenario)
    ctx = build_context(scenario)
    online = build_online(ctx)
    sim = build_simulation(ctx, online)
    trainer = build_trainer(ctx, online)
    probe = build_probe(ctx, sim, trainer)
    sampler = build_client_sampler(ctx, probe)

    out_dir = fresh_run_dir(out_dir or default_out_dir(scenario))
    config = {"scenario": scenario.to_dict(), "seed": scenario.seed,
              "model_bytes": ctx.model_bytes, "versions": versions()}
    sessions = scenario.population.sessions
    recorder = RunRecorder(out_dir, config, scenario.run.target_accuracy, started_s,
                           eval_extra=("session",) if sessions is not None else (),
                           late=ctx.keep_late)
    loop = RoundLoop(scenario, sim, sampler, trainer, recorder, ctx.rngs, ctx.n_samples)
    try:
        loop.run(progress)
    finally:
        recorder.flush(force=True)
    recorder.clients(sim.battery.table())
    summary = recorder.finish(sim.now_s, sim.n_events, sim.events if scenario.run.events else None,
                              {**probe.counts, "warnings": probe.warnings + loop.warnings()})
    return RunResult(out_dir, summary, recorder.outcomes, trainer.params)
