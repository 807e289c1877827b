"""Session membership on top of any availability model.

A client can be selected in a round only if its availability model says it is online
*and* it belongs to the group of the session in force when the round opens
(:meth:`simfl.core.config.Sessions.session_at`). The wrapped model is asked first and
its draws are kept as they are, so adding sessions never shifts its random numbers.

Assumptions: arrival and departure take effect when a round opens; a client whose
group leaves during a round is not interrupted (its update still counts). Clients
outside the session are simply not online; they are never drawn or simulated.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simfl.core.config import Sessions
from simfl.sim.availability.models import AvailabilityModel


class SessionOnline:
    """``online(round, t_s)`` of ``inner``, restricted to the current session's group.

    Parameters
    ----------
    inner:
        Any availability model with ``online(round, t_s) -> bool mask``.
    cfg:
        The session schedule.
    n_clients:
        Registered clients (groups are blocks of consecutive ids).
    """

    def __init__(self, inner: AvailabilityModel, cfg: Sessions, n_clients: int) -> None:
        self.inner = inner
        self.cfg = cfg
        self.groups = cfg.client_groups(n_clients)

    def members(self, session: int) -> np.ndarray:
        """Bool mask of the clients admitted in ``session``."""
        mask: np.ndarray = self.groups == self.cfg.group_of(session)
        return mask

    def online(self, round: int, t_s: float) -> np.ndarray:
        mask: np.ndarray = self.inner.online(round, t_s) & self.members(
            self.cfg.session_at(round, t_s))
        return mask

    def offline_at(self, clients: np.ndarray) -> np.ndarray:
        """When each online client goes offline: the wrapped model's answer (a session's
        end does not interrupt a round)."""
        return self.inner.offline_at(clients)

    def __getattr__(self, name: str) -> Any:
        # anything else the simulation asks of an availability model is the wrapped one's
        return getattr(self.inner, name)
