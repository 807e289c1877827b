"""The simulated deployment: one SimPy clock for availability, compute, links and deadlines.

Rounds are synchronous. When a round opens the server looks at who it believes is
online, asks the sampler for clients, and each invited client runs its
:func:`~simfl.sim.device.device_round` process. The server waits for
``AnyOf(deadline, every invitee resolved, enough updates)``; then every invitee still
busy is interrupted and counted ``late``. "Enough" applies to over-selection
(``overcommit`` > 1: ``n_invites = ceil(overcommit * clients_per_round)`` invitations,
the round closes at the ``clients_per_round``-th arrival, FedScale-style); the surplus
invitees still at work then are ``late`` too, with detail ``round closed`` in the event
log (``deadline`` when the deadline ended the round). The round ends quiescent: no
process of it is left running, and everything the next round needs is explicit state
of this object.

One exception, only with ``keep_late`` (the aggregator asked for late uploads): a device
still busy when its round closes is counted ``late`` in that round but not interrupted.
Exactly these run across round boundaries: such device processes, with their battery
brackets and their scheduled offline interrupts. Nothing else of a round survives it.
While one runs its client is masked out of the next rounds' availability (it cannot be
invited); when its upload completes, the :class:`Arrival` (with its old ``base_round``)
goes to ``late_received`` of the round during which it lands. One that fails later
(erased, offline, battery) is dropped: its round already counted it. A sampler that
invites blindly (ignoring availability) and picks a busy client gets it ``offline``.

Tie rule: an upload that completes exactly at the deadline is on time. The deadline
is a late event (:class:`~simfl.sim.clock.LateEvents`): all activity scheduled for the
deadline instant (including chains of zero-delay events) is processed first.

Collaborators are built outside and handed in (the clock, the links, the MAC, the
energy source); the device processes get them as :class:`~simfl.sim.device.Devices`,
never this object. For convenience, a MAC config and a missing energy source are built
here (the ideal MAC, infinite energy with the default powers).
"""

from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np
import simpy
from simpy.events import Event as SimpyEvent

from simfl.core.config.energy import Energy
from simfl.core.config.network import IdealMac, Mac
from simfl.core.protocols import PopulationView
from simfl.core.records import (Arrival, Event, EventKind, MacSlots, Missing, MissingReason,
                                RoundOutcome)
from simfl.core.rng import RngTree
from simfl.sim.channel import Link, Links
from simfl.sim.clock import LateEvents
from simfl.sim.device import Devices, device_round
from simfl.sim.energy_source import EnergyMeter, InfiniteEnergy
from simfl.sim.event_log import EventLog
from simfl.sim.mac import IdealAccess, build_mac
from simfl.sim.query import device_query

SelectFn = Callable[[PopulationView], np.ndarray]


def _went_offline(proc: simpy.Process, _event: SimpyEvent) -> None:
    if proc.is_alive:
        proc.interrupt(MissingReason.OFFLINE.value)


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
        The downlink and the uplink (:class:`~simfl.sim.channel.Links`, or a dict with
        keys ``"downlink"`` and ``"uplink"``).
    battery:
        The energy source (:func:`simfl.sim.battery.build_energy_source`); None:
        infinite energy at the default powers.
    mac:
        The uplink MAC, built on ``env`` (:func:`simfl.sim.mac.build_mac`, told to charge
        contention transmissions to ``battery``), or its config (built here).
    env:
        The clock (a new one if None; required with a built MAC).
    """

    def __init__(self, *, rngs: RngTree, n_samples: np.ndarray, work_samples: np.ndarray,
                 samples_per_s: np.ndarray, online, links: Links | dict[str, Link],
                 model_bytes: int, arq_max_attempts: int, clients_per_round: int,
                 overcommit: float, deadline_s: float, keep_events: bool = True,
                 battery: EnergyMeter | None = None, mac: Mac | IdealAccess = IdealMac(),
                 keep_late: bool = False, env: simpy.Environment | None = None) -> None:
        mac_cfg = mac.cfg if isinstance(mac, IdealAccess) else mac
        if keep_late and not isinstance(mac_cfg, IdealMac):
            raise ValueError("keep_late needs the ideal MAC (contention is resolved per round)")
        self.env = env = env if env is not None else simpy.Environment()
        self.keep_late = keep_late
        self.late_running: dict[int, int] = {}  # late client at work -> round it was invited in
        self._late_landed: list[Arrival] = []  # late uploads since the last round closed
        self.rngs = rngs
        self.n_samples = n_samples
        self.work_samples = work_samples
        self.model_bytes = model_bytes
        self.online = online
        self.n_invites = math.ceil(overcommit * clients_per_round)
        self.clients_per_round = clients_per_round
        self.deadline_s = deadline_s
        self.late = LateEvents(env)
        self.event_log = EventLog(keep_events)
        self.energy = battery if battery is not None else InfiniteEnergy(len(n_samples), Energy())
        self.energy.bind(env, self.late.timeout, self.event_log.record)
        if not isinstance(mac, IdealAccess):
            mac = build_mac(mac, env, rngs, len(n_samples), self.energy.charge_transmissions)
        elif mac.env is not env:
            raise ValueError("a built MAC must run on the simulation's clock (pass env)")
        self.links = links if isinstance(links, Links) else Links(**links)
        self.devices = Devices(
            env, rngs, links=self.links, mac=mac, energy=self.energy, model_bytes=model_bytes,
            arq_max_attempts=arq_max_attempts,
            compute_s=np.asarray(work_samples, dtype=float) / samples_per_s,
            samples_per_s=samples_per_s, n_samples=n_samples, log=self.event_log.log)

    @property
    def mac(self) -> IdealAccess:
        """The uplink MAC the devices use."""
        return self.devices.mac

    @mac.setter
    def mac(self, mac: IdealAccess) -> None:
        """Replace the MAC (before the first round; it must run on :attr:`env`)."""
        self.devices.mac = mac

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
        mask = self.online.online(round, t_open) & self.energy.alive(round, t_open)
        if self.late_running:  # still working on an earlier round: cannot be invited
            mask[list(self.late_running)] = False
        view = PopulationView(round, t_open, len(mask), np.flatnonzero(mask), self.n_samples)
        chosen = np.asarray(select(view), dtype=np.int64)
        process = self.env.process(self._round(round, t_open, mask, chosen))
        self.env.run(until=process)
        return process.value

    def run_query(self, round: int, clients: np.ndarray, work_samples: np.ndarray,
                  reply_bytes: int, stream: str) -> np.ndarray:
        """Ask ``clients`` something and wait for their answers; return who answered (sorted).

        Each client gets the model on the downlink, processes ``work_samples[client]``
        samples at its speed and sends ``reply_bytes`` on the uplink (with ARQ, channel
        streams tagged ``stream``). The server waits until every answer is in or lost,
        at most ``deadline_s``; the clock advances by that wait. Assumes the asked
        clients are reachable (availability is the caller's choice); no energy is
        charged.
        """
        env = self.env
        t_start = env.now
        procs = [env.process(device_query(self.devices, int(c), round, float(work_samples[c]),
                                          reply_bytes, stream)) for c in clients]
        self.log(t_start, f"{stream}_open", round, detail=f"{len(procs)} asked")

        def wait():
            if procs:
                yield env.all_of(procs) | self.late.timeout(self.deadline_s)
            busy = [p for p in procs if p.is_alive]
            for proc in busy:
                proc.interrupt("deadline")
            if busy:
                yield env.all_of(busy)

        env.run(until=env.process(wait()))
        answered = np.array(sorted(p.value for p in procs if p.value is not None), dtype=np.int64)
        self.log(env.now, f"{stream}_close", round, detail=f"{len(answered)} answered")
        return answered

    def _leave_when_offline(self, clients: np.ndarray, procs: list, t_deadline: float) -> None:
        """Interrupt with cause ``"offline"`` each device whose availability ends by the deadline.

        Continuous-time availability models say when each online client next goes
        offline; per-round models never end a round early (``inf``). The interrupt is
        scheduled when the invitations go out, so it precedes an upload completing, or
        the deadline, at the same instant (leaving then loses the update).
        """
        leave_s = self.online.offline_at(clients)
        horizon_s = math.inf if self.keep_late else t_deadline  # late devices keep going
        for proc, t_s in zip(procs, leave_s.tolist()):
            if t_s <= horizon_s and t_s < math.inf:
                self.env.timeout(max(0.0, t_s - self.env.now)).callbacks.append(
                    functools.partial(_went_offline, proc))

    def _round(self, round: int, t_open: float, mask: np.ndarray, chosen: np.ndarray):
        env = self.env
        t_invite = env.now
        t_deadline = t_invite + self.deadline_s
        selected, draws = np.unique(chosen, return_counts=True)
        self.log(t_invite, EventKind.ROUND_OPEN, round, detail=f"{len(selected)} invited")
        retries_before = self.retries

        missing: list[Missing] = []
        procs = []
        self.mac.open_round(round, selected[mask[selected]])
        for client in selected.tolist():
            self.log(t_invite, EventKind.INVITED, round, client)
            if not mask[client]:
                reason = (MissingReason.BATTERY if self.energy.is_dead(client)
                          else MissingReason.OFFLINE)
                missing.append(Missing(client, reason, t_invite))
                self.log(t_invite, reason, round, client)
            else:
                procs.append(env.process(device_round(self.devices, client, round)))
        self._leave_when_offline(selected[mask[selected]], procs, t_deadline)

        closed = env.event()
        target = self.clients_per_round if self.n_invites > self.clients_per_round else len(procs)
        tally = {"resolved": 0, "received": 0}

        def resolved(proc: simpy.Process) -> None:
            tally["resolved"] += 1
            tally["received"] += isinstance(proc.value, Arrival)
            if not closed.triggered and (tally["resolved"] == len(procs)
                                         or tally["received"] >= target):
                closed.succeed()

        for proc in procs:
            proc.callbacks.append(resolved)
        yield closed | self.late.timeout(self.deadline_s)  # no device working: wait it out

        busy = [(client, p) for client, p in zip(selected[mask[selected]].tolist(), procs)
                if p.is_alive]
        if self.keep_late:
            for client, proc in busy:
                self._keep_running(client, proc, round)
        else:
            for _, proc in busy:
                proc.interrupt("deadline" if env.now >= t_deadline else "round closed")
            if busy:
                yield env.all_of([p for _, p in busy])

        mac_slots = self.mac.close_round()
        if mac_slots:  # also as text, "n:slots:successes" for each number n of contenders
            self.log(env.now, EventKind.MAC_SLOTS, round, detail=_slots_text(mac_slots))
        received = sorted((p.value for p in procs if not p.is_alive
                           and isinstance(p.value, Arrival)), key=lambda a: (a.t_s, a.client))
        missing.extend(p.value for p in procs if not p.is_alive and isinstance(p.value, Missing))
        missing.extend(Missing(client, MissingReason.LATE, env.now)
                       for client, p in busy if p.is_alive)
        late_received = tuple(sorted(self._late_landed, key=lambda a: (a.t_s, a.client)))
        self._late_landed = []
        missing.sort(key=lambda m: m.client)
        self.log(env.now, EventKind.ROUND_CLOSE, round, detail=f"{len(received)} received")
        return RoundOutcome(
            round=round, t_open_s=t_open, t_deadline_s=t_deadline, t_close_s=env.now,
            n_available=int(mask.sum()), selected=tuple(selected.tolist()),
            received=tuple(received), missing=tuple(missing),
            retries=self.retries - retries_before, energy_j=self.energy.take_round_energy_j(),
            multiplicity=tuple(draws.tolist()) if (draws > 1).any() else (),
            late_received=late_received, mac_slots=mac_slots)

    def _keep_running(self, client: int, proc: simpy.Process, round: int) -> None:
        """Let ``client``'s process of ``round`` finish after the round closed (it is late)."""
        self.log(self.env.now, EventKind.LATE, round, client, "continues")
        self.late_running[client] = round

        def landed(_proc: simpy.Process) -> None:
            del self.late_running[client]
            if isinstance(proc.value, Arrival):
                self._late_landed.append(proc.value)

        proc.callbacks.append(landed)


def _slots_text(mac_slots: tuple[MacSlots, ...]) -> str:
    """The ``mac_slots`` event's detail: ``n:slots:successes`` for each number n of contenders."""
    return " ".join(f"{s.contenders}:{s.slots}:{s.successes}" for s in mac_slots)
