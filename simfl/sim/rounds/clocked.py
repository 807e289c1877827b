"""A round's device work on the SimPy clock: processes (or chained devices), the close, late devices.

The server waits for ``AnyOf(deadline, every invitee resolved, enough updates)``; then
every invitee still busy is interrupted and counted ``late`` (``round closed`` in the
event log when over-selection closed the round early, ``deadline`` otherwise). With
``keep_late`` a device still busy is counted ``late`` but not interrupted: its process
runs across round boundaries (with its energy and its scheduled offline interrupt),
its client is masked out of the next rounds' availability while it runs, and when its
upload lands the :class:`Arrival` (with its old ``base_round``) goes to the round
during which it lands; one that fails later is dropped (its round already counted it).
"""

from __future__ import annotations

import functools
import math
from typing import Generator

import numpy as np
import simpy
from simpy.events import Event as SimpyEvent

from simfl.core.records import Arrival, EventKind, Missing, MissingReason
from simfl.sim.clock import LateEvents
from simfl.sim.rounds.device import Devices, device_round
from simfl.sim.rounds.device_chain import ChainedDevice, start_devices

#: a device's round work: a SimPy process, or the same steps on event callbacks
Work = simpy.Process | ChainedDevice
#: what a device's round work ends with
Outcome = Arrival | Missing


def _went_offline(proc: simpy.Process, _event: SimpyEvent) -> None:
    if proc.is_alive:
        proc.interrupt(MissingReason.OFFLINE.value)


class ClockedWork:
    """Runs a round's device work on the clock; keeps the late devices (``keep_late``)."""

    def __init__(self, devices: Devices, late: LateEvents, *, deadline_s: float,
                 clients_per_round: int, n_invites: int, keep_late: bool) -> None:
        self.devices, self.late = devices, late
        self.deadline_s = deadline_s
        self.clients_per_round, self.n_invites = clients_per_round, n_invites
        self.keep_late = keep_late
        self.late_running: dict[int, int] = {}  # late client at work -> round it was invited in
        self.late_landed: list[Arrival] = []  # late uploads since the last round closed

    def run(self, round: int, started: np.ndarray, leave_s: np.ndarray, leaving: np.ndarray,
            t_deadline: float, *, chained: bool = False
            ) -> Generator[simpy.Event, object, list[Outcome]]:
        """SimPy generator: the devices' work until the round closes; their outcomes, in
        the order of ``started`` (a late device kept at work: ``late``). ``chained``: as
        event callbacks instead of processes (the ``callbacks`` engine, when chosen)."""
        env = self.devices.env
        target = self.clients_per_round if self.n_invites > self.clients_per_round else len(started)
        closed = env.event()
        tally = {"resolved": 0, "received": 0}

        def resolved(work: Work) -> None:
            tally["resolved"] += 1
            tally["received"] += isinstance(work.value, Arrival)
            if not closed.triggered and (tally["resolved"] == len(works)
                                         or tally["received"] >= target):
                closed.succeed()

        works: list[Work]
        if chained:
            # no process needed: the devices' steps as event callbacks (same numbers);
            # the deadline is made first, as when the processes start after it is made
            deadline = self.late.timeout(self.deadline_s)
            works = list(start_devices(self.devices, started.tolist(), round,
                                       resolved, as_event=target < len(started)))
        else:
            procs = [env.process(device_round(self.devices, client, round))
                     for client in started.tolist()]
            self._leave_when_offline(procs, leave_s, leaving)
            for proc in procs:
                proc.callbacks.append(resolved)
            works = list(procs)
            deadline = self.late.timeout(self.deadline_s)
        yield closed | deadline  # no device working: wait it out

        busy = [(client, w) for client, w in zip(started.tolist(), works) if w.is_alive]
        if self.keep_late:
            for client, work in busy:
                assert isinstance(work, simpy.Process)
                self._keep_running(client, work, round)
        else:
            for _, work in busy:
                work.interrupt("deadline" if env.now >= t_deadline else "round closed")
            processes = [w for _, w in busy if isinstance(w, simpy.Process)]
            if processes:
                yield env.all_of(processes)
        return [_outcome(w.value) if not w.is_alive
                else Missing(client, MissingReason.LATE, env.now)
                for client, w in zip(started.tolist(), works)]

    def _leave_when_offline(self, procs: list[simpy.Process], leave_s: np.ndarray,
                            leaving: np.ndarray) -> None:
        """Interrupt with cause ``"offline"`` each device whose availability ends (at
        ``leave_s``) by the deadline (``leaving``; later devices keep going with keep_late).

        Continuous-time availability models say when each online client next goes
        offline; per-round models never end a round early (``inf``). The interrupt is
        scheduled when the invitations go out, so it precedes an upload completing, or
        the deadline, at the same instant (leaving then loses the update).
        """
        env = self.devices.env
        for proc, t_s, due in zip(procs, leave_s.tolist(), leaving.tolist()):
            if due and t_s < math.inf:
                env.timeout(max(0.0, t_s - env.now)).callbacks.append(
                    functools.partial(_went_offline, proc))

    def _keep_running(self, client: int, proc: simpy.Process, round: int) -> None:
        """Let ``client``'s process of ``round`` finish after the round closed (it is late)."""
        self.devices.log(self.devices.env.now, EventKind.LATE, round, client, "continues")
        self.late_running[client] = round

        def landed(_proc: SimpyEvent) -> None:
            del self.late_running[client]
            if isinstance(proc.value, Arrival):
                self.late_landed.append(proc.value)

        proc.callbacks.append(landed)


def _outcome(value: object) -> Outcome:
    assert isinstance(value, (Arrival, Missing)), "a device's work ends with its outcome"
    return value
