"""The composition root: builds every component from a Scenario and runs it.

This is the only module that knows all layers. The loop follows "decide, then
compute": the simulation decides a round's outcome from timing models alone; only then
are exactly the received updates trained (each from the model version it was sent)
and aggregated, with the late uploads that landed in the round when the aggregator asks
for them (FedAR ``late_policy = "store"``; a model version is kept while a late device
still works from it). No simulated time depends on a training result.
"""

from __future__ import annotations

import gc
import contextlib
import functools
import importlib.metadata
import platform
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from simfl.algorithms import build_aggregator, build_sampler
from simfl.algorithms.report import N_AGGREGATED, STEPPED, WAITING_FOR
from simfl.core.config import Continuous, IdealChannel, Scenario, Similarity
from simfl.core.errors import ConfigError, SimflError
from simfl.core.records import RoundOutcome, TrainJob, with_lr_scale
from simfl.core.registry import registry
from simfl.core.rng import RngTree
from simfl.metrics.recorder import RunRecorder
from simfl.metrics.rundir import fresh_run_dir
from simfl.preflight import preflight
from simfl.sim.availability import build_availability
from simfl.sim.battery import Batteries
from simfl.sim.channel import build_link
from simfl.sim.sessions import SessionOnline
from simfl.sim.simulation import Simulation

#: called after every round with (round index, simulated time, latest accuracy or None)
ProgressFn = Callable[[int, float, "float | None"], None]


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


class _Trainer:
    """The compute half of a run: data, model, executor, evaluation (torch lives here)."""

    def __init__(self, scenario: Scenario, data, rngs: RngTree) -> None:
        import torch

        from simfl.train.batched import executor_class
        from simfl.train.evaluate import Evaluator
        from simfl.train.local import sample_loss
        from simfl.train.models import build_model

        device = _device(scenario.run.device, torch)
        task = scenario.task
        self.net = build_model(task.model, data.input_shape or data.n_features, data.n_classes)
        generator = torch.Generator().manual_seed(rngs.int_seed("model/init"))
        self.params = {k: v.to(device) for k, v in self.net.init(generator).items()}
        executor = executor_class(scenario.run.executor, self.net, device)
        self.executor = executor(self.net, data, task, rngs, device)
        self.evaluate = Evaluator(self.net, data.x_test, data.y_test, device,
                                  sample_loss(task.dataset))


def _model_bytes(task) -> int:
    """The float32 size of the model the task builds (from its parameter shapes; no torch)."""
    from simfl.train.models import model_bytes

    return model_bytes(task.model, task.dataset.input_shape(), task.dataset.shape()[1])


def _device(name: str, torch):
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("run.device", name, "cpu or auto: no CUDA device is visible")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


#: client-side training rules (the built-ins and any registered plug-in)
LOCAL_RULES = registry("local_rules")


def run_scenario(scenario: Scenario, out_dir: Path | None = None,
                 progress: ProgressFn | None = None) -> RunResult:
    """Simulate ``scenario`` and write its run directory (a fresh one by default)."""
    preflight(scenario)  # every check that needs no training, before anything is allocated
    from simfl.train.data import build_data, client_sizes

    started_s = time.perf_counter()
    rngs = RngTree(scenario.seed)
    task, net_cfg, server, run = scenario.task, scenario.network, scenario.server, scenario.run
    if not run.timing_only and server.algorithm.local_rule not in LOCAL_RULES:
        raise ConfigError("server.algorithm.kind", server.algorithm.kind,
                          "an aggregator whose local rule exists "
                          f"({', '.join(LOCAL_RULES.names())}): the "
                          f"{server.algorithm.local_rule!r} local rule is not implemented yet "
                          "(timing-only runs work)")
    # timing-only runs need only each client's size (the partition's size model)
    sessions = scenario.population.sessions  # label groups need the samples, even timing-only
    split = sessions if sessions is not None and sessions.split_labels else None
    availability = scenario.population.availability  # label-based models need the labels
    data = (None if run.timing_only and split is None and not availability.needs_labels
            else build_data(task, rngs, split))
    n_samples = client_sizes(task, rngs) if data is None else data.n_samples
    model_bytes = net_cfg.model_bytes or _model_bytes(task)
    compute = scenario.population.compute
    speeds = compute.median_samples_per_s * np.exp(
        compute.sigma * rngs.stream("population/compute").standard_normal(task.n_clients))
    label_counts = None
    if availability.needs_labels:
        from simfl.train.probe import label_histograms

        label_counts = label_histograms(data)
    online = build_availability(availability, task.n_clients, rngs, n_samples, label_counts)
    if sessions is not None:
        online = SessionOnline(online, sessions, task.n_clients)
    sim = Simulation(
        rngs=rngs, n_samples=n_samples,
        work_samples=np.asarray(task.work_samples(n_samples), dtype=float),
        samples_per_s=speeds,
        online=online,
        links={"downlink": build_link(net_cfg.downlink, rngs), "uplink": build_link(net_cfg.uplink, rngs)},
        model_bytes=model_bytes, arq_max_attempts=net_cfg.arq_max_attempts,
        clients_per_round=server.clients_per_round, overcommit=server.overcommit,
        deadline_s=server.deadline_s, keep_events=run.events,
        battery=Batteries(task.n_clients, scenario.population.battery,
                          scenario.population.energy, rngs, _nominal_rate_bps(net_cfg.uplink)), mac=net_cfg.mac,
        keep_late=server.algorithm.wants_late)
    trainer = None if run.timing_only else _Trainer(scenario, data, rngs)
    probe = _Probe(sim, data, trainer, rngs)
    sampler = build_sampler(server.sampler, probe, rngs, server.clients_per_round)
    aggregator = None if trainer is None else build_aggregator(
        server.algorithm, task.lr, server.clients_per_round, server.lr_schedule)

    out_dir = fresh_run_dir(out_dir or default_out_dir(scenario))
    config = {"scenario": scenario.to_dict(), "seed": scenario.seed, "model_bytes": model_bytes,
              "versions": versions()}
    recorder = RunRecorder(out_dir, config, run.target_accuracy, started_s,
                           eval_extra=("session",) if sessions is not None else (),
                           late=server.algorithm.wants_late)
    session_run = None if sessions is None else _SessionRun(scenario, online, trainer, data,
                                                            rngs, n_samples)
    loop = _RoundLoop(scenario, sim, sampler, aggregator, trainer, recorder, rngs, n_samples,
                      session_run, probe)
    try:
        loop.run(progress)
    finally:
        recorder.flush(force=True)
    recorder.clients(sim.battery.table())
    summary = recorder.finish(sim.now_s, sim.n_events, sim.events if run.events else None,
                              {**probe.counts, "warnings": probe.warnings + loop.warnings()})
    return RunResult(out_dir, summary, recorder.outcomes, loop.params)


#: bytes of a client's answer to a loss query (one float64)
LOSS_REPLY_BYTES = 8


class _Probe:
    """The :class:`~simfl.core.protocols.ClientProbe` capability of a run: the simulation
    times each exchange (:meth:`Simulation.run_query`), the trainer computes the answers
    (:mod:`simfl.train.probe`).

    Counted apart from training, in ``summary.json``: ``queried_losses`` (loss answers
    received), ``graph_updates`` (answers to the graph-building exchange: local updates) and
    ``query_time_s`` (simulated time spent waiting for answers). ``params`` is the global
    model the answers are about; the round loop keeps it current. A loss query costs a
    model download, one pass over the local data at training speed (forward passes are
    cheaper: an upper bound) and an 8-byte upload. Timing-only runs have no model (losses
    and learned features are 0, so samplers fall back to their tie rules) and, unless
    sessions need it, no data (label histograms are 0 too).
    """

    def __init__(self, sim: Simulation, data, trainer, rngs: RngTree) -> None:
        self.sim, self.data, self.trainer, self.rngs = sim, data, trainer, rngs
        self.params = trainer.params if trainer else None
        self.counts = {"queried_losses": 0, "graph_updates": 0, "query_time_s": 0.0}
        self.warnings: list[str] = []  # for summary.json: what a sampler had to do without
        self._stats = None

    def _exchange(self, round: int, clients: np.ndarray, work: np.ndarray, reply_bytes: int,
                  stream: str) -> np.ndarray:
        t_start = self.sim.now_s
        answered = self.sim.run_query(round, clients, work, reply_bytes, stream)
        self.counts["query_time_s"] += self.sim.now_s - t_start
        return answered

    def _client_stats(self):
        if self._stats is None:
            from simfl.train.local import sample_loss
            from simfl.train.probe import ClientStats

            t = self.trainer
            self._stats = ClientStats(t.net, t.executor, sample_loss(t.executor.task.dataset),
                                      self.data.x_test, self.rngs)
        return self._stats

    def losses(self, round: int, clients: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        answered = self._exchange(round, np.asarray(clients, dtype=np.int64),
                                  self.sim.n_samples.astype(float), LOSS_REPLY_BYTES, "loss_query")
        self.counts["queried_losses"] += len(answered)
        if self.trainer is None:
            return answered, np.zeros(len(answered))
        return answered, self._client_stats().losses(self.params, answered)

    def features(self, kind: str, noise_batch: int) -> np.ndarray:
        n = len(self.sim.n_samples)
        if kind == "oracle":
            if self.data is None:
                return np.zeros((n, 1))
            from simfl.train.probe import label_histograms

            return label_histograms(self.data)
        answered = self._exchange(0, np.arange(n), self.sim.work_samples, self.sim.model_bytes,
                                  "graph")
        self.counts["graph_updates"] += len(answered)
        if len(answered) == 0:  # every row NaN: no edges, every pair of clients at distance 1
            self.warnings.append(
                f"no client answered the graph-building exchange within server.deadline_s = "
                f"{self.sim.deadline_s:g} s: the client graph has no edges, so the sampler "
                "chooses by its participation counts alone")
        rows = (np.zeros((len(answered), 1)) if self.trainer is None or len(answered) == 0 else
                self._client_stats().features(kind, self.params, answered, noise_batch))
        out = np.full((n, rows.shape[1]), np.nan)
        out[answered] = rows
        return out


def _nominal_rate_bps(channel) -> float:
    """The bit rate of ``channel``'s rate model at its configured SNR, without fading."""
    return 8.0 / build_link(IdealChannel(rate=channel.rate)).transmit(0.0, 1, None).airtime_s


#: wall-time interval at which the round loop moves surviving objects out of the cyclic GC
FREEZE_EVERY_S = 1.0
#: allocations between young-generation collections while the round loop runs
LOOP_GC_THRESHOLD = 50_000


@contextlib.contextmanager
def _gc_for_many_objects():
    """Python's cyclic GC tuned for a run: rarer young collections, old survivors frozen.

    Returns a function that collects cyclic garbage and exempts every survivor from later
    collections (frozen objects are still freed by reference counting). Without it a
    round of 10^4 invitees, which allocates several short-lived objects per invitee,
    triggers hundreds of young collections (measured: about 15% of a timing-only round),
    and full collections rescan every finished round's records again and again, so a
    round's cost grows with the rounds before it (0.8 s at round 1 to 1.3 s at round 25
    with 10^4 clients per round; flat with this). Results do not depend on it; the
    settings are restored when the loop ends.
    """
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], LOOP_GC_THRESHOLD), *thresholds[1:])

    def freeze_survivors() -> None:
        gc.collect()
        gc.freeze()

    try:
        yield freeze_survivors
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


class _RoundLoop:
    def __init__(self, scenario: Scenario, sim: Simulation, sampler, aggregator, trainer,
                 recorder: RunRecorder, rngs: RngTree, n_samples: np.ndarray,
                 sessions: "_SessionRun | None" = None, probe: "_Probe | None" = None) -> None:
        self.scenario, self.sim, self.trainer, self.recorder = scenario, sim, trainer, recorder
        self.sessions, self.n_samples, self.probe = sessions, n_samples, probe
        self.sampler, self.aggregator, self.rngs = sampler, aggregator, rngs
        self.sampler_state = sampler.init(n_samples)
        self.params = trainer.params if trainer else None
        self.agg_state = aggregator.init(self.params, n_samples) if trainer else None
        self.versions: dict[int, Any] = {}  # models that late devices still work from
        self.accuracy: float | None = None
        self._scored: tuple[Any, tuple, tuple[float, float]] | None = None
        self._n_timed_evals = 1  # the evaluation at t = 0 is the first of the schedule
        self.n_rounds = self.n_arrived = self.n_trained = 0  # rounds, updates in, trained
        self.stepped = False  # whether any round moved the global model
        self.waiting_for: float | None = None  # the aggregator's last WAITING_FOR, if any

    def run(self, progress: ProgressFn | None) -> None:
        run = self.scenario.run
        self._evaluate(0.0, 0)
        r = 0
        frozen_s = time.perf_counter()
        with _gc_for_many_objects() as freeze_survivors:
            while (run.rounds is None or r < run.rounds) and (
                    run.horizon_s is None or self.sim.now_s < run.horizon_s):
                self._round(r)
                r += 1
                if progress:
                    progress(r, self.sim.now_s, self.accuracy)
                if time.perf_counter() - frozen_s > FREEZE_EVERY_S:
                    freeze_survivors()
                    frozen_s = time.perf_counter()
        if self.trainer and (not self.recorder.eval_rows
                             or self.recorder.eval_rows[-1][0] < self.sim.now_s):
            self._evaluate(self.sim.now_s, r)

    def _round(self, r: int) -> None:
        server = self.scenario.server
        rng = self.rngs.stream(f"sampler/round/{r}")
        if self.sessions and self.sessions.enter(r, self.sim.now_s) and self.trainer:
            self.params = self.sessions.start(self.params)  # a new session's warm start
            self.agg_state = self.aggregator.init(self.params, self.n_samples)
        if self.probe:
            self.probe.params = self.params  # queries ask about the current global model
        # over-selection: ceil(overcommit * k) invitations, the round closes at the k-th
        # arrival (Simulation.n_invites; the invitees still at work then are ``late``)
        outcome = self.sim.run_round(
            r, lambda view: self.sampler.select(self.sampler_state, view,
                                                self.sim.n_invites, rng))
        self.sampler_state = self.sampler.observe(self.sampler_state, outcome)
        self._evaluate_scheduled(outcome.t_close_s, r, before_close=True)  # r rounds done
        n_trained = n_aggregated = 0
        versions = {r: self.params, **self.versions}
        if self.trainer and len(outcome.received) + len(outcome.late_received) >= server.min_updates:
            # a late upload trains as it would have on time: from its round's model,
            # with its round's minibatches and step size
            jobs = [TrainJob(a.client, a.base_round, a.base_round,
                             self._payload(a.client, a.base_round))
                    for a in outcome.received + outcome.late_received]
            teacher = self.sessions.teacher() if self.sessions else None
            if teacher is None:
                sums = getattr(self.aggregator, "needs", None) == "sum"  # FedAvg, FedProx
                weigh = functools.partial(self.aggregator.sum_weight, outcome) if sums else None
                updates = self.trainer.executor.submit(  # weigh: the deltas come summed
                    jobs, versions, **({"weigh": weigh} if weigh else {}))
            else:  # the continuous initialiser: distil towards the last session's model
                updates = self.sessions.distill(jobs, versions, teacher)
            # each side counts its own work: the updates the executor returned, the
            # updates the aggregator says it used; the run's invariant check compares them
            n_trained = len(updates)
            self.params, self.agg_state, metrics = self.aggregator.aggregate(
                self.agg_state, self.params, outcome, updates)
            missing = [key for key in (N_AGGREGATED, STEPPED) if key not in metrics]
            if missing:
                raise SimflError(f"the {self.scenario.server.algorithm.kind} aggregator's metrics "
                                 f"lack {' and '.join(missing)}: every aggregator reports how "
                                 "many updates it used and whether the model moved")
            n_aggregated = int(metrics[N_AGGREGATED])
            self.stepped = self.stepped or bool(metrics[STEPPED])
            self.waiting_for = metrics.get(WAITING_FOR)
        if self.trainer:  # keep a model only while a late device still works from it
            needed = set(self.sim.late_running.values())
            self.versions = {b: v for b, v in versions.items() if b in needed}
        self.n_rounds += 1
        self.n_arrived += len(outcome.received) + len(outcome.late_received)
        self.n_trained += n_trained
        self.recorder.round(outcome, n_trained, n_aggregated,
                            len(outcome.late_received) if n_trained else 0)
        self._evaluate_scheduled(outcome.t_close_s, r + 1, before_close=False)

    def warnings(self) -> list[str]:
        """What a user must know to read the run's result (``summary.json`` ``warnings``).

        One case so far: updates arrived but the global model never moved (no round
        reached ``server.min_updates``, or the aggregator never stepped, e.g. MIFA with
        ``init = "wait_for_all"`` while some client never reports); every evaluation is
        then one of the initial model.
        """
        if self.trainer is None or self.stepped or self.n_arrived == 0:
            return []
        server = self.scenario.server
        if self.n_trained == 0:
            why = (f"no round had the server.min_updates = {server.min_updates} arrivals it "
                   "takes to train")
        else:
            why = f"the {server.algorithm.kind} aggregator applied none of them"
            if self.waiting_for:
                why += (f" (it was still waiting for the updates of {int(self.waiting_for)} "
                        "clients)")
        return [f"the global model was never updated: {self.n_arrived} updates arrived in "
                f"{self.n_rounds} rounds but {why}; every evaluation is of the initial model"]

    def _payload(self, client: int, r: int) -> Any:
        """The aggregator's payload for ``client`` with round r's step-size scale
        (``server.lr_schedule``; the local rule reads ``lr_scale``)."""
        payload = self.aggregator.client_payload(self.agg_state, client)
        scale = self.scenario.server.lr_schedule.scale(r)
        return payload if scale == 1.0 else with_lr_scale(payload, scale)

    def _evaluate_scheduled(self, t_close_s: float, completed: int, before_close: bool) -> None:
        """The evaluations due by ``t_close_s``; ``completed`` rounds are done at each.

        With ``run.eval_every_s`` the times k * eval_every_s before the round's close
        (``before_close``: the model is still the one the round started from, and the
        rounds completed are those before it) or at its close (after aggregation). The
        ``round`` column of ``evals.csv`` is always the number of rounds completed at
        the evaluation's time: never negative, never decreasing.
        """
        run = self.scenario.run
        if not self.trainer:
            return
        if run.eval_every_s is not None:
            while True:
                t_s = self._n_timed_evals * run.eval_every_s
                if t_s > t_close_s or (before_close and t_s == t_close_s):
                    break
                self._evaluate(t_s, completed)
                self._n_timed_evals += 1
        elif not before_close and completed % run.eval_every_rounds == 0:
            self._evaluate(t_close_s, completed)

    def _evaluate(self, t_s: float, completed: int) -> None:
        """Record the current model's test scores at simulated time ``t_s``."""
        if self.trainer is None:
            return
        extra = (self.sessions.session,) if self.sessions else ()
        if self._scored is None or self._scored[0] is not self.params or self._scored[1] != extra:
            score = self.sessions.score if self.sessions else self.trainer.evaluate
            self._scored = (self.params, extra, score(self.params))
        accuracy, loss = self._scored[2]
        self.accuracy = accuracy
        self.recorder.evaluation(t_s, completed, accuracy, loss, *extra)


class _SessionRun:
    """``population.sessions`` wired up (docs/algorithms.md §3): the session in force, its warm
    start, the distillation teacher, and the label set evaluations are scored on."""

    def __init__(self, scenario: Scenario, online: SessionOnline, trainer, data, rngs: RngTree,
                 n_samples: np.ndarray) -> None:
        cfg = scenario.population.sessions
        self.cfg, self.online, self.trainer, self.n_samples = cfg, online, trainer, n_samples
        self.session = 0
        self._entered = False
        self.labels = cfg.label_sets(data.n_classes) if data is not None and cfg.split_labels else None
        if trainer is None:
            return
        from simfl.algorithms.sessions import SessionInitialiser

        self.initialiser = SessionInitialiser(cfg)
        self.state = self.initialiser.init(trainer.params)
        from simfl.train.batched import BatchedExecutor
        from simfl.train.executor import InlineExecutor
        from simfl.train.sessions import SessionEvaluator

        task, device = scenario.task, trainer.executor.device
        if isinstance(cfg.init, Continuous):
            self._distill = InlineExecutor(trainer.net, data, task, rngs, device)
        if isinstance(cfg.init, Similarity):  # gradient rounds use half the local lr (§3 step 2)
            self._half_lr = BatchedExecutor(trainer.net, data, replace(task, lr=task.lr / 2),
                                            rngs, device)
        self._evaluate = SessionEvaluator(trainer.net, data.x_test, data.y_test, device,
                                          trainer.evaluate.loss)

    def enter(self, round: int, t_s: float) -> bool:
        """Note the session of a round opening at ``t_s``; True when a new one starts."""
        session = self.cfg.session_at(round, t_s)
        if self._entered and session == self.session:
            return False
        self.session, self._entered = session, True
        return True

    def start(self, params):
        """The model the session just entered starts from (``params``: the last model)."""
        params, self.state = self.initialiser.start(self.state, self.session, params,
                                                    self._gradient_rounds)
        return params

    def _gradient_rounds(self, start, session: int):
        from simfl.train.sessions import gradient_rounds

        v = self.cfg.init.gradient_rounds
        clients = np.flatnonzero(self.online.members(session))
        return gradient_rounds(self._half_lr, start, clients, self.n_samples, v,
                               first_id=-1 - session * v)

    def teacher(self):
        return self.state.teacher

    def distill(self, jobs, versions, teacher):
        from simfl.train.distill import distillation

        penalty = distillation(self.trainer.net, teacher, self.cfg.init.kl_coefficient)
        return self._distill.submit(jobs, versions, penalty)

    def score(self, params) -> tuple[float, float]:
        if self.labels is None:
            return self.trainer.evaluate(params)
        return self._evaluate(params, self.labels[self.cfg.group_of(self.session)])

