"""The simulated deployment: one SimPy clock for availability, compute, links and deadlines.

Rounds are synchronous. When a round opens the server looks at who it believes is
online, asks the sampler for clients, and each invited client does its round's work
(download, compute, upload: :mod:`simfl.sim.rounds.device`). Over-selection (``overcommit`` >
1) sends ``n_invites = ceil(overcommit * clients_per_round)`` invitations and closes the
round at the ``clients_per_round``-th arrival (FedScale-style). How the server waits
and the late devices kept at work (``keep_late``) are :mod:`simfl.sim.rounds.clocked`'s;
the common round runs in one loop instead (:mod:`simfl.sim.rounds.fast`), with the same
numbers (:mod:`simfl.sim.rounds.loops` picks the loop). Tie rule: an upload that
completes exactly at the deadline is on time (the deadline is a
:class:`~simfl.sim.clock.LateEvents` event: everything scheduled for its instant runs
first). Collaborators (the clock, the links, the MAC, the energy source) are built
outside and handed in; for convenience a MAC config and a missing energy source are
built here (the ideal MAC, infinite energy with the default powers).
"""

from __future__ import annotations

import math
from typing import Callable, Generator, Protocol

import numpy as np
import simpy

from simfl.core.config.energy import Energy
from simfl.core.config.mac import kinds_that
from simfl.core.config.network import IdealMac, Mac
from simfl.core.protocols import PopulationView
from simfl.core.records import (Arrival, Event, EventKind, Missing, MissingReason,
                                RoundOutcome)
from simfl.core.rng import RngTree
from simfl.sim.mac.protocol import MediumAccess
from simfl.sim.links.channel import Link, Links
from simfl.sim.clock import LateEvents
from simfl.sim.rounds.device import ComputeTimes, Devices
from simfl.sim.energy.source import EnergyMeter
from simfl.sim.energy.infinite import InfiniteEnergy
from simfl.sim.event_log import EventLog, slots_text
from simfl.sim.mac.kinds import build_mac
from simfl.sim.rounds.query import run_query
from simfl.sim.radio.mobility import STILL, Mover
from simfl.sim.radio.radio_map import RadioMap
from simfl.sim.rounds.loops import RoundLoops
from simfl.sim.rounds.resources import RoundResources
from simfl.sim.radio.broadcast import Broadcast

SelectFn = Callable[[PopulationView], np.ndarray]


class Online(Protocol):
    """Who is online when (:mod:`simfl.sim.availability.models`)."""

    def online(self, round: int, t_s: float) -> np.ndarray:
        """A mask of the clients online at ``t_s`` (round ``round`` opens then)."""

    def offline_at(self, clients: np.ndarray) -> np.ndarray:
        """When each of the online ``clients`` next goes offline (inf: not in a round)."""


class Simulation:
    """Timing model of a deployment; decides rounds, never trains.

    Parameters
    ----------
    n_samples:
        Training-set size of every client (for the arrivals' records).
    work_samples:
        Samples each client processes in one round of local training.
    samples_per_s:
        Each client's training speed.
    online:
        Availability model with ``online(round, t_s) -> bool mask``.
    links:
        The downlink and the uplink (:class:`~simfl.sim.links.channel.Links`, or a dict with
        keys ``"downlink"`` and ``"uplink"``).
    battery:
        The energy source (:func:`simfl.sim.energy.battery.build_energy_source`); None:
        infinite energy at the default powers.
    mac:
        The uplink MAC, built on ``env`` (:func:`simfl.sim.mac.kinds.build_mac`, told to charge
        contention transmissions to ``battery``), or its config (built here).
    env:
        The clock (a new one if None; required with a built MAC).
    radio_map, mobility, broadcast:
        Positions and mean path gains (clients.csv); how they move (when a round opens);
        the broadcast downlink (:class:`~simfl.sim.radio.broadcast.Broadcast`; None: unicast).
        ``upload_bits``: one upload's payload bits (None: ``model_bytes``), sent in whole bytes.
    """

    def __init__(self, *, rngs: RngTree, n_samples: np.ndarray, work_samples: np.ndarray,
                 samples_per_s: np.ndarray, online: Online, links: Links | dict[str, Link],
                 model_bytes: int, arq_max_attempts: int, clients_per_round: int,
                 overcommit: float, deadline_s: float, keep_events: bool = True,
                 battery: EnergyMeter | None = None, mac: Mac | MediumAccess = IdealMac(),
                 keep_late: bool = False, env: simpy.Environment | None = None,
                 radio_map: RadioMap | None = None, mobility: Mover = STILL,
                 broadcast: Broadcast | None = None, upload_bits: int | None = None) -> None:
        if keep_late and not mac.capabilities.late_updates:
            raise ValueError(f"keep_late needs the {kinds_that('late_updates')} MAC (one that "
                             "takes late uploads: contention is resolved per round)")
        self.env = env = env if env is not None else simpy.Environment()
        self.keep_late, self.radio_map, self.mobility = keep_late, radio_map, mobility
        self.rngs, self.n_samples, self.work_samples = rngs, n_samples, work_samples
        self.model_bytes, self.online = model_bytes, online
        self.n_invites = math.ceil(overcommit * clients_per_round)
        self.clients_per_round = clients_per_round
        self.deadline_s = deadline_s
        self.late = LateEvents(env)
        self.event_log = EventLog(keep_events)
        self.energy = battery if battery is not None else InfiniteEnergy(len(n_samples), Energy())
        self.energy.bind(env, self.late.timeout, self.event_log.record)
        if isinstance(mac, Mac):
            mac = build_mac(mac, env, rngs, len(n_samples), self.energy.charge_transmissions)
        elif mac.env is not env:
            raise ValueError("a built MAC must run on the simulation's clock (pass env)")
        self.links = links if isinstance(links, Links) else Links(**links)
        self.devices = Devices(
            env, rngs, links=self.links, mac=mac, energy=self.energy, model_bytes=model_bytes,
            upload_bits=upload_bits,
            arq_max_attempts=arq_max_attempts,
            compute_s=ComputeTimes(np.asarray(work_samples, dtype=float), samples_per_s),
            samples_per_s=samples_per_s, n_samples=n_samples, log=self.event_log.log)
        self.loops = RoundLoops(self.devices, self.late, deadline_s=deadline_s,
                                clients_per_round=clients_per_round,
                                n_invites=self.n_invites, keep_late=keep_late,
                                broadcast=broadcast)
        self._everyone: np.ndarray | None = None  # every id, while everyone is available
        self.resources: RoundResources | None = None  # server.policy's decisions, if any

    @property
    def mac(self) -> MediumAccess:
        """The uplink MAC the devices use."""
        return self.devices.mac

    @mac.setter
    def mac(self, mac: MediumAccess) -> None:
        """Replace the MAC (before the first round; it must run on :attr:`env`)."""
        mac.bind_upload(self.energy, self.links.uplink, self.devices.upload_bytes)
        self.devices.mac = mac

    @property
    def late_running(self) -> dict[int, int]:
        """Late clients still at work (``keep_late``) -> the round each was invited in."""
        return self.loops.late_running

    @property
    def battery(self) -> EnergyMeter:
        """The energy source (same as :attr:`energy`)."""
        return self.energy

    @property
    def now_s(self) -> float:
        return float(self.env.now)

    @property
    def events(self) -> list[Event]:
        """The kept event records (empty unless events are kept)."""
        return self.event_log.events

    @property
    def n_events(self) -> int:
        return self.event_log.n_events

    @property
    def retries(self) -> int:
        """Retransmissions so far (rounds and query exchanges)."""
        return self.devices.retries

    def compute_s(self, client: int) -> float:
        return float(self.devices.compute_s[client])

    def log(self, t_s: float, kind: str, round: int, client: int = -1, detail: str = "") -> None:
        """Count an event; keep its record only if events are kept (records cost time)."""
        self.event_log.log(t_s, kind, round, client, detail)

    def run_round(self, round: int, select: SelectFn) -> RoundOutcome:
        """Simulate one round from now until it closes; return its outcome.

        The round opens now; ``select`` runs before the round's process starts, so a
        sampler may first run query exchanges (:meth:`run_query`) that advance the
        clock. Invitations go out, and the deadline starts, when it returns. Ids that
        ``select`` returns more than once (sampling with replacement) are invited once,
        their count kept in ``RoundOutcome.multiplicity``. A round in which no device
        works (nobody invited, or every invitee offline or flat) lasts until its
        deadline: the server waits, and the clock moves on even when nobody is available.
        """
        t_open = self.env.now
        self.mobility.advance(t_open)  # positions, association and mean SNR follow the clock
        mask = self.online.online(round, t_open) & self.energy.alive(round, t_open)
        if self.late_running:  # still working on an earlier round: cannot be invited
            mask[list(self.late_running)] = False
        view = PopulationView(round, t_open, len(mask), self._available(mask), self.n_samples)
        chosen = np.asarray(select(view), dtype=np.int64)
        if self.resources is not None:
            chosen = self.resources.decide(round, t_open, self.deadline_s, chosen)
        process = self.env.process(self._round(round, t_open, mask, len(view.available), chosen))
        self.env.run(until=process)
        outcome = process.value
        assert isinstance(outcome, RoundOutcome)
        if self.resources is not None:  # the policy's powers and clocks end with the round
            self.resources.close(outcome)
        return outcome

    def _available(self, mask: np.ndarray) -> np.ndarray:
        """The ids of ``mask``'s True entries (one read-only array while everyone is)."""
        if not mask.all():
            return np.flatnonzero(mask)
        if self._everyone is None or len(self._everyone) != len(mask):
            self._everyone = np.arange(len(mask))
            self._everyone.flags.writeable = False
        return self._everyone

    def run_query(self, round: int, clients: np.ndarray, work_samples: np.ndarray,
                  reply_bytes: int, stream: str) -> np.ndarray:
        """Ask ``clients`` something and wait for their answers; return who answered
        (sorted). See :func:`simfl.sim.rounds.query.run_query`."""
        return run_query(self.devices, self.late, round, clients, work_samples, reply_bytes,
                         stream, self.deadline_s)

    def _round(self, round: int, t_open: float, mask: np.ndarray, n_available: int,
               chosen: np.ndarray) -> Generator[simpy.Event, object, RoundOutcome]:
        env = self.env
        t_invite = env.now
        t_deadline = t_invite + self.deadline_s
        selected, draws = np.unique(chosen, return_counts=True)
        self.log(t_invite, EventKind.ROUND_OPEN, round, detail=f"{len(selected)} invited")
        retries_before = self.retries
        started = selected[mask[selected]]
        self.mac.open_round(round, started)
        if self.resources is not None:
            self.resources.open(self.mac)
        missing: list[Missing] = []
        for client in selected.tolist():
            self.log(t_invite, EventKind.INVITED, round, client)
            if not mask[client]:
                reason = (MissingReason.BATTERY if self.energy.is_dead(client)
                          else MissingReason.OFFLINE)
                missing.append(Missing(client, reason, t_invite))
                self.log(t_invite, reason, round, client)
        leave_s = self.online.offline_at(started)
        outcomes = yield from self.loops.run(round, started, leave_s, t_deadline)

        mac_slots = self.mac.close_round()
        if mac_slots:  # also as text, "n:slots:successes" for each number n of contenders
            self.log(env.now, EventKind.MAC_SLOTS, round, detail=slots_text(mac_slots))
        received = sorted((o for o in outcomes if isinstance(o, Arrival)),
                          key=lambda a: (a.t_s, a.client))
        missing.extend(o for o in outcomes if isinstance(o, Missing))
        late_received = self.loops.take_late_landed()
        missing.sort(key=lambda m: m.client)
        self.log(env.now, EventKind.ROUND_CLOSE, round, detail=f"{len(received)} received")
        return RoundOutcome(
            round=round, t_open_s=t_open, t_deadline_s=t_deadline, t_close_s=env.now,
            n_available=n_available, selected=tuple(selected.tolist()),
            received=tuple(received), missing=tuple(missing),
            retries=self.retries - retries_before, energy_j=self.energy.take_round_energy_j(),
            multiplicity=tuple(draws.tolist()) if (draws > 1).any() else (),
            late_received=late_received, mac_slots=mac_slots, air=self.mac.air_slot())
