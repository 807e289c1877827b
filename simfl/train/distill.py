"""Local distillation towards a teacher model (the ``continuous`` session initialiser).

ALGORITHMS.md §3, "Continuous" baseline of Chang et al. (arXiv 2410.05662): each
local step minimises the minibatch mean of

    loss(student(x), y) + kappa * KL( softmax(teacher(x)) || softmax(student(x)) )

where the teacher is the final global model of the previous session (fixed, no
gradient) and kappa is ``kl_coefficient``. Temperature 1, KL averaged over the batch.
The step itself (weight decay and whatever the job's payload asks for: prox, SCAFFOLD
correction, ...) is :class:`simfl.train.local.StepRule`, the same as plain training,
so distillation combines with any aggregator. Trains one job after another (inline).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from simfl.core.records import ClientUpdate, TrainJob
from simfl.train.executor import Executor
from simfl.train.local import LossFn, StepRule, job_plan
from simfl.train.models import DenseNet, Params


def distill_sgd(net: DenseNet, start: Params, teacher: Params, kappa: float, x: torch.Tensor,
                y: torch.Tensor, plan: list[np.ndarray], lr: float, weight_decay: float,
                payload, loss: LossFn) -> tuple[Params, float, dict]:
    """Minibatch SGD from ``start`` on loss + kappa * KL(teacher || student), one client."""
    params = {k: v.detach().clone().requires_grad_(True) for k, v in start.items()}
    rule = StepRule([payload], {k: v.detach().unsqueeze(0) for k, v in start.items()},
                    lr, weight_decay)
    total = 0.0
    for batch in plan:
        xb = x[torch.from_numpy(batch)]
        out = net.forward(params, xb)
        with torch.no_grad():
            target = F.softmax(net.forward(teacher, xb), dim=-1)
        kl = F.kl_div(F.log_softmax(out, dim=-1), target, reduction="batchmean")
        value = loss(out, y[torch.from_numpy(batch)]).mean() + kappa * kl
        grads = torch.autograd.grad(value, list(params.values()))
        rule.step([(k, p.unsqueeze(0), g.unsqueeze(0))
                   for (k, p), g in zip(params.items(), grads)], value.detach().view(1))
        total += value.item()
    local = {k: v.detach() for k, v in params.items()}
    extra = rule.extras({k: v.unsqueeze(0) for k, v in local.items()}, [len(plan)])[0]
    return local, total / max(len(plan), 1), extra


class DistillExecutor(Executor):
    """Trains jobs with distillation towards ``teacher`` (same minibatch plans as the others)."""

    def submit(self, jobs: Sequence[TrainJob], versions: dict[int, Params], teacher: Params,
               kappa: float) -> list[ClientUpdate]:
        updates = []
        for job in jobs:
            base = versions[job.base_round]
            idx = torch.from_numpy(self.client_indices[job.client]).to(self.device)
            plan = job_plan(job, len(idx), self.task, self.rngs)
            local, loss, extra = distill_sgd(self.net, base, teacher, kappa, self.x[idx],
                                             self.y[idx], plan, self.task.lr,
                                             self.task.weight_decay, job.payload, self.loss)
            delta = {k: local[k] - base[k] for k in base}
            updates.append(ClientUpdate(job.client, job.base_round, len(idx), delta, loss, extra))
        return updates
