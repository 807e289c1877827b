"""Executors train exactly the jobs they are given, each from its own model version."""

from __future__ import annotations

import contextlib
import functools
from typing import Callable, Sequence

import numpy as np
import torch

from simfl.core.config import Task
from simfl.core.records import ClientUpdate, TrainJob
from simfl.core.rng import RngTree
from simfl.train.augment import augment_rows, augment_stream
from simfl.train.data import FederatedData
from simfl.train.local import Penalty, sample_loss, sgd
from simfl.train.losses import training_loss
from simfl.train.minibatch import job_plans
from simfl.train.models import Net, Params
from simfl.core.records import SummedUpdates  # noqa: F401  (re-exported)


#: an aggregator's weight of one update in its weighted sum: (client, n_samples) -> weight
Weigh = Callable[[int, int], float]


class Executor:
    """What every executor holds: the model recipe, the training set on the device, and
    each client's sample indices (numpy); subclasses implement ``submit``."""

    def __init__(self, net: Net, data: FederatedData, task: Task, rngs: RngTree,
                 device: torch.device) -> None:
        self.net = net
        self.task = task
        self.rngs = rngs
        self.device = device
        self.x = torch.from_numpy(data.x_train).to(device)
        self.y = torch.from_numpy(data.y_train).to(device)
        self.client_indices = data.client_indices
        self.input_shape = data.input_shape
        self.loss = training_loss(task, sample_loss(task.dataset))
        #: each client's kept local-optimiser state (``task.optimizer.state = "per_client"``)
        self.kept: dict[int, dict] = {}

    def augmenter(self, job: TrainJob) -> Callable[[torch.Tensor], torch.Tensor] | None:
        """``task.augment`` of ``job``'s plan samples, from the job's own stream, or None."""
        if self.task.augment is None:
            return None
        return functools.partial(augment_rows, input_shape=self.input_shape,
                                 config=self.task.augment, rng=augment_stream(job, self.rngs))

    def kept_state(self, client: int) -> dict | None:
        """The slot of ``client``'s kept optimiser state (filled in place by training), or
        None when the optimiser's state is reset every round."""
        if self.task.optimizer.state != "per_client":
            return None
        return self.kept.setdefault(client, {})

    def _randomness(self, job: TrainJob):
        """The block in which ``job`` trains: torch's generators seeded from the job's own
        stream for a model that draws random numbers in training (a module's Dropout)."""
        seeded = getattr(self.net, "randomness", None)
        if seeded is None:
            return contextlib.nullcontext()
        return seeded(self.rngs.int_seed(f"train/client/{job.client}/round/{job.round}/torch"))

    def _submit_summed(self, jobs: Sequence[TrainJob], versions: dict[int, Params],
                       weigh: Weigh, train: Callable[..., list[ClientUpdate]]) -> SummedUpdates:
        """Train ``jobs`` with ``train(jobs, versions, (accumulator, weights))``, adding
        ``weigh(client, n_samples)`` times each delta into one accumulator. The jobs are
        summed in client order (then base round), so the sum does not depend on the order
        they arrived in."""
        order = sorted(range(len(jobs)), key=lambda i: (jobs[i].client, jobs[i].base_round))
        ordered = [jobs[i] for i in order]
        weights = np.array([float(weigh(job.client, len(self.client_indices[job.client])))
                            for job in ordered])
        acc = {name: torch.zeros_like(v) for name, v in versions[ordered[0].base_round].items()}
        done = train(ordered, versions, (acc, weights))
        updates: list = [None] * len(jobs)
        back = [0.0] * len(jobs)
        for pos, i in enumerate(order):
            updates[i], back[i] = done[pos], weights[pos]
        return SummedUpdates(updates, acc, back, n_summed=len(done))



class InlineExecutor(Executor):
    """Trains the jobs one after another on one device, each with the local rule its
    payload asks for (:mod:`simfl.train.local`)."""

    def submit(self, jobs: Sequence[TrainJob], versions: dict[int, Params],
               penalty: Penalty | None = None, weigh: Weigh | None = None,
               ) -> list[ClientUpdate]:
        """Train ``jobs``; ``penalty`` is an extra term of every job's local objective.

        With ``weigh`` (an aggregator's weight of an update, from its client and sample
        count) the deltas are summed as they are made and a :class:`SummedUpdates`
        comes back: the same records with empty deltas, and the weighted sum.
        """
        train = functools.partial(InlineExecutor._submit, self, penalty=penalty)
        if weigh is None:
            return train(jobs, versions, None)
        if not jobs:
            return SummedUpdates([], {}, [])
        return self._submit_summed(jobs, versions, weigh, train)

    def _submit(self, jobs: Sequence[TrainJob], versions: dict[int, Params],
                summed: tuple[Params, np.ndarray] | None,
                penalty: Penalty | None = None) -> list[ClientUpdate]:
        updates = []
        own = self.net if getattr(self.net, "local_buffers", False) else None  # FedBN
        for pos, job in enumerate(jobs):
            base = versions[job.base_round]
            idx = self.client_indices[job.client]
            samples, sizes, _ = job_plans([job], self.client_indices, self.task, self.rngs)
            plan = np.split(samples, np.cumsum(sizes)[:-1]) if len(sizes) else []
            start = base if own is None else own.client_start(job.client, base)
            with self._randomness(job):
                local, loss, extra = sgd(self.net, start, self.x, self.y, plan, self.task.lr,
                                         self.task.weight_decay, job.payload, self.loss, penalty,
                                         self.task.optimizer, self.kept_state(job.client),
                                         self.augmenter(job))
            if own is not None:
                own.keep(job.client, local)
            delta = list(local.values())
            torch._foreach_sub_(delta, [base[k] for k in local])
            if summed is None:
                update_delta = local  # sgd's own copy becomes the delta
            else:
                acc, weights = summed
                torch._foreach_add_([acc[k] for k in local], delta, alpha=float(weights[pos]))
                update_delta = {}
            updates.append(ClientUpdate(job.client, job.base_round, len(idx), update_delta,
                                        loss, extra))
        return updates
