"""The simulation's event log: every event is counted, records are kept on request."""

from __future__ import annotations

from simfl.core.records import Event, MacSlots


class EventLog:
    """Counts events; keeps their records only if ``keep`` (records cost time)."""

    def __init__(self, keep: bool = True) -> None:
        self.keep = keep
        self.events: list[Event] = []
        self.n_events = 0

    def log(self, t_s: float, kind: str, round: int, client: int = -1, detail: str = "") -> None:
        """Count an event, and keep its record if records are kept."""
        self.n_events += 1
        if self.keep:
            self.events.append(Event(t_s, kind, round, client, detail))

    def record(self, event: Event) -> None:
        """:meth:`log` for a ready-made record."""
        self.log(event.t_s, event.kind, event.round, event.client, event.detail)


def slots_text(mac_slots: tuple[MacSlots, ...]) -> str:
    """The ``mac_slots`` event's detail: ``n:slots:successes`` for each number n of contenders."""
    return " ".join(f"{s.contenders}:{s.slots}:{s.successes}" for s in mac_slots)
