"""Executors train exactly the jobs they are given, each from its own model version."""

from __future__ import annotations

from typing import Sequence

import torch

from simfl.core.config import Task
from simfl.core.records import ClientUpdate, TrainJob
from simfl.core.rng import RngTree
from simfl.train.data import FederatedData
from simfl.train.local import Penalty, job_plan, sample_loss, sgd
from simfl.train.models import Net, Params


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
        self.loss = sample_loss(task.dataset)


class InlineExecutor(Executor):
    """Trains the jobs one after another on one device, each with the local rule its
    payload asks for (:mod:`simfl.train.local`)."""

    def submit(self, jobs: Sequence[TrainJob], versions: dict[int, Params],
               penalty: Penalty | None = None) -> list[ClientUpdate]:
        """Train ``jobs``; ``penalty`` is an extra term of every job's local objective."""
        updates = []
        for job in jobs:
            base = versions[job.base_round]
            idx = self.client_indices[job.client]
            plan = [idx[batch] for batch in job_plan(job, len(idx), self.task, self.rngs)]
            local, loss, extra = sgd(self.net, base, self.x, self.y, plan, self.task.lr,
                                     self.task.weight_decay, job.payload, self.loss, penalty)
            torch._foreach_sub_(list(local.values()), [base[k] for k in local])
            delta = local  # sgd's own copy becomes the delta
            updates.append(ClientUpdate(job.client, job.base_round, len(idx), delta, loss, extra))
        return updates
