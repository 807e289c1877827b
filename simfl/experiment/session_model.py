"""``population.sessions`` on the model side of a run (docs/algorithms.md §3): the
session in force, its warm start, the distillation teacher of the continuous
initialiser, and the label set each evaluation is scored on."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from simfl.core.config import Continuous, Sessions, Similarity, Task
from simfl.core.rng import RngTree
from simfl.experiment.compute import ModelCompute
from simfl.sim.availability.session_membership import SessionOnline


class NoSessions:
    """A run without ``population.sessions``: one session, never restarted; the whole
    test split is scored."""

    extra: tuple = ()

    def __init__(self, compute: ModelCompute) -> None:
        self._score = compute.evaluate

    def enter(self, round: int, t_s: float) -> bool:
        return False

    def teacher(self):
        return None

    def score(self, params) -> tuple[float, float]:
        return self._score(params)

    def snapshot(self) -> dict:
        return {}

    def restore(self, state: dict) -> None:
        pass


class SessionRun:
    """The session in force, its warm start, the distillation teacher, and the label set
    evaluations are scored on.

    Its executors come from the run's compute half: the gradient rounds of the similarity
    initialiser (half the local lr, §3 step 2) use the executor kind the run chose
    (``run.executor``); distillation towards the last session's model adds a loss
    penalty, which only the inline executor takes.
    """

    def __init__(self, cfg: Sessions, online: SessionOnline, compute: ModelCompute, data,
                 task: Task, rngs: RngTree, n_samples: np.ndarray) -> None:
        from simfl.algorithms.session_init import SessionInitialiser
        from simfl.train.local import sample_loss
        from simfl.train.session_training import SessionEvaluator

        self.cfg, self.online, self.compute, self.n_samples = cfg, online, compute, n_samples
        self.session = 0
        self._entered = False
        self.labels = cfg.label_sets(data.n_classes) if cfg.split_labels else None
        self.initialiser = SessionInitialiser(cfg)
        self.state = self.initialiser.init(compute.params)
        if isinstance(cfg.init, Continuous):
            self._distill = compute.inline_executor_for(task, data, rngs)
        if isinstance(cfg.init, Similarity):  # gradient rounds use half the local lr (§3 step 2)
            self._half_lr = compute.executor_for(replace(task, lr=task.lr / 2), data, rngs)
        self._evaluate = SessionEvaluator(compute.net, data.x_test, data.y_test, compute.device,
                                          sample_loss(task.dataset))

    @property
    def extra(self) -> tuple[int]:
        """The ``session`` column of ``evals.csv``."""
        return (self.session,)

    def enter(self, round: int, t_s: float) -> bool:
        """Note the session of a round opening at ``t_s``; True when a new one starts."""
        session = self.cfg.session_at(round, t_s)
        if self._entered and session == self.session:
            return False
        self.session, self._entered = session, True
        return True

    def snapshot(self) -> dict:
        """The session in force and the initialiser's memory (for a checkpoint)."""
        return {"session": self.session, "entered": self._entered, "initialiser": self.state}

    def restore(self, state: dict) -> None:
        self.session, self._entered = state["session"], state["entered"]
        self.state = state["initialiser"]

    def start(self, params):
        """The model the session just entered starts from (``params``: the last model)."""
        params, self.state = self.initialiser.start(self.state, self.session, params,
                                                    self._gradient_rounds)
        return params

    def _gradient_rounds(self, start, session: int):
        from simfl.train.session_training import gradient_rounds

        assert isinstance(self.cfg.init, Similarity)  # the only initialiser that asks for them
        v = self.cfg.init.gradient_rounds
        clients = np.flatnonzero(self.online.members(session))
        return gradient_rounds(self._half_lr, start, clients, self.n_samples, v,
                               first_id=-1 - session * v)

    def teacher(self):
        return self.state.teacher

    def distill(self, jobs, versions, teacher):
        from simfl.train.distill import distillation

        penalty = distillation(self.compute.net, teacher, self.cfg.init.kl_coefficient)
        return self._distill.submit(jobs, versions, penalty)

    def score(self, params) -> tuple[float, float]:
        if self.labels is None:
            return self.compute.evaluate(params)
        return self._evaluate(params, self.labels[self.cfg.group_of(self.session)])
