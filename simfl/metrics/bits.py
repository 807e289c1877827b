"""The bits columns of a run with compressed uploads (``server.compression``).

``events.csv`` gets ``bits``: the payload bits an ``arrived`` record delivered (one
upload's exact payload), 0 on every other record. ``clients.csv`` gets ``bits_sent``:
each client's delivered uploads (on time or late) times that payload, so it equals the
sum of the client's ``bits`` in ``events.csv``. Without compression neither column is
written (the tables are as they always were).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from simfl.core.records import Event, EventKind
from simfl.metrics.rundir import EVENT_COLUMNS


def event_rows(events: Iterable[Event],
               upload_bits: int | None) -> tuple[tuple[str, ...], Iterable[tuple]]:
    """events.csv's columns and rows."""
    if upload_bits is None:
        return EVENT_COLUMNS, ((e.t_s, e.kind, e.round, e.client, e.detail) for e in events)
    return EVENT_COLUMNS + ("bits",), (
        (e.t_s, e.kind, e.round, e.client, e.detail,
         upload_bits if e.kind == EventKind.ARRIVED else 0) for e in events)


def with_bits_sent(table: dict[str, Sequence[Any]], upload_bits: int | None,
                   delivered: Mapping[int, int]) -> dict[str, Sequence[Any]]:
    """clients.csv's table, with ``bits_sent`` when uploads are compressed; ``delivered``
    counts each client's uploads that reached the server."""
    if upload_bits is None:
        return table
    return {**table, "bits_sent": [upload_bits * delivered.get(int(c), 0)
                                   for c in table["client"]]}
