"""The global model and the step that moves it: train the updates, aggregate, optimise.

:class:`ModelStep` holds what a training run's model changes through: the global model,
the aggregator and its state, the server optimiser and its state, the models that late
devices still work from, and, in the asynchronous modes, the server rule
(:mod:`simfl.algorithms.async_rules`) and its state. A synchronous round goes through
:meth:`ModelStep.train`, an asynchronous server step through :meth:`ModelStep.apply`;
both train each update from the model it was sent, with the aggregator's payload and
the learning-rate schedule's scale of that model's round or version.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping, Sequence

from simfl.algorithms.async_rules import Buffer, FedBuffRule
from simfl.algorithms.report import N_AGGREGATED, STEPPED, WAITING_FOR
from simfl.algorithms.server_optimizers import server_step
from simfl.core.config import Server
from simfl.core.errors import SimflError
from simfl.core.records import RoundOutcome, TrainJob, with_lr_scale
from simfl.sim.rounds.server_steps import Update


class ModelStep:
    """The global model, its aggregator and server optimiser, and one step of them.

    ``executor`` trains jobs (:mod:`simfl.train.executor`), ``sessions`` answers for the
    warm start and the distillation teacher of ``population.sessions``
    (:mod:`simfl.experiment.session_model`), ``optimizer`` is the server optimiser or None,
    ``rule`` the asynchronous server rule or None in sync mode, ``buffers`` the names of
    the model's buffers (averaged, never stepped by the optimiser).
    """

    def __init__(self, server: Server, params: Any, aggregator: Any, executor: Any,
                 sessions: Any, n_samples: Any, optimizer: Any = None, rule: Any = None,
                 buffers: Sequence[str] = ()) -> None:
        self.server, self.aggregator, self.executor = server, aggregator, executor
        self.sessions, self.n_samples, self.buffers = sessions, n_samples, tuple(buffers)
        self.params = params
        self.agg_state = aggregator.init(params, n_samples)
        self.optimizer = optimizer
        self.opt_state = None if optimizer is None else optimizer.init(params)
        self.rule = rule
        self.rule_state = None if rule is None else rule.init(params)
        self.versions: dict[int, Any] = {}  # models that late devices still work from
        self.n_trained = 0
        self.stepped = False  # whether any round moved the global model
        self.waiting_for: float | None = None  # the aggregator's last WAITING_FOR, if any

    def take(self, params: Any, agg_state: Any) -> None:
        """Go on from ``params`` with ``agg_state`` (an edge server's model and state)."""
        self.params, self.agg_state = params, agg_state

    def begin_round(self, round: int, t_s: float) -> None:
        """A new session's warm start, when the round opening at ``t_s`` enters one."""
        if self.sessions.enter(round, t_s):
            self.params = self.sessions.start(self.params)
            self.agg_state = self.aggregator.init(self.params, self.n_samples)
            self.opt_state = None if self.optimizer is None else self.optimizer.init(self.params)

    def train(self, round: int, outcome: RoundOutcome,
              late_running: Mapping[int, int]) -> tuple[int, int]:
        """Train and aggregate a round's updates; (updates trained, updates aggregated).

        ``late_running`` maps each device still at work after the round to the round
        whose model it trains from; those models are kept.
        """
        n_trained = n_aggregated = 0
        versions = {round: self.params, **self.versions}
        arrivals = outcome.received + outcome.late_received
        if len(arrivals) >= self.server.min_updates:
            # a late upload trains as it would have on time: from its round's model,
            # with its round's minibatches and step size
            jobs = [TrainJob(a.client, a.base_round, a.base_round,
                             self.payload(a.client, a.base_round)) for a in arrivals]
            teacher = self.sessions.teacher()
            if teacher is None:
                updates = self._submit(jobs, versions, outcome)
            else:  # the continuous initialiser: distil towards the last session's model
                updates = self.sessions.distill(jobs, versions, teacher)
            # each side counts its own work: the updates the executor returned, the
            # updates the aggregator says it used; the run's invariant check compares them
            n_trained = len(updates)
            n_aggregated = self._aggregate(outcome, updates)
        needed = set(late_running.values())  # a model is kept while a late device needs it
        self.versions = {b: v for b, v in versions.items() if b in needed}
        self.n_trained += n_trained
        return n_trained, n_aggregated

    def _aggregate(self, outcome: RoundOutcome, updates: Any) -> int:
        """Aggregate ``updates``, then take the server optimiser's step when the model
        moved; returns the number of updates the aggregator used."""
        w_t = self.params
        self.params, self.agg_state, metrics = self.aggregator.aggregate(
            self.agg_state, self.params, outcome, updates)
        missing = [key for key in (N_AGGREGATED, STEPPED) if key not in metrics]
        if missing:
            raise SimflError(f"the {self.server.algorithm.kind} aggregator's metrics "
                             f"lack {' and '.join(missing)}: every aggregator reports how "
                             "many updates it used and whether the model moved")
        if self.optimizer is not None and metrics[STEPPED]:  # the server optimiser's step
            moved = self.params
            self.params, self.opt_state = server_step(
                self.optimizer, self.opt_state, w_t, self.params)
            # a module's buffers are averaged, never stepped (simfl.train.torch_net)
            self.params = {**self.params, **{k: moved[k] for k in self.buffers}}
        self.stepped = self.stepped or bool(metrics[STEPPED])
        self.waiting_for = metrics.get(WAITING_FOR)
        return int(metrics[N_AGGREGATED])

    def _submit(self, jobs: list[TrainJob], versions: dict, outcome: RoundOutcome) -> Any:
        """Train ``jobs``; an aggregator that needs only the weighted sum of the deltas
        (FedAvg, FedProx: ``needs = "sum"``) gets them summed by the executor."""
        if getattr(self.aggregator, "needs", None) != "sum":
            return self.executor.submit(jobs, versions)
        weigh = functools.partial(self.aggregator.sum_weight, outcome)
        return self.executor.submit(jobs, versions, weigh=weigh)

    def payload(self, client: int, r: int) -> Any:
        """The aggregator's payload for ``client`` with round (or version) r's step-size
        scale (``server.lr_schedule``; the local rule reads ``lr_scale``)."""
        payload = self.aggregator.client_payload(self.agg_state, client)
        scale = self.server.lr_schedule.scale(r)
        return payload if scale == 1.0 else with_lr_scale(payload, scale)

    def apply(self, version: int, updates: Sequence[Update], staleness: Sequence[float],
              versions: Mapping[int, Any]) -> tuple[int, int]:
        """Train an asynchronous server step's updates, each from its version in
        ``versions``, and apply them in arrival order through the server rule with
        their staleness factors s(tau); (updates trained, updates applied)."""
        jobs = [TrainJob(u.client, u.base_version, u.job, self.payload(u.client, u.base_version))
                for u in updates]
        done = self.executor.submit(jobs, versions)
        params, state, rule = self.params, self.rule_state, self.rule
        stepped, n_applied = False, 0
        for u, s, trained in zip(updates, staleness, done):
            n_applied += 1
            if isinstance(rule, FedBuffRule):
                params, state, stepped = rule.update(state, params, trained.delta, s)
            else:
                params, state, stepped = rule.update(state, params, versions[u.base_version],
                                                     trained.delta, s)
        if not stepped or (isinstance(state, Buffer) and state.count):
            raise RuntimeError(f"version {version}: the server rule did not step on "
                               f"its {len(done)} updates")
        self.params, self.rule_state = params, state
        self.stepped = True
        self.n_trained += len(done)
        return len(done), n_applied

    def warnings(self, n_arrived: int, n_rounds: int) -> list[str]:
        """The warning of a run whose updates arrived but never moved the model."""
        if self.stepped or n_arrived == 0:
            return []
        return [never_updated(self.server, self.n_trained, self.waiting_for, n_arrived,
                              n_rounds)]

    def snapshot(self) -> dict[str, Any]:
        """The model, the aggregator's and the optimiser's states, the late devices'
        models and the counts behind the warnings (for a checkpoint)."""
        return {"params": self.params, "agg_state": self.agg_state, "opt_state": self.opt_state,
                "versions": self.versions, "n_trained": self.n_trained,
                "stepped": self.stepped, "waiting_for": self.waiting_for,
                "local_optimizer": self.executor.kept}

    def restore(self, state: dict[str, Any]) -> None:
        self.params, self.agg_state = state["params"], state["agg_state"]
        self.opt_state, self.versions = state["opt_state"], state["versions"]
        self.n_trained, self.stepped = state["n_trained"], state["stepped"]
        self.waiting_for = state["waiting_for"]
        self.executor.kept = state.get("local_optimizer", {})


def never_updated(server: Any, n_trained: int, waiting_for: float | None, n_arrived: int,
                  n_rounds: int) -> str:
    """The warning of a run whose global model never moved although updates arrived.

    No round reached ``server.min_updates``, or the aggregator never stepped (e.g. MIFA
    with ``init = "wait_for_all"`` while some client never reports); every evaluation is
    then one of the initial model.
    """
    if n_trained == 0:
        why = (f"no round had the server.min_updates = {server.min_updates} arrivals it "
               "takes to train")
    else:
        why = f"the {server.algorithm.kind} aggregator applied none of them"
        if waiting_for:
            why += f" (it was still waiting for the updates of {int(waiting_for)} clients)"
    return (f"the global model was never updated: {n_arrived} updates arrived in "
            f"{n_rounds} rounds but {why}; every evaluation is of the initial model")
