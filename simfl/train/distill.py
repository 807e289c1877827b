"""Local distillation towards a teacher model (the ``continuous`` session initialiser).

docs/algorithms.md §3, "Continuous" baseline of Chang et al. (arXiv 2410.05662): each
local step minimises the minibatch mean of

    loss(student(x), y) + kappa * KL( softmax(teacher(x)) || softmax(student(x)) )

where the teacher is the final global model of the previous session (fixed, no
gradient) and kappa is ``kl_coefficient``. Temperature 1, KL averaged over the batch.
The KL term is a penalty of plain local training (:func:`simfl.train.local.sgd`), so the
step itself (weight decay and whatever the job's payload asks for: prox, SCAFFOLD
correction, ...) is the same as without distillation and it combines with any
aggregator. Jobs are trained one after another (the inline executor).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from simfl.train.local import Penalty
from simfl.train.models import DenseNet, Params


def distillation(net: DenseNet, teacher: Params, kappa: float) -> Penalty:
    """The penalty kappa * KL(softmax(teacher(x)) || softmax(student(x))) of a minibatch."""

    def penalty(out: torch.Tensor, xb: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            target = F.softmax(net.forward(teacher, xb), dim=-1)
        return kappa * F.kl_div(F.log_softmax(out, dim=-1), target, reduction="batchmean")

    return penalty
