"""Medium access on the uplink: what a device asks its MAC, and the ideal answer.

A device asks its MAC three things about an upload (see :mod:`simfl.sim.rounds.device`):
``request(client)`` (an event that succeeds with True once access is granted, False
after the retry limit, or None when access is immediate), ``wall_time_s`` (how long an
attempt of a given airtime occupies the device under the MAC's sharing rule) and
``forwards(client)`` (whether the relay passes the arrived upload on). ``leave`` takes a
device that is interrupted out of contention. ``open_round`` and ``close_round`` bracket
a round. Every kind states its model in its config's docstring
(:mod:`simfl.core.config.network`); :class:`IdealAccess` is the base of every kind.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

import numpy as np
import simpy

from simfl.core.config.network import Mac
from simfl.core.errors import ConfigError
from simfl.core.air_slot import AirSlot
from simfl.core.records import MacSlots, MissingReason
from simfl.core.rng import RngTree
from simfl.sim.links.channel import Bursts
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


#: ``on_transmit(clients, airtime_s)``: contention transmissions of ``airtime_s`` by
#: ``clients`` (sorted ids) just ended (an energy meter charges them)
OnTransmit = Callable[[list[int], float], None]

#: ``log(t_s, kind, round, client, detail)``: keep an event record
Log = Callable[[float, str, int, int, str], None]


class IdealAccess:
    """No contention and no relay: access is immediate and airtime is wall time.

    ``on_transmit`` is told about every contention transmission (MACs that contend).
    """

    #: the round's deadline (s after it opens) and the event log (:meth:`bind`)
    deadline_s: float = math.inf
    log: Log | None = None

    def __init__(self, cfg: Mac, env: simpy.Environment, rngs: RngTree, n_clients: int,
                 on_transmit: OnTransmit | None = None) -> None:
        self.cfg, self.env, self.rngs, self.n_clients = cfg, env, rngs, n_clients
        self.on_transmit = on_transmit

    def bind(self, deadline_s: float, log: Log) -> None:
        """Tell the MAC the rounds' deadline and where event records go."""
        self.deadline_s, self.log = deadline_s, log

    def attach(self, air: Air) -> None:
        """Read the shared radio (positions, gains, SINR threshold); nothing here."""

    #: whether an access granted by :meth:`request` is the upload itself (the MAC sent
    #: the update's frames: the device has nothing more to send)
    carries_upload = False

    def bind_upload(self, energy: EnergyMeter, uplink: Link, update_bytes: int) -> None:
        """Bind what a MAC that carries the upload needs: the devices' energy meter, the
        uplink and the size of an update (the other kinds need none of them)."""

    def open_round(self, round: int, started: np.ndarray) -> None:
        """The round opens now; ``started`` (sorted ids) are the clients that take part."""

    def close_round(self) -> tuple[MacSlots, ...] | None:
        """The round has closed; returns its contention statistics (one record per number
        of contenders), or None when the MAC does not resolve contention."""
        return None

    def request(self, client: int) -> simpy.Event | None:
        return None

    def refusal(self, client: int) -> tuple[MissingReason, str]:
        """Why a request of ``client`` failed (its record's reason and detail)."""
        return MissingReason.COLLIDED, "mac retry limit"

    def air_slot(self) -> AirSlot | None:
        """The analog slot of the round that just closed (``aircomp``), else None."""
        return None

    def leave(self, client: int) -> bool:
        """Take an interrupted ``client`` out of contention; True if it was contending."""
        return False

    def wall_time_s(self, client: int, t_s: float, airtime_s: float) -> float:
        return airtime_s

    def radio_s(self, client: int, airtime_s: float, wall_s: float) -> float:
        """Seconds of an attempt's ``wall_s`` in which the device's radio transmits; it
        waits (at idle power) for the rest. Without sharing: the whole airtime."""
        return airtime_s

    def bursts(self, client: int, t_s: float, airtime_s: float, wall_s: float) -> Bursts:
        """When the radio transmits during an attempt of ``airtime_s`` that starts at
        ``t_s`` and lasts ``wall_s`` (offsets from ``t_s``; :meth:`radio_s` seconds in
        all): here at the end, after any wait (for a data channel)."""
        return ((wall_s - self.radio_s(client, airtime_s, wall_s), wall_s),)

    def serve(self, client: int, n_bits: float, airtime_s: float) -> simpy.Event | None:
        """An event that fires when an upload attempt of ``n_bits`` (``airtime_s`` on its
        own link) has been served, for a MAC whose attempts end when the shared medium
        says so; None (every MAC here but ``ofdma``): the attempt lasts :meth:`share`."""
        return None

    def serve_download(self, client: int, n_bits: float, airtime_s: float
                       ) -> simpy.Event | None:
        """Like :meth:`serve`, for a unicast download attempt when the MAC shares the
        downlink's band (``ofdma``); None here: the download has its own link."""
        return None

    def forwards(self, client: int) -> bool:
        return True

    def share(self, client: int, t_s: float, airtime_s: float) -> tuple[float, Bursts]:
        """Wall seconds of an upload attempt of ``airtime_s`` starting at ``t_s``, and when
        its radio is on (:meth:`wall_time_s`, :meth:`bursts`): the sharing rule for
        :func:`simfl.sim.links.channel.arq_transfer`."""
        wall_s = self.wall_time_s(client, t_s, airtime_s)
        return wall_s, self.bursts(client, t_s, airtime_s, wall_s)
