"""Events that fire after every ordinary event of their instant (deadlines, depletion timers).

SimPy orders the events of one instant by priority, then by creation. A round's deadline
must come after all activity of its instant, including chains of zero-delay events that
this activity starts, so that an upload completing exactly at the deadline is on time;
a battery's depletion timer likewise lets work that needs exactly the energy left
complete. :class:`LateEvents` gets this order from SimPy's public API alone: an ordinary
timeout wakes it at the instant; it then waits, one zero-delay step at a time, until
nothing else is scheduled for that instant (``Environment.peek``) and only then
succeeds the earliest due late event. Late events of one instant fire one by one in the
order they were made, each after the consequences of the one before.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Callable

import numpy as np
import simpy


class LateEvents:
    """Maker of late timeouts on one SimPy clock (one per clock: two would each wait for
    the other's zero-delay steps forever)."""

    def __init__(self, env: simpy.Environment) -> None:
        self.env = env
        self._due: list[tuple[float, int, simpy.Event]] = []
        self._order = itertools.count()
        self._draining = False

    def timeout(self, delay_s: float) -> simpy.Event:
        """An event that succeeds ``delay_s`` from now, after the instant's ordinary events."""
        env = self.env
        event = env.event()
        wake = env.timeout(delay_s)  # fires at the same float time as a plain timeout
        heapq.heappush(self._due, (env.now + delay_s, next(self._order), event))
        wake.callbacks.append(self._wake)
        return event

    def _wake(self, _event: simpy.Event) -> None:
        if not self._draining:
            self._draining = True
            self._step()

    def _step(self) -> None:
        self.env.timeout(0).callbacks.append(self._drain)

    def _drain(self, _event: simpy.Event) -> None:
        env = self.env
        if env.peek() == env.now:  # ordinary events of this instant remain: after them
            self._step()
            return
        _, _, event = heapq.heappop(self._due)
        event.succeed()
        if self._due and self._due[0][0] <= env.now:
            self._step()
        else:
            self._draining = False


def clock_delay_s(now_s: float, delay_s: float) -> float:
    """``delay_s``, or the smallest delay that moves a float clock at ``now_s`` forward
    when ``delay_s`` would leave it where it is (a timer must never fire at its own
    instant over and over)."""
    if now_s + delay_s > now_s:
        return delay_s
    return float(np.nextafter(now_s, np.inf) - now_s)


def delays_to(now_s: float, t_s: float) -> list[float]:
    """Delays that take a float clock from ``now_s`` to exactly ``t_s`` >= ``now_s`` (the
    clock adds each delay to its time): one where one does, else two. Not every float is
    some ``now_s + d``, but every one is ``s + (t_s - s)`` for an ``s`` in [t_s / 2, t_s]
    (the difference is then exact), and ``now_s + 0.75 (t_s - now_s)`` is such an ``s``."""
    d = t_s - now_s
    for candidate in (d, float(np.nextafter(d, np.inf)), float(np.nextafter(d, -np.inf))):
        if now_s + candidate == t_s and candidate >= 0:
            return [candidate]
    first = 0.75 * d
    step = now_s + first
    if not (t_s / 2 <= step <= t_s and step + (t_s - step) == t_s):
        raise ArithmeticError(f"no float delays take the clock from {now_s!r} to {t_s!r}")
    return [first, t_s - step]


def call_at(env: simpy.Environment, t_s: float, callback: Callable[[simpy.Event], None]) -> None:
    """Call ``callback`` when ``env``'s clock is exactly ``t_s`` (now if ``t_s`` is past):
    one timeout, or two where no single float delay lands on ``t_s``."""
    delays = delays_to(env.now, t_s) if t_s > env.now else [0.0]
    if len(delays) == 1:
        env.timeout(delays[0]).callbacks.append(callback)
        return
    env.timeout(delays[0]).callbacks.append(lambda _: call_at(env, t_s, callback))
