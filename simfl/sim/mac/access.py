"""Medium access on the uplink: the protocol every MAC implements, and the ideal MAC.

A round asks its MAC one question per upload, :meth:`MediumAccess.transmit`: a SimPy
generator (``yield from`` it in a process) that waits for access, sends the update over
the device's own link (the :class:`Uplink` handed to it: ARQ, energy, records), and
returns None once the update reached the server, or the :data:`Refusal` (reason, detail)
that the device's missing record gets. How access is won, how the link is shared and
whether a relay passes the upload on are the MAC's own business. Besides that: ``leave``
takes a device that is interrupted out of contention, ``open_round`` and ``close_round``
bracket a round, ``attach``/``bind``/``bind_upload`` wire the MAC to the radio, the
round's deadline and event log, and the devices' energy meter and uplink.

What a kind supports is declared on its config class
(:class:`~simfl.core.config.mac.MacCapabilities`) and exposed as ``capabilities``;
config validation and the choice of a round's engine read it. :class:`MacBase` holds
what the built-in MACs share (their config, clock and streams, round hooks that keep no
state); it has no ``transmit`` or ``leave`` of its own. :class:`IdealAccess` is one MAC
among the others: no contention and no relay.
"""

from __future__ import annotations

import abc
import math
from typing import TYPE_CHECKING, Callable, Generator, Protocol

import numpy as np
import simpy

from simfl.core.config.mac import MacCapabilities
from simfl.core.config.network import Mac
from simfl.core.errors import ConfigError
from simfl.core.air_slot import AirSlot
from simfl.core.records import MacSlots, MissingReason
from simfl.core.rng import RngTree
from simfl.sim.links.channel import Bursts, Serve, Share
from simfl.sim.radio.capture import Air

if TYPE_CHECKING:
    from simfl.sim.energy.source import EnergyMeter
    from simfl.sim.links.channel import Link
    from simfl.sim.mac.aloha.cohort import CohortContention

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

#: why an upload did not reach the server: its missing record's reason and detail
Refusal = tuple[MissingReason, str]
#: the device's own link lost every attempt of the upload
LOST_ON_LINK: Refusal = (MissingReason.ERASED, "uplink")
#: the MAC gave up winning access (a retry limit)
GAVE_UP: Refusal = (MissingReason.COLLIDED, "mac retry limit")

#: what :meth:`MediumAccess.transmit` is: wait on events, return None or a refusal
Transmission = Generator[simpy.Event, object, Refusal | None]


def radio_at_end(wall_s: float, radio_s: float) -> Bursts:
    """The radio transmits for the last ``radio_s`` of an attempt of ``wall_s`` (after any
    wait for a channel), as offsets from the attempt's start."""
    return ((wall_s - radio_s, wall_s),)


class Uplink(Protocol):
    """A device's side of one upload, handed to its MAC's :meth:`MediumAccess.transmit`."""

    def send(self, share: Share | None = None, serve: Serve | None = None
             ) -> Generator[simpy.Event, object, bool]:
        """Send the update over the device's own link (ARQ, each attempt charged and
        recorded); True once an attempt got through. ``share`` is the MAC's sharing rule
        (an attempt's wall time and radio bursts), ``serve`` its shared band."""
        ...

    def wait(self) -> None:
        """The device waits for access, awake (idle power; the MAC charges its tries)."""
        ...


class MediumAccess(Protocol):
    """What a round asks of the uplink's medium access (see the module docstring)."""

    #: what the kind supports (read by the choice of a round's engine)
    capabilities: MacCapabilities
    #: the clock it runs on
    env: simpy.Environment

    def attach(self, air: Air) -> None:
        """Read the shared radio (positions, gains, SINR threshold)."""
        ...

    def bind(self, deadline_s: float, log: Log) -> None:
        """Tell the MAC the rounds' deadline and where event records go."""
        ...

    def bind_upload(self, energy: EnergyMeter, uplink: Link, update_bytes: int) -> None:
        """The devices' energy meter, their uplink and the size of an update."""
        ...

    def open_round(self, round: int, started: np.ndarray) -> None:
        """The round opens now; ``started`` (sorted ids) are the clients that take part."""
        ...

    def transmit(self, client: int, uplink: Uplink) -> Transmission:
        """``client``'s whole upload, from asking for access on: a SimPy generator that
        returns None once the update reached the server, else why not."""
        ...

    def leave(self, client: int) -> bool:
        """Take an interrupted ``client`` out; True if it was still contending for access
        (it is then missing ``collided`` rather than ``late`` at the close)."""
        ...

    def close_round(self) -> tuple[MacSlots, ...] | None:
        """The round has closed; its contention statistics (one record per number of
        contenders), or None when the MAC resolves no contention."""
        ...

    def air_slot(self) -> AirSlot | None:
        """The analog slot of the round that just closed (``aircomp``), else None."""
        ...


class SlotDriver(Protocol):
    """Runs a slotted MAC's events in place of the simulation clock."""

    now_s: float

    def wake(self, slot: int, t_s: float) -> None:
        """Call the MAC's ``end_of_slot(slot)`` at ``t_s`` (now if that is past)."""

    def decide(self, client: int, granted: bool) -> None:
        """``client``'s contention ended now: access ``granted``, or given up."""


class SlotContention(Protocol):
    """Contention on a slot grid whose events a :class:`SlotDriver` may run (the loop off
    the clock, :mod:`simfl.sim.rounds.fast`)."""

    driver: SlotDriver | None

    @property
    def slot_s(self) -> float:
        """The slots' length (s), on a grid from t = 0."""
        ...

    @property
    def wake_due(self) -> bool:
        """Whether the end of a slot is scheduled (by the clock or the driver)."""
        ...

    @property
    def by_cohort(self) -> bool:
        """Whether a round's contention may be resolved for the whole cohort at once."""
        ...

    def request(self, client: int) -> simpy.Event | None:
        """Start contending now (with a driver: the decision goes to it; None)."""
        ...

    def end_of_slot(self, slot: int) -> None:
        """Settle ``slot``, the earliest busy one."""
        ...

    def leave(self, client: int) -> bool:
        ...

    def settle_cohort(self, clients: np.ndarray, ready_s: np.ndarray, close_s: float
                      ) -> CohortContention:
        """Resolve at once the contention of ``clients`` ready at ``ready_s``."""
        ...


class OffClockAccess(MediumAccess, Protocol):
    """What the loop off the clock asks of a MAC that claims the ``off_clock`` engine."""

    @property
    def slots(self) -> SlotContention | None:
        """The contention the loop drives; None: access is immediate."""
        ...

    def share(self, client: int, t_s: float, airtime_s: float) -> tuple[float, Bursts]:
        """Wall seconds of an upload attempt of ``airtime_s`` from ``t_s``, and its bursts."""
        ...


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

    @abc.abstractmethod
    def transmit(self, client: int, uplink: Uplink) -> Transmission:
        """``client``'s whole upload (see :meth:`MediumAccess.transmit`)."""

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
