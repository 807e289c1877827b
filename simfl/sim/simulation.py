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
is an event of lower priority than every ordinary event, so all activity scheduled for
the deadline instant (including chains of zero-delay events) is processed first.
"""

from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np
import simpy
from simpy.events import NORMAL, Event as SimpyEvent

from simfl.core.config.energy import Energy
from simfl.core.config.network import IdealMac, Mac
from simfl.core.protocols import PopulationView
from simfl.core.records import Arrival, Event, Missing, RoundOutcome
from simfl.core.rng import RngTree
from simfl.sim.battery import Batteries
from simfl.sim.channel import Link
from simfl.sim.device import device_round
from simfl.sim.mac import build_mac
from simfl.sim.query import device_query

#: priority of the round deadline: after every NORMAL (and URGENT) event at that time
AFTER_NORMAL = NORMAL + 1

SelectFn = Callable[[PopulationView], np.ndarray]


class _Deadline(SimpyEvent):
    """Succeeds ``delay_s`` from now, after all ordinary events of that instant."""

    def __init__(self, env: simpy.Environment, delay_s: float) -> None:
        super().__init__(env)
        self._ok = True
        self._value = None
        env.schedule(self, AFTER_NORMAL, delay_s)


def _went_offline(proc: simpy.Process, _event: SimpyEvent) -> None:
    if proc.is_alive:
        proc.interrupt("offline")


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
        ``{"downlink": Link, "uplink": Link}``.
    """

    def __init__(self, *, rngs: RngTree, n_samples: np.ndarray, work_samples: np.ndarray,
                 samples_per_s: np.ndarray, online, links: dict[str, Link], model_bytes: int,
                 arq_max_attempts: int, clients_per_round: int, overcommit: float,
                 deadline_s: float, keep_events: bool = True,
                 battery: Batteries | None = None, mac: Mac = IdealMac(),
                 keep_late: bool = False) -> None:
        if keep_late and not isinstance(mac, IdealMac):
            raise ValueError("keep_late needs the ideal MAC (contention is resolved per round)")
        self.env = simpy.Environment()
        self.keep_late = keep_late
        self.late_running: dict[int, int] = {}  # late client at work -> round it was invited in
        self._late_landed: list[Arrival] = []  # late uploads since the last round closed
        self.mac = build_mac(mac, self.env, rngs, len(n_samples))
        self.rngs = rngs
        self.n_samples = n_samples
        self.work_samples = work_samples
        self.samples_per_s = samples_per_s
        self.online = online
        self.links = links
        self.model_bytes = model_bytes
        self.arq_max_attempts = arq_max_attempts
        self.clients_per_round = clients_per_round
        self.n_invites = math.ceil(overcommit * clients_per_round)
        self.deadline_s = deadline_s
        self.keep_events = keep_events
        self.events: list[Event] = []
        self.n_events = 0
        self.retries = 0
        self.battery = battery or Batteries(len(n_samples), None, Energy())
        self.battery.bind(self.env, _Deadline, self.log_event)
        if hasattr(self.mac, "on_transmit"):  # contention transmissions cost energy
            self.mac.on_transmit = self.battery.charge_transmissions

    @property
    def now_s(self) -> float:
        return float(self.env.now)

    def compute_s(self, client: int) -> float:
        return float(self.work_samples[client] / self.samples_per_s[client])

    def log(self, t_s: float, kind: str, round: int, client: int = -1, detail: str = "") -> None:
        """Count an event; keep its record only if events are kept (records cost time)."""
        self.n_events += 1
        if self.keep_events:
            self.events.append(Event(t_s, kind, round, client, detail))

    def log_event(self, event: Event) -> None:
        """:meth:`log` for a ready-made record (the batteries' callback)."""
        self.log(event.t_s, event.kind, event.round, event.client, event.detail)

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
        mask = self.online.online(round, t_open) & self.battery.alive(round, t_open)
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
        procs = [env.process(device_query(self, int(c), round, float(work_samples[c]),
                                          reply_bytes, stream)) for c in clients]
        self.log(t_start, f"{stream}_open", round, detail=f"{len(procs)} asked")

        def wait():
            if procs:
                yield env.all_of(procs) | _Deadline(env, self.deadline_s)
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
        self.log(t_invite, "round_open", round, detail=f"{len(selected)} invited")
        retries_before = self.retries

        missing: list[Missing] = []
        procs = []
        self.mac.open_round(round, selected[mask[selected]])
        for client in selected.tolist():
            self.log(t_invite, "invited", round, client)
            if not mask[client]:
                reason = "battery" if self.battery.is_dead(client) else "offline"
                missing.append(Missing(client, reason, t_invite))
                self.log(t_invite, reason, round, client)
            else:
                procs.append(env.process(device_round(self, client, round)))
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
        yield closed | _Deadline(env, self.deadline_s)  # no device working: wait it out

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

        slot_stats = self.mac.close_round()
        if slot_stats:  # "n:slots:successes" for each number n of contenders
            self.log(env.now, "mac_slots", round, detail=" ".join(
                f"{n}:{slots}:{wins}" for n, (slots, wins) in sorted(slot_stats.items())))
        received = sorted((p.value for p in procs if not p.is_alive
                           and isinstance(p.value, Arrival)), key=lambda a: (a.t_s, a.client))
        missing.extend(p.value for p in procs if not p.is_alive and isinstance(p.value, Missing))
        missing.extend(Missing(client, "late", env.now) for client, p in busy if p.is_alive)
        late_received = tuple(sorted(self._late_landed, key=lambda a: (a.t_s, a.client)))
        self._late_landed = []
        missing.sort(key=lambda m: m.client)
        self.log(env.now, "round_close", round, detail=f"{len(received)} received")
        return RoundOutcome(
            round=round, t_open_s=t_open, t_deadline_s=t_deadline, t_close_s=env.now,
            n_available=int(mask.sum()), selected=tuple(selected.tolist()),
            received=tuple(received), missing=tuple(missing),
            retries=self.retries - retries_before, energy_j=self.battery.take_round_energy_j(),
            multiplicity=tuple(draws.tolist()) if (draws > 1).any() else (),
            late_received=late_received)

    def _keep_running(self, client: int, proc: simpy.Process, round: int) -> None:
        """Let ``client``'s process of ``round`` finish after the round closed (it is late)."""
        self.log(self.env.now, "late", round, client, "continues")
        self.late_running[client] = round

        def landed(_proc: simpy.Process) -> None:
            del self.late_running[client]
            if isinstance(proc.value, Arrival):
                self._late_landed.append(proc.value)

        proc.callbacks.append(landed)
