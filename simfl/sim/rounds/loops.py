"""Which loop runs a round's device work: the fast loop off the clock, or the clocked one.

Before either runs, the MAC learns the deadline and the event log, and a broadcast
downlink fixes the round's download time.

A round's work (every started device's download, compute and upload, until the round
closes) runs on the engine that :mod:`simfl.sim.rounds.engines` chooses from what the
MAC, the links and the energy source claim: in one loop off the clock
(:mod:`simfl.sim.rounds.fast`), or on the clock (:mod:`simfl.sim.rounds.clocked`) as
chained callbacks or processes. All give the same outcomes, and all leave the clock at
the round's close. ``engines`` limits the choice (a test compares them).
"""

from __future__ import annotations

import math
from typing import Generator

import numpy as np
import simpy

from simfl.core.records import Arrival
from simfl.sim.clock import LateEvents
from simfl.sim.radio.broadcast import Broadcast
from simfl.sim.rounds.clocked import ClockedWork, Outcome
from simfl.sim.rounds.device import Devices
from simfl.sim.clock import delays_to
from simfl.core.config.mac import CALLBACKS, OFF_CLOCK
from simfl.sim.rounds.engines import ALL_ENGINES, choose_engine, claimed_engines
from simfl.sim.rounds.fast import FastRound


class RoundLoops:
    """The fast and the clocked round loop of one simulation, and the choice between them."""

    #: the engines rounds may run on (each round takes the lightest one it can)
    engines: frozenset[str] = ALL_ENGINES

    def __init__(self, devices: Devices, late: LateEvents, *, deadline_s: float,
                 clients_per_round: int, n_invites: int, keep_late: bool,
                 broadcast: Broadcast | None = None) -> None:
        self.env = devices.env
        self.devices, self.broadcast = devices, broadcast
        self.deadline_s = deadline_s
        self.keep_late = keep_late
        self.over_selects = n_invites > clients_per_round
        self.fast = FastRound(devices)
        self.clocked = ClockedWork(devices, late, deadline_s=deadline_s,
                                   clients_per_round=clients_per_round,
                                   n_invites=n_invites, keep_late=keep_late)

    @property
    def late_running(self) -> dict[int, int]:
        """Late clients still at work (``keep_late``) -> the round each was invited in."""
        return self.clocked.late_running

    def run(self, round: int, started: np.ndarray, leave_s: np.ndarray, t_deadline: float
            ) -> Generator[simpy.Event, object, list[Outcome]]:
        """SimPy generator: the work of ``started`` (sorted ids, each leaving at its
        ``leave_s``) until the round closes; their outcomes, in the order of ``started``."""
        env, devices = self.env, self.devices
        devices.mac.bind(self.deadline_s, devices.log)  # the MAC may be replaced before
        if self.broadcast is not None:  # one download time for the round
            devices.broadcast_s = self.broadcast.duration_s(started)
        leaving = leave_s <= (math.inf if self.keep_late else t_deadline)
        engine = choose_engine(claimed_engines(devices) & self.engines,
                               keeps_late=self.keep_late, leaving=bool(leaving.any()),
                               over_selects=self.over_selects, off_clock_ready=self.fast.ready)
        if engine == OFF_CLOCK:  # the same events in one loop, off the clock
            outcomes, t_close = self.fast.run(round, started, self.deadline_s)
            for delay_s in delays_to(env.now, t_close):  # the clock to exactly t_close
                yield env.timeout(delay_s)
            return outcomes
        self.fast.hand_over(env)
        return (yield from self.clocked.run(round, started, leave_s, leaving, t_deadline,
                                            chained=engine == CALLBACKS))

    def take_late_landed(self) -> tuple[Arrival, ...]:
        """The late uploads that landed since the last round closed, by time and client."""
        late_landed = tuple(sorted(self.clocked.late_landed, key=lambda a: (a.t_s, a.client)))
        self.clocked.late_landed = []
        return late_landed
