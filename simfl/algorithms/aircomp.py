"""Over-the-air aggregation: the noisy superposition of the participants' updates.

Zhu, Wang, Huang, "Broadband Analog Aggregation for Low-Latency Federated Edge
Learning", IEEE TWC 2020 (truncated channel inversion), and Yang, Jiang, Shi, Ding,
"Federated Learning via Over-the-Air Computation", IEEE TWC 2020, eq. (8) (the MSE
sigma^2 / eta). The timing path decides the round's analog slot
(:mod:`simfl.sim.mac.aircomp`): who transmitted and the common scale eta. With every
participant k inverting its channel to sqrt(eta), the server receives
y = sqrt(eta) * sum_k delta_k + n, n ~ N(0, sigma^2) per entry, and estimates the sum as
y / sqrt(eta) = sum_k delta_k + z, z ~ N(0, sigma^2 / eta) (``AirSlot.mse``). The step is
w_{t+1} = w_t + eta_g * (sum_k delta_k + z) / n over the n received updates: FedAvg with
uniform weights plus the receiver's noise. z is drawn here, from a torch generator seeded
with ``AirSlot.noise_seed`` (the named stream ``aircomp/noise/<round>``), entry by entry
in the order of the model's parameters. An outcome without a slot record (a scripted
round) adds no noise; an empty round leaves the model unchanged.

Like FedAvg the step reads only the sum of the deltas (``needs = "sum"``, every weight 1).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import torch

from simfl.algorithms.report import report
from simfl.algorithms.update_table import Params, Step
from simfl.core.config.aircomp import AirComp as AirCompConfig
from simfl.core.records import ClientUpdate, LocalPayload, RoundOutcome, SummedUpdates


class AirComp:
    #: the step needs only the plain sum of the deltas (every :meth:`sum_weight` is 1)
    needs = "sum"

    def __init__(self, cfg: AirCompConfig, local_lr: float) -> None:
        self.cfg = cfg

    def sum_weight(self, outcome: RoundOutcome, client: int, n_samples: int) -> float:
        """Every participant's update counts once in the superposition."""
        return 1.0

    def init(self, params: Params, n_samples: np.ndarray) -> None:
        return None

    def client_payload(self, state: None, client: int) -> LocalPayload | None:
        return None

    def aggregate(self, state: None, params: Params, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]) -> Step[None]:
        if not updates:
            return params, state, report(0, False)
        names = list(params)
        summed: Sequence[torch.Tensor]
        if isinstance(updates, SummedUpdates):  # summed by the executor, every weight 1
            if any(w != 1.0 for w in updates.weights):
                raise ValueError("the updates were summed with weights other than 1")
            n, summed = updates.n_summed, [updates.weighted_sum[name] for name in names]
        else:
            ordered = sorted(updates, key=lambda u: u.client)  # independent of arrival order
            n, summed = len(ordered), [ordered[0].delta[name] for name in names]
            for u in ordered[1:]:
                summed = torch._foreach_add(list(summed), [u.delta[name] for name in names])
        air = outcome.air
        mse = air.mse if air is not None else 0.0
        if air is not None and mse > 0 and math.isfinite(mse):  # the receiver's noise
            gen = torch.Generator().manual_seed(air.noise_seed)
            noise = [torch.randn(t.shape, generator=gen, dtype=t.dtype).to(t.device)
                     for t in summed]
            summed = torch._foreach_add(list(summed), noise, alpha=math.sqrt(mse))
        new = torch._foreach_add([params[name] for name in names], list(summed),
                                 alpha=self.cfg.server_lr / float(n))
        return dict(zip(names, new)), state, report(n, True, aircomp_mse=mse)
