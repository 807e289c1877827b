"""The Random Access Model's relay: which arrived uploads it passes on to the server."""

from __future__ import annotations

import math

import numpy as np
import simpy

from simfl.core.config.network import RelayMac
from simfl.core.rng import RngTree
from simfl.core.records import MissingReason
from simfl.core.registry import implements
from simfl.sim.links.channel import Bursts
from simfl.sim.mac.access import MacBase, per_client, radio_at_end
from simfl.sim.mac.protocol import LOST_ON_LINK, OnTransmit, Transmission, Uplink


class Relay(MacBase):
    """The Random Access Model's relay (see :class:`RelayMac`); its draws stay inside it.

    Uploads go to the relay over the device's own link at once (airtime is wall time);
    the relay drops those it does not forward on arrival (``collided``)."""

    cfg: RelayMac

    def __init__(self, cfg: RelayMac, env: simpy.Environment, rngs: RngTree,
                 n_clients: int, on_transmit: OnTransmit | None = None) -> None:
        super().__init__(cfg, env, rngs, n_clients, on_transmit)
        self._probs = per_client(cfg.probs, n_clients, "network.mac.probs")
        self._forwarded = np.zeros(n_clients, dtype=bool)

    def open_round(self, round: int, started: np.ndarray) -> None:
        self._forwarded[:] = False
        self._forwarded[relay_draw(self.cfg, self._probs, started,
                                   self.rngs.stream(f"mac/relay/round/{round}"))] = True

    def transmit(self, client: int, uplink: Uplink) -> Transmission:
        if not (yield from uplink.send(self.share)):
            return LOST_ON_LINK
        if not self.forwards(client):
            return MissingReason.COLLIDED, "relay"
        return None

    def leave(self, client: int) -> bool:
        return False  # never contending

    def share(self, client: int, t_s: float, airtime_s: float) -> tuple[float, Bursts]:
        """The attempt takes its airtime, the radio on for all of it."""
        return airtime_s, radio_at_end(airtime_s, airtime_s)

    def forwards(self, client: int) -> bool:
        """Whether the relay passes ``client``'s arrived upload on (drawn this round)."""
        return bool(self._forwarded[client])


def relay_draw(cfg: RelayMac, probs: np.ndarray, started: np.ndarray,
               rng: np.random.Generator) -> np.ndarray:
    """The clients of ``started`` that the relay forwards this round (sorted ids)."""
    started = np.asarray(started, dtype=np.int64)
    p = probs[started]
    chosen: np.ndarray
    if cfg.policy == "bernoulli":
        chosen = started[rng.random(len(probs))[started] < p]
    elif cfg.policy == "capacity":
        pool, weights = started[p > 0], p[p > 0]
        k = min(cfg.capacity, len(pool))
        chosen = pool if k == 0 else np.sort(
            rng.choice(pool, size=k, replace=False, p=weights / weights.sum()))
    else:
        chosen = started[aloha_heard(p, cfg.slots, rng)]
    return chosen


def aloha_heard(p: np.ndarray, slots: int, rng: np.random.Generator) -> np.ndarray:
    """Who is heard in ``slots`` slots of slotted ALOHA with access probabilities ``p``,
    each client contending until its first success (a mask over ``p``).

    Drawn success by success, not slot by slot, so a million slots cost what one does.
    With the set R still contending (none with p = 1), a slot has exactly one
    transmitter i with probability s_i = w_i prod_{j in R} (1 - p_j), w_i = p_i / (1 -
    p_i): the slots up to the next success are Geometric(sum_i s_i), and the client heard
    is i with probability proportional to w_i. The order in which clients are heard is
    therefore successive sampling with weights w, drawn at once by sorting E_i / w_i (E_i
    ~ Exp(1)). A client with p = 1 transmits in every slot: two of them collide forever;
    a single one is heard first (at Geometric(prod of the others' 1 - p_j)), then the
    rest contend. Clients with p = 0 never transmit.
    """
    heard = np.zeros(len(p), dtype=bool)
    left = float(slots)
    sure = np.flatnonzero(p >= 1.0)
    if len(sure) > 1:
        return heard
    unsure = np.flatnonzero((p > 0.0) & (p < 1.0))
    log_quiet = np.log1p(-p[unsure])  # log P(client does not transmit in a slot)
    if len(sure) == 1:
        success = math.exp(log_quiet.sum())
        if success <= 0.0:
            return heard
        left -= float(rng.geometric(success))
        if left < 0:
            return heard
        heard[sure[0]] = True
    if not len(unsure):
        return heard
    w = p[unsure] / (1.0 - p[unsure])
    order = np.argsort(rng.standard_exponential(len(unsure)) / w, kind="stable")
    # before the k-th success of the order: R = order[k:], success prob P(R) * W(R)
    tail_w = np.cumsum(w[order][::-1])[::-1]
    tail_log = np.cumsum(log_quiet[order][::-1])[::-1]
    success = np.minimum(np.exp(tail_log) * tail_w, 1.0)
    possible = success > 0.0
    if not possible.all():  # the first impossible success stops everything after it
        stop = int(np.argmin(possible))
        order, success = order[:stop], success[:stop]
    gaps = rng.geometric(success).astype(float)
    heard[unsure[order[np.cumsum(gaps) <= left]]] = True
    return heard


implements(RelayMac, Relay)  # the kind's access model (simfl.sim.mac.kinds builds it)
