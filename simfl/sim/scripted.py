"""The scripted kinds' behaviour (configs in :mod:`simfl.core.config.scripted`).

Importing this module names their implementations in the registry
(:func:`simfl.core.registry.implements`; ``simfl.sim`` imports it).
None of them draws a random number.
"""

from __future__ import annotations

import numpy as np
import simpy

from simfl.core.config.scripted import ScriptedAvailability, ScriptedErasureChannel, ScriptedMac
from simfl.core.errors import ConfigError
from simfl.core.registry import implements
from simfl.core.rng import RngTree
from simfl.sim.links import channel
from simfl.sim.mac import kinds as mac
from simfl.sim.mac.protocol import GAVE_UP, Transmission, Uplink


class ScriptedErasureLink(channel.Link):
    """Loses exactly the attempts :meth:`ScriptedErasureChannel.loses` names."""

    cfg: ScriptedErasureChannel

    def __init__(self, cfg: ScriptedErasureChannel, rngs: RngTree | None = None) -> None:
        super().__init__(cfg, rngs)
        self._attempts: dict[int, int] = {}

    def _lost(self, t_s: float, airtime_s: float, snr: float | None, client: int,
              rng: np.random.Generator | None) -> bool:
        attempt = self._attempts.get(client, 0)
        self._attempts[client] = attempt + 1
        return self.cfg.loses(client, attempt)


class ScriptedAccess(mac.IdealAccess):
    """Grants each client access at the round's opening time plus its scripted delay."""

    cfg: ScriptedMac

    def __init__(self, cfg: ScriptedMac, env: simpy.Environment, rngs: RngTree,
                 n_clients: int, on_transmit: mac.OnTransmit | None = None) -> None:
        super().__init__(cfg, env, rngs, n_clients, on_transmit)
        _known(cfg.refused, n_clients, "network.mac.refused")
        self._t_open_s = 0.0
        self._waiting: set[int] = set()

    def open_round(self, round: int, started: np.ndarray) -> None:
        self._t_open_s = self.env.now
        self._waiting.clear()

    def transmit(self, client: int, uplink: Uplink) -> Transmission:
        """Wait for the scripted grant (awake), then upload as the ideal MAC does."""
        access = self.request(client)
        if access is not None:
            uplink.wait()
            if not (yield access):
                return GAVE_UP
        return (yield from super().transmit(client, uplink))

    def request(self, client: int) -> simpy.Event | None:
        if client in self.cfg.refused:
            refused = self.env.event()
            refused.succeed(False)
            return refused
        wait_s = self._t_open_s + self.cfg.grant_delay_s(client) - self.env.now
        if wait_s <= 0:
            return None
        self._waiting.add(client)
        if np.isinf(wait_s):
            return self.env.event()  # never granted: the round's close interrupts it
        granted = self.env.timeout(wait_s, value=True)
        granted.callbacks.append(lambda _: self._waiting.discard(client))
        return granted

    def leave(self, client: int) -> bool:
        was_waiting = client in self._waiting
        self._waiting.discard(client)
        return was_waiting


class ScriptedOnline:
    """Online exactly as listed; nobody leaves during a round."""

    def __init__(self, cfg: ScriptedAvailability, n_clients: int, rngs: RngTree,
                 n_samples: np.ndarray | None = None,
                 label_counts: np.ndarray | None = None) -> None:
        for group in cfg.online:
            _known(group, n_clients, "availability.online")
        self.cfg, self.n_clients = cfg, n_clients

    def online(self, round: int, t_s: float) -> np.ndarray:
        listed = self.cfg.online_in(round)
        mask = np.ones(self.n_clients, dtype=bool)
        if listed is not None:
            mask[:] = False
            mask[list(listed)] = True
        return mask

    def offline_at(self, clients: np.ndarray) -> np.ndarray:
        return np.full(len(clients), np.inf)


def _known(ids: tuple[int, ...], n_clients: int, field: str) -> None:
    if any(c >= n_clients for c in ids):
        raise ConfigError(field, list(ids), f"client ids below task.n_clients = {n_clients}")


implements(ScriptedErasureChannel, ScriptedErasureLink)
implements(ScriptedMac, ScriptedAccess)
implements(ScriptedAvailability, ScriptedOnline)
