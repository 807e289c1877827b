"""The server's per-client table of latest normalised updates, and the steps built on it.

MIFA, FedAR, FedVARP and FedLaAvg all keep, for every client i, the last normalised
update it sent, U_i = (w_base - y_i) / local_lr = -delta_i / local_lr (docs/algorithms.md
§0.1). With a learning-rate schedule, local_lr is the step size the update was trained
with: ``task.lr`` times the ``extra["lr_scale"]`` the local rule reports (MIFA's
G_i = (w_t - y_i) / eta_t, "the lr of that round", §1.2). The table is one tensor per
parameter, of shape ``(N, *param.shape)``, in the parameter's dtype and on its device,
so it is plain data a checkpoint can hold.

Every function here returns new tensors and dicts; none writes into its arguments.
Updates are put in client order first, so results do not depend on the order in which
they arrived.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence, TypeVar

import numpy as np
import torch

from simfl.core.config.server import Aggregator as AggregatorConfig
from simfl.core.config.server import ConstantLr, LrSchedule
from simfl.core.records import ClientUpdate, LocalPayload

Params = Mapping[str, torch.Tensor]
#: a table, or any dict of tensors by parameter name, as built here
Tensors = dict[str, torch.Tensor]
State = TypeVar("State")
#: what ``aggregate`` returns: the new parameters, the new state, the round's metrics
Step = tuple[Params, State, dict[str, float]]


class TableRule:
    """What the table-keeping aggregators share: their config, the local step size that
    normalises updates (``task.lr``) and the server's learning-rate schedule. They send
    clients nothing beyond the model unless they override :meth:`client_payload`."""

    def __init__(self, cfg: AggregatorConfig, local_lr: float,
                 lr_schedule: LrSchedule = ConstantLr()) -> None:
        self.cfg = cfg
        self.local_lr = local_lr
        self.lr_schedule = lr_schedule

    def client_payload(self, state: Any, client: int) -> LocalPayload | None:
        return None


def ordered(updates: Iterable[ClientUpdate], n_clients: int | None = None) -> list[ClientUpdate]:
    """The updates sorted by client id; a client twice in one round, or unknown, is an error."""
    out = sorted(updates, key=lambda u: u.client)
    clients = [u.client for u in out]
    if len(set(clients)) != len(clients):
        raise ValueError(f"a client sent two updates in one round: {clients}")
    if n_clients is not None and any(not 0 <= c < n_clients for c in clients):
        raise ValueError(f"client id out of range 0..{n_clients - 1}: {clients}")
    return out


def cast(value: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """``value`` in the dtype and on the device of ``like``."""
    return value.to(dtype=like.dtype, device=like.device)


def normalised(update: ClientUpdate, name: str, like: torch.Tensor,
               local_lr: float) -> torch.Tensor:
    """U_i = -delta_i / (local_lr * s) for parameter ``name``, s the update's lr scale."""
    scale: float = update.extra.get("lr_scale", 1.0)
    return -cast(update.delta[name], like) / (local_lr * scale)


def zeros(params: Params, n_clients: int) -> dict[str, torch.Tensor]:
    """An all-zero table: one row per client for every parameter."""
    return {k: torch.zeros((n_clients, *v.shape), dtype=v.dtype, device=v.device)
            for k, v in params.items()}


def store(table: Params, updates: Sequence[ClientUpdate],
          local_lr: float) -> dict[str, torch.Tensor]:
    """A new table whose rows of the updates' clients hold their normalised updates."""
    if not updates:
        return dict(table)
    out: Tensors = {}
    for name, rows in table.items():
        idx = torch.tensor([u.client for u in updates], dtype=torch.long, device=rows.device)
        fresh = torch.stack([normalised(u, name, rows, local_lr) for u in updates])
        out[name] = rows.index_put((idx,), fresh)
    return out


def mean_rows(table: Params) -> dict[str, torch.Tensor]:
    """(1/N) sum_i table_i for every parameter."""
    return {k: rows.mean(dim=0) for k, rows in table.items()}


def weighted_rows(table: Params, weights: np.ndarray) -> dict[str, torch.Tensor]:
    """sum_i weights_i table_i for every parameter."""
    out: Tensors = {}
    for name, rows in table.items():
        w = torch.as_tensor(weights, dtype=rows.dtype, device=rows.device)
        out[name] = torch.tensordot(w, rows, dims=1)
    return out


def descend(params: Params, direction: Params, eta: float) -> dict[str, torch.Tensor]:
    """w - eta * direction, parameter by parameter."""
    return {k: v - eta * cast(direction[k], v) for k, v in params.items()}
