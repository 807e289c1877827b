"""The composition root: builds every component from a Scenario and runs it.

This is the only module that knows all layers. The loop follows "decide, then
compute": the simulation decides a round's outcome from timing models alone; only then
are exactly the received updates trained (each from the model version it was sent)
and aggregated. No simulated time depends on a training result.
"""

from __future__ import annotations

import importlib.metadata
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from simfl.algorithms import build_aggregator, build_sampler
from simfl.core.config import Scenario
from simfl.core.errors import ConfigError
from simfl.core.records import RoundOutcome, TrainJob
from simfl.core.rng import RngTree
from simfl.metrics.recorder import RunRecorder
from simfl.metrics.rundir import fresh_run_dir
from simfl.sim.availability import build_availability
from simfl.sim.channel import build_link
from simfl.sim.simulation import Simulation

#: called after every round with (round index, simulated time, latest accuracy or None)
ProgressFn = Callable[[int, float, "float | None"], None]


@dataclass(frozen=True)
class RunResult:
    out_dir: Path
    summary: dict[str, Any]
    outcomes: list[RoundOutcome]


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


class _Trainer:
    """The compute half of a run: data, model, executor, evaluation (torch lives here)."""

    def __init__(self, scenario: Scenario, data, rngs: RngTree) -> None:
        import torch

        from simfl.train.batched import BatchedExecutor
        from simfl.train.evaluate import Evaluator
        from simfl.train.executor import InlineExecutor
        from simfl.train.models import build_model

        device = _device(scenario.run.device, torch)
        task = scenario.task
        self.net = build_model(task.model, data.n_features, data.n_classes)
        generator = torch.Generator().manual_seed(rngs.int_seed("model/init"))
        self.params = {k: v.to(device) for k, v in self.net.init(generator).items()}
        executor = InlineExecutor if scenario.run.executor == "inline" else BatchedExecutor
        self.executor = executor(self.net, data, task, rngs, device)
        self.evaluate = Evaluator(self.net, data.x_test, data.y_test, device)


def _device(name: str, torch):
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("run.device", name, "cpu or auto: no CUDA device is visible")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


#: client-side training rules the executors implement
LOCAL_RULES = ("sgd",)


def run_scenario(scenario: Scenario, out_dir: Path | None = None,
                 progress: ProgressFn | None = None) -> RunResult:
    """Simulate ``scenario`` and write its run directory (a fresh one by default)."""
    from simfl.train.data import build_data

    started_s = time.perf_counter()
    rngs = RngTree(scenario.seed)
    task, net_cfg, server, run = scenario.task, scenario.network, scenario.server, scenario.run
    if not run.timing_only and server.algorithm.local_rule not in LOCAL_RULES:
        raise ConfigError("server.algorithm.kind", server.algorithm.kind,
                          f"an aggregator whose local rule exists ({', '.join(LOCAL_RULES)}): the "
                          f"{server.algorithm.local_rule!r} local rule is not implemented yet "
                          "(timing-only runs work)")
    data = build_data(task, rngs)
    n_samples = data.n_samples
    model_bytes = net_cfg.model_bytes or 4 * task.model.n_params(data.n_features, data.n_classes)
    compute = scenario.population.compute
    speeds = compute.median_samples_per_s * np.exp(
        compute.sigma * rngs.stream("population/compute").standard_normal(task.n_clients))
    sim = Simulation(
        rngs=rngs, n_samples=n_samples,
        work_samples=np.array([task.work_samples(int(n)) for n in n_samples], dtype=float),
        samples_per_s=speeds,
        online=build_availability(scenario.population.availability, task.n_clients, rngs),
        links={"downlink": build_link(net_cfg.downlink, rngs), "uplink": build_link(net_cfg.uplink, rngs)},
        model_bytes=model_bytes, arq_max_attempts=net_cfg.arq_max_attempts,
        clients_per_round=server.clients_per_round, overcommit=server.overcommit,
        deadline_s=server.deadline_s, keep_events=run.events)
    sampler, aggregator = build_sampler(server.sampler), build_aggregator(server.algorithm, task.lr)
    trainer = None if run.timing_only else _Trainer(scenario, data, rngs)

    out_dir = fresh_run_dir(out_dir or default_out_dir(scenario))
    config = {"scenario": scenario.to_dict(), "seed": scenario.seed, "model_bytes": model_bytes,
              "versions": versions()}
    recorder = RunRecorder(out_dir, config, run.target_accuracy, started_s)
    loop = _RoundLoop(scenario, sim, sampler, aggregator, trainer, recorder, rngs, n_samples)
    try:
        loop.run(progress)
    finally:
        recorder.flush(force=True)
    summary = recorder.finish(sim.now_s, sim.n_events, sim.events if run.events else None)
    return RunResult(out_dir, summary, recorder.outcomes)


class _RoundLoop:
    def __init__(self, scenario: Scenario, sim: Simulation, sampler, aggregator, trainer,
                 recorder: RunRecorder, rngs: RngTree, n_samples: np.ndarray) -> None:
        self.scenario, self.sim, self.trainer, self.recorder = scenario, sim, trainer, recorder
        self.sampler, self.aggregator, self.rngs = sampler, aggregator, rngs
        self.sampler_state = sampler.init(n_samples)
        self.params = trainer.params if trainer else None
        self.agg_state = aggregator.init(self.params, n_samples) if trainer else None
        self.accuracy: float | None = None
        self._scored: tuple[Any, tuple[float, float]] | None = None
        self._n_timed_evals = 1  # the evaluation at t = 0 is the first of the schedule

    def run(self, progress: ProgressFn | None) -> None:
        run = self.scenario.run
        self._evaluate(0.0, 0)
        r = 0
        while (run.rounds is None or r < run.rounds) and (
                run.horizon_s is None or self.sim.now_s < run.horizon_s):
            self._round(r)
            r += 1
            if progress:
                progress(r, self.sim.now_s, self.accuracy)
        if self.trainer and (not self.recorder.eval_rows
                             or self.recorder.eval_rows[-1][0] < self.sim.now_s):
            self._evaluate(self.sim.now_s, r)

    def _round(self, r: int) -> None:
        server = self.scenario.server
        rng = self.rngs.stream(f"sampler/round/{r}")
        outcome = self.sim.run_round(
            r, lambda view: self.sampler.select(self.sampler_state, view,
                                                server.clients_per_round, rng))
        self.sampler_state = self.sampler.observe(self.sampler_state, outcome)
        self._evaluate_scheduled(outcome.t_close_s, r, before_close=True)
        n_done = 0
        if self.trainer and len(outcome.received) >= server.min_updates:
            jobs = [TrainJob(a.client, a.base_round, r,
                             self.aggregator.client_payload(self.agg_state, a.client))
                    for a in outcome.received]
            updates = self.trainer.executor.submit(jobs, {r: self.params})
            self.params, self.agg_state, _ = self.aggregator.aggregate(
                self.agg_state, self.params, outcome, updates)
            n_done = len(updates)
        self.recorder.round(outcome, n_done, n_done)
        self._evaluate_scheduled(outcome.t_close_s, r + 1, before_close=False)

    def _evaluate_scheduled(self, t_close_s: float, completed: int, before_close: bool) -> None:
        run = self.scenario.run
        if not self.trainer:
            return
        if run.eval_every_s is not None:
            while True:
                t_s = self._n_timed_evals * run.eval_every_s
                if t_s > t_close_s or (before_close and t_s == t_close_s):
                    break
                self._evaluate(t_s, completed - 1 if before_close else completed)
                self._n_timed_evals += 1
        elif not before_close and completed % run.eval_every_rounds == 0:
            self._evaluate(t_close_s, completed)

    def _evaluate(self, t_s: float, completed: int) -> None:
        """Record the current model's test scores at simulated time ``t_s``."""
        if self.trainer is None:
            return
        if self._scored is None or self._scored[0] is not self.params:
            self._scored = (self.params, self.trainer.evaluate(self.params))
        accuracy, loss = self._scored[1]
        self.accuracy = accuracy
        self.recorder.evaluation(t_s, completed, accuracy, loss)
