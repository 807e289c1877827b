"""The bits columns of a run with compressed uploads (``server.compression``).

``events.csv`` gets ``bits``: the payload bits an ``arrived`` record delivered (one
upload's exact payload), 0 on every other record. ``clients.csv`` gets ``bits_sent``:
each client's delivered uploads (on time or late) times that payload, so it equals the
sum of the client's ``bits`` in ``events.csv``. Without compression neither column is
written (the tables are as they always were).
"""

from __future__ import annotations

import collections
from typing import Any, Iterable, Sequence

from simfl.core.records import Event, EventKind, RoundOutcome
from simfl.metrics.rundir import EVENT_COLUMNS


class UploadBits:
    """Counts each client's delivered uploads of ``upload_bits`` bits (None: no columns)."""

    def __init__(self, upload_bits: int | None) -> None:
        self.upload_bits = upload_bits
        self.delivered: collections.Counter[int] = collections.Counter()

    def count(self, outcome: RoundOutcome) -> None:
        """Add the uploads that reached the server in the round of ``outcome``."""
        if self.upload_bits is not None:
            self.delivered.update(a.client for a in outcome.received + outcome.late_received)

    def clients(self, table: dict[str, Sequence[Any]]) -> dict[str, Sequence[Any]]:
        """clients.csv's table, with ``bits_sent`` when uploads are compressed."""
        if self.upload_bits is None:
            return table
        return {**table, "bits_sent": [self.upload_bits * self.delivered[int(c)]
                                       for c in table["client"]]}

    def events(self, events: Iterable[Event]) -> tuple[tuple[str, ...], Iterable[tuple]]:
        """events.csv's columns and rows."""
        bits = self.upload_bits
        if bits is None:
            return EVENT_COLUMNS, ((e.t_s, e.kind, e.round, e.client, e.detail) for e in events)
        return EVENT_COLUMNS + ("bits",), (
            (e.t_s, e.kind, e.round, e.client, e.detail, bits if e.kind == EventKind.ARRIVED
             else 0) for e in events)
