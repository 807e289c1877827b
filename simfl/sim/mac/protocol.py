"""What a round asks of the uplink's medium access: the protocol every MAC implements.

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
config validation and the choice of a round's engine (:mod:`simfl.sim.rounds.engines`)
read it. A MAC that claims the loop off the clock also answers :class:`OffClockAccess`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Generator, Protocol

import numpy as np
import simpy

from simfl.core.air_slot import AirSlot
from simfl.core.config.mac import MacCapabilities
from simfl.core.records import MacSlots, MissingReason
from simfl.sim.links.channel import Bursts, Serve, Share
from simfl.sim.radio.capture import Air

if TYPE_CHECKING:
    from simfl.sim.energy.source import EnergyMeter
    from simfl.sim.links.channel import Link
    from simfl.sim.mac.aloha.cohort import CohortContention

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

    def serve_download(self, client: int, n_bits: float, airtime_s: float
                       ) -> simpy.Event | None:
        """The event that fires once a MAC that shares the downlink's band has served a
        unicast download attempt of ``n_bits``; None: the download has its own link."""
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
