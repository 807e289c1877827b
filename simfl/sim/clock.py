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
