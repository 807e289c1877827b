"""The part of the clock that a MAC's shared band reads, run by a loop off the clock.

A band shared by processor sharing (:class:`~simfl.sim.mac.ofdma.OfdmaAccess`) reads the
time (``now``), makes events that fire when an upload is served (``event``, then
``succeed``) and timeouts at its next finish (``timeout``, with callbacks). A
:class:`LoopClock` gives it these on a loop's heap, keyed like the clock's queue (time,
order of scheduling), so the band's own code runs off the clock and its events happen
in the clock's order among the loop's.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Any, Callable

#: the kind of a heap entry that is an event of the loop's clock
EVENT = -1


class LoopEvent:
    """An event on the loop's clock: its callbacks run when the loop takes it off the heap."""

    __slots__ = ("clock", "callbacks", "value")

    def __init__(self, clock: LoopClock) -> None:
        self.clock = clock
        self.callbacks: list[Callable[[LoopEvent], None]] = []
        self.value: Any = None

    def succeed(self, value: Any = None) -> LoopEvent:
        """Fire now (its callbacks run in turn, behind what is already due now)."""
        self.value = value
        self.clock.schedule(0.0, self)
        return self

    def run(self) -> None:
        for callback in self.callbacks:
            callback(self)


class LoopClock:
    """``now``, ``event()`` and ``timeout(delay_s)`` on ``heap`` (entries ``(time, order,
    kind, payload)``, orders from ``order``)."""

    def __init__(self, heap: list[tuple[float, int, int, Any]], order: itertools.count[int],
                 now_s: float) -> None:
        self.heap, self.order, self.now = heap, order, now_s

    def schedule(self, delay_s: float, event: LoopEvent) -> None:
        heapq.heappush(self.heap, (self.now + delay_s, next(self.order), EVENT, event))

    def event(self) -> LoopEvent:
        return LoopEvent(self)

    def timeout(self, delay_s: float) -> LoopEvent:
        event = LoopEvent(self)
        self.schedule(delay_s, event)
        return event
