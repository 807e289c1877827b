"""The ideal MAC, and what the built-in MACs share: the slot grid, per-client values,
their state and round hooks (:class:`MacBase`).

:class:`MacBase` holds a MAC's config, clock and streams and the round hooks of a MAC
that keeps no state across a round; it has no ``transmit`` or ``leave`` of its own (see
:mod:`simfl.sim.mac.protocol`). :class:`IdealAccess` is one MAC among the others: no
contention and no relay.
"""

from __future__ import annotations

import abc
import math
from typing import TYPE_CHECKING

import numpy as np
import simpy

from simfl.core.config.mac import MacCapabilities
from simfl.core.config.network import IdealMac, Mac
from simfl.core.errors import ConfigError
from simfl.core.air_slot import AirSlot
from simfl.core.records import MacSlots
from simfl.core.registry import implements
from simfl.core.rng import RngTree
from simfl.sim.links.channel import Bursts
from simfl.sim.mac.protocol import (LOST_ON_LINK, Log, OnTransmit, SlotContention, Transmission,
                                     Uplink)
from simfl.sim.radio.capture import Air

if TYPE_CHECKING:
    from simfl.sim.energy.source import EnergyMeter
    from simfl.sim.links.channel import Link

#: tolerance (in slots) when mapping a ready time onto a slot grid
GRID_EPS = 1e-9


# ---- the slot grid from t = 0, shared by every model of a slotted MAC (the tie rule)

def first_slot(t_s: float, slot_s: float) -> int:
    """The first slot that begins at or after ``t_s`` (a begin within ``GRID_EPS`` slots
    before ``t_s`` counts as at ``t_s``)."""
    return math.ceil(t_s / slot_s - GRID_EPS)


def first_slots(t_s: np.ndarray, slot_s: float) -> np.ndarray:
    """:func:`first_slot` of each of ``t_s``."""
    return np.ceil(t_s / slot_s - GRID_EPS).astype(np.int64)


def slot_end_s(slot: int, slot_s: float) -> float:
    """When ``slot`` ends: (slot + 1) slot_s, the one float every model uses (numpy
    arrays of slots give the same floats element by element)."""
    return (slot + 1) * slot_s


def last_slot_by(t_s: float, slot_s: float) -> int:
    """The last slot whose end (:func:`slot_end_s`) is at or before ``t_s``, compared
    exactly (-1: none). This is the tie rule: a slot that ends at the deadline counts,
    one that ends a float's width after it does not."""
    slot = math.floor(t_s / slot_s) - 1
    while slot_end_s(slot + 1, slot_s) <= t_s:
        slot += 1
    while slot >= 0 and slot_end_s(slot, slot_s) > t_s:
        slot -= 1
    return max(slot, -1)


def per_client(value: float | tuple[float, ...], n_clients: int, field: str) -> np.ndarray:
    """One value per client from a scalar or a list that must have ``n_clients`` entries."""
    if isinstance(value, tuple):
        if len(value) != n_clients:
            raise ConfigError(field, value, f"one number or a list of task.n_clients = {n_clients}")
        return np.asarray(value, dtype=float)
    return np.broadcast_to(float(value), (n_clients,))  # one value, read-only, no copies


def radio_at_end(wall_s: float, radio_s: float) -> Bursts:
    """The radio transmits for the last ``radio_s`` of an attempt of ``wall_s`` (after any
    wait for a channel), as offsets from the attempt's start."""
    return ((wall_s - radio_s, wall_s),)


class MacBase(abc.ABC):
    """What the built-in MACs keep alike: their config, clock, streams and wiring, and
    the round hooks of a MAC that keeps no state across a round. Not a MAC: each one
    says how an upload goes (``transmit``) and what leaving means (``leave``).

    ``capabilities`` are the config's (a MAC may narrow them for its settings);
    ``on_transmit`` is told about every contention transmission (MACs that contend).
    """

    #: the round's deadline (s after it opens) and the event log (:meth:`bind`)
    deadline_s: float = math.inf
    log: Log | None = None

    def __init__(self, cfg: Mac, env: simpy.Environment, rngs: RngTree, n_clients: int,
                 on_transmit: OnTransmit | None = None) -> None:
        self.cfg, self.env, self.rngs, self.n_clients = cfg, env, rngs, n_clients
        self.on_transmit = on_transmit
        self.capabilities: MacCapabilities = cfg.capabilities

    def bind(self, deadline_s: float, log: Log) -> None:
        """Tell the MAC the rounds' deadline and where event records go."""
        self.deadline_s, self.log = deadline_s, log

    def attach(self, air: Air) -> None:
        """Read the shared radio (positions, gains, SINR threshold); nothing here."""

    def bind_upload(self, energy: EnergyMeter, uplink: Link, update_bytes: int) -> None:
        """Bind what a MAC that carries the upload itself needs: the devices' energy
        meter, the uplink and the size of an update (nothing here)."""

    def open_round(self, round: int, started: np.ndarray) -> None:
        """The round opens now; ``started`` (sorted ids) are the clients that take part."""

    def close_round(self) -> tuple[MacSlots, ...] | None:
        """The round has closed; None: no contention to report."""
        return None

    def air_slot(self) -> AirSlot | None:
        """No analog slot."""
        return None

    def serve_download(self, client: int, n_bits: float, airtime_s: float
                       ) -> simpy.Event | None:
        """None: a unicast download has its own link (``ofdma`` shares the downlink's band
        and answers the event that fires once the band has served the attempt)."""
        return None

    @abc.abstractmethod
    def transmit(self, client: int, uplink: Uplink) -> Transmission:
        """``client``'s whole upload (see :meth:`~simfl.sim.mac.protocol.MediumAccess.transmit`)."""

    @abc.abstractmethod
    def leave(self, client: int) -> bool:
        """Take an interrupted ``client`` out; True if it was still contending."""


class IdealAccess(MacBase):
    """No contention and no relay: each upload goes over the device's own link at once,
    its airtime the wall time."""

    #: no contention for the loop off the clock to drive
    slots: SlotContention | None = None

    def transmit(self, client: int, uplink: Uplink) -> Transmission:
        if not (yield from uplink.send(self.share)):
            return LOST_ON_LINK
        return None

    def leave(self, client: int) -> bool:
        return False  # never contending

    def share(self, client: int, t_s: float, airtime_s: float) -> tuple[float, Bursts]:
        """The attempt takes its airtime, the radio on for all of it."""
        return airtime_s, radio_at_end(airtime_s, airtime_s)


implements(IdealMac, IdealAccess)  # the kind's access model (simfl.sim.mac.kinds builds it)
