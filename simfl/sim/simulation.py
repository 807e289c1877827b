"""The simulated deployment: one SimPy clock for availability, compute, links and deadlines.

Rounds are synchronous. When a round opens the server looks at who it believes is
online, asks the sampler for clients, and each invited client runs its
:func:`~simfl.sim.device.device_round` process. The server waits for
``AnyOf(deadline, every invitee resolved, enough updates)``; then every invitee still
busy is interrupted and counted ``late``. The round ends quiescent: no process of it is
left running, and everything the next round needs is explicit state of this object.

Tie rule: an upload that completes exactly at the deadline is on time. The deadline
is an event of lower priority than every ordinary event, so all activity scheduled for
the deadline instant (including chains of zero-delay events) is processed first.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import simpy
from simpy.events import NORMAL, Event as SimpyEvent

from simfl.core.protocols import PopulationView
from simfl.core.records import Arrival, Event, Missing, RoundOutcome
from simfl.core.rng import RngTree
from simfl.sim.channel import Link
from simfl.sim.device import device_round

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
                 deadline_s: float, keep_events: bool = True) -> None:
        self.env = simpy.Environment()
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

    @property
    def now_s(self) -> float:
        return float(self.env.now)

    def compute_s(self, client: int) -> float:
        return float(self.work_samples[client] / self.samples_per_s[client])

    def log(self, event: Event) -> None:
        self.n_events += 1
        if self.keep_events:
            self.events.append(event)

    def run_round(self, round: int, select: SelectFn) -> RoundOutcome:
        """Simulate one round from now until it closes; return its outcome."""
        process = self.env.process(self._round(round, select))
        self.env.run(until=process)
        return process.value

    def _round(self, round: int, select: SelectFn):
        env = self.env
        t_open = env.now
        t_deadline = t_open + self.deadline_s
        mask = self.online.online(round, t_open)
        n_clients = len(mask)
        view = PopulationView(round, t_open, n_clients, np.flatnonzero(mask), self.n_samples)
        selected = np.sort(np.asarray(select(view), dtype=np.int64))
        self.log(Event(t_open, "round_open", round, detail=f"{len(selected)} invited"))
        retries_before = self.retries

        missing: list[Missing] = []
        procs = []
        for client in selected.tolist():
            self.log(Event(t_open, "invited", round, client))
            if not mask[client]:
                missing.append(Missing(client, "offline", t_open))
                self.log(Event(t_open, "offline", round, client))
            else:
                procs.append(env.process(device_round(self, client, round)))

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
        if not procs:
            closed.succeed()
        yield closed | _Deadline(env, self.deadline_s)

        busy = [p for p in procs if p.is_alive]
        for proc in busy:
            proc.interrupt("deadline" if env.now >= t_deadline else "round closed")
        if busy:
            yield env.all_of(busy)

        received = sorted((p.value for p in procs if isinstance(p.value, Arrival)),
                          key=lambda a: (a.t_s, a.client))
        missing.extend(p.value for p in procs if isinstance(p.value, Missing))
        missing.sort(key=lambda m: m.client)
        self.log(Event(env.now, "round_close", round, detail=f"{len(received)} received"))
        return RoundOutcome(
            round=round, t_open_s=t_open, t_deadline_s=t_deadline, t_close_s=env.now,
            n_available=int(mask.sum()), selected=tuple(selected.tolist()),
            received=tuple(received), missing=tuple(missing),
            retries=self.retries - retries_before)
