"""The timing side of the asynchronous server modes: clients at work at all times.

There are no rounds. The server keeps ``concurrency`` clients working: whenever a
device finishes or fails it looks at who it believes is online (the availability model
and the energy source, as in a synchronous round, minus the clients already at work)
and asks the sampler for as many clients as there are free slots. Each invited client
runs :func:`~simfl.sim.rounds.device.device_round` on the same devices, links, energy source
and event log as a synchronous run; it has ``deadline_s`` from its invitation (a device
still busy then is interrupted and counted ``late``; an upload completing exactly at
its deadline is on time) and a continuous availability model takes it offline when its
online interval ends. While slots stay free (nobody available) the server looks again
every ``deadline_s``. Jobs, versions, steps and the MAC (ideal or slotted ALOHA; TDMA
and the relay schedule rounds): :mod:`simfl.sim.rounds.server_steps`.
"""

from __future__ import annotations

import collections
import functools
import math
from dataclasses import dataclass
from typing import Callable, Generator

import numpy as np
import simpy
from simpy.events import Event as SimpyEvent

from simfl.core.protocols import PopulationView
from simfl.core.records import Arrival, EventKind, Missing, MissingReason
from simfl.sim.rounds.device import device_round
from simfl.sim.rounds.server_steps import Step, Update, open_contention, slots_since
from simfl.sim.simulation import Simulation

#: ``select(view, k)``: at most k client ids to invite from ``view``
PickFn = Callable[[PopulationView, int], np.ndarray]

#: the run ends when no update has arrived for this many deadlines of simulated time
STALL_DEADLINES = 100

#: the interrupt cause of devices still at work when the run ends
RUN_END = "run end"


@dataclass
class _Job:
    client: int
    base_version: int
    proc: simpy.Process


def _interrupt(proc: simpy.Process, cause: str, _event: SimpyEvent) -> None:
    if proc.is_alive:
        proc.interrupt(cause)


class ContinuousServer:
    """Keeps ``concurrency`` clients at work on ``sim``'s clock and reports each step.

    Parameters
    ----------
    sim:
        The deployment (its clock, devices, availability, energy source, event log,
        deadline); its round protocol is not used.
    concurrency:
        Clients kept at work.
    buffer_size:
        Arrivals per step (1 in the ``async`` mode).
    pick:
        The sampler: ``pick(view, k)`` returns at most k ids to invite.
    max_steps:
        The run's last step (None: no limit): after it nobody is invited any more.
    """

    def __init__(self, sim: Simulation, *, concurrency: int, buffer_size: int,
                 pick: PickFn, max_steps: int | None = None) -> None:
        open_contention(sim.mac)
        self.sim, self.env, self.devices = sim, sim.env, sim.devices
        self.concurrency, self.buffer_size, self.pick = concurrency, buffer_size, pick
        self.max_steps = max_steps
        self.version = 0
        self.jobs: dict[int, _Job] = {}  # jobs at work, by number
        self.busy: set[int] = set()  # their clients
        self.n_jobs = self.n_looks = 0
        self.stopping = False
        self._ready: collections.deque[Step] = collections.deque()
        self._wake: simpy.Event | None = None
        self._poll: simpy.Event | None = None  # the pending look while slots stay free
        self._last_step_s = 0.0
        self._ended = self.env.event()  # horizon or stall
        self._end_reason = ""
        self._horizon_s = math.inf
        self._watchdog: simpy.Process | None = None
        self._reset(0.0)
        self._n_available = 0

    # -- the interval's running record ---------------------------------------------

    def _reset(self, t_s: float) -> None:
        self._t_open_s = t_s
        self._invited: list[int] = []
        self._updates: list[Update] = []
        self._missing: list[Missing] = []
        self._retries_before = self.devices.retries

    def _record(self, stepped: bool) -> Step:
        now = float(self.env.now)
        step = Step(self.version, self._t_open_s, now, self._n_available,
                    tuple(self._invited), tuple(self._updates),
                    tuple(sorted(self._missing, key=lambda m: (m.t_s, m.client))),
                    self.devices.retries - self._retries_before,
                    self.sim.energy.take_round_energy_j(), stepped,
                    slots_since(self.sim.mac, self.version))
        self._reset(now)
        return step

    # -- public --------------------------------------------------------------------

    def needed_versions(self) -> set[int]:
        """The versions that jobs at work, or arrivals not yet handed over, were sent
        (the training side keeps them)."""
        pending = [u for step in self._ready for u in step.updates] + self._updates
        return {job.base_version for job in self.jobs.values()} | {
            u.base_version for u in pending}

    @property
    def end_reason(self) -> str:
        """Why :meth:`run_step` returned None: ``"horizon"`` or ``"stall"``."""
        return self._end_reason

    def run_step(self, horizon_s: float | None = None) -> Step | None:
        """Run the clock to the next step and return it; None if the run's horizon came
        first, or no update arrived for ``STALL_DEADLINES`` deadlines (:attr:`end_reason`)."""
        env = self.env
        if self._watchdog is None:  # the first call: invite, and start the watchdogs
            if horizon_s is not None:
                self._horizon_s = horizon_s
                self.sim.late.timeout(max(0.0, horizon_s - env.now)).callbacks.append(
                    functools.partial(self._end, "horizon"))
            self._watchdog = env.process(self._watch())
            self._fill()
        if not self._ready and not self._ended.triggered:
            self._wake = env.event()
            env.run(until=self._wake | self._ended)
        if self._ready:
            return self._ready.popleft()
        return None

    def stop(self) -> Step:
        """End the run now: interrupt every device at work (each counted ``late``, detail
        ``run end``) and return what happened since the last step (``stepped`` False).
        An upload completing at this very instant is in its ``updates``, not applied."""
        self.stopping = True
        self.buffer_size = math.inf  # type: ignore[assignment]  # no step from here on
        procs = [job.proc for job in self.jobs.values()]
        for proc in procs:  # one that completes at this very instant still arrives
            _interrupt(proc, RUN_END, proc)
        if procs:
            self.env.run(until=self.env.all_of(procs))
        return self._record(stepped=False)

    # -- the process ---------------------------------------------------------------

    def _end(self, reason: str, _event: SimpyEvent | None = None) -> None:
        if not self._ended.triggered:
            self._end_reason = reason
            self._ended.succeed()

    def _watch(self) -> Generator[simpy.Event, None, None]:
        """Ends the run when no update has arrived for ``STALL_DEADLINES`` deadlines."""
        stall_s = STALL_DEADLINES * self.sim.deadline_s
        while not self._ended.triggered:
            due_s = self._last_step_s + stall_s
            if self.env.now >= due_s:
                self._end("stall")
                return
            yield self.env.timeout(due_s - self.env.now)

    def _fill(self) -> None:
        """Invite clients into the free slots (one look at the pool)."""
        env, sim = self.env, self.sim
        free = self.concurrency - len(self.jobs)
        if (self.stopping or free <= 0 or self._ended.triggered
                or (self.max_steps is not None and self.version >= self.max_steps)):
            return
        look, now = self.n_looks, float(env.now)
        self.n_looks += 1
        mask = sim.online.online(look, now) & sim.energy.alive(look, now)
        if self.busy:
            mask[list(self.busy)] = False
        available = np.flatnonzero(mask)
        self._n_available = len(available)
        view = PopulationView(look, now, len(mask), available, sim.n_samples)
        chosen = np.unique(np.asarray(self.pick(view, free), dtype=np.int64))[:free]
        for client in chosen.tolist():
            self._invite(client, bool(mask[client]))
        if len(self.jobs) < self.concurrency and self._poll is None:
            self._poll = env.timeout(sim.deadline_s)
            self._poll.callbacks.append(self._polled)

    def _polled(self, _event: SimpyEvent) -> None:
        self._poll = None
        self._fill()

    def _invite(self, client: int, reachable: bool) -> None:
        env, sim = self.env, self.sim
        job, now = self.n_jobs, float(env.now)
        self.n_jobs += 1
        self._invited.append(client)
        sim.log(now, EventKind.INVITED, job, client)
        if not reachable:  # a blind pick (pool "all"): offline or flat, the slot stays free
            reason = (MissingReason.BATTERY if sim.energy.is_dead(client)
                      else MissingReason.OFFLINE)
            self._missing.append(Missing(client, reason, now))
            sim.log(now, reason, job, client)
            return
        proc = env.process(device_round(self.devices, client, job))
        self.jobs[job] = _Job(client, self.version, proc)
        self.busy.add(client)
        leave_s = float(sim.online.offline_at(np.array([client]))[0])
        if leave_s <= now + sim.deadline_s and leave_s < math.inf:
            env.timeout(max(0.0, leave_s - now)).callbacks.append(
                functools.partial(_interrupt, proc, MissingReason.OFFLINE.value))
        sim.late.timeout(sim.deadline_s).callbacks.append(
            functools.partial(_interrupt, proc, "deadline"))
        proc.callbacks.append(functools.partial(self._resolved, job))

    def _resolved(self, job_id: int, proc: SimpyEvent) -> None:
        job = self.jobs.pop(job_id)
        self.busy.discard(job.client)
        value = proc.value
        if isinstance(value, Arrival):
            self._updates.append(Update(job.client, job_id, job.base_version, self.version,
                                        value.t_s, value.n_samples))
            if len(self._updates) >= self.buffer_size:
                self._step()
        elif isinstance(value, Missing):
            self._missing.append(value)
        self._fill()

    def _step(self) -> None:
        step = self._record(stepped=True)
        self.sim.log(step.t_close_s, EventKind.ROUND_CLOSE, step.version,
                     detail=f"{len(step.updates)} applied")
        self.version += 1
        self._last_step_s = step.t_close_s
        self._ready.append(step)
        if self._wake is not None and not self._wake.triggered:
            self._wake.succeed()
