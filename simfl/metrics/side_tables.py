"""The run folder's tables that appear with their first row: ``mac.csv`` (a contention
MAC's slot statistics) and ``aircomp.csv`` (analog slots, :mod:`simfl.metrics.air_table`)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from simfl.core.records import RoundOutcome
from simfl.metrics.air_table import AIR_COLUMNS, air_row
from simfl.metrics.rundir import CSMA_COLUMNS, MAC_COLUMNS, append_text, csv_text, write_atomic


class SideTable:
    """One such table: its header is written with its first rows (unless ``silent``),
    its rows are kept until :meth:`flush` appends them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.pending: list[tuple] | None = None  # None: no row yet

    def add(self, columns: Sequence[str], rows: list[tuple], silent: bool) -> None:
        if self.pending is None:
            if not silent:
                write_atomic(self.path, csv_text(columns, ()))
            self.pending = []
        self.pending += rows

    def flush(self) -> None:
        if self.pending:
            append_text(self.path, csv_text(None, self.pending))
            self.pending = []

    def discard(self) -> None:
        if self.pending is not None:
            self.pending = []


class SideTables:
    """``mac.csv`` and ``aircomp.csv`` of one run folder."""

    def __init__(self, out_dir: Path) -> None:
        self.mac, self.air = SideTable(out_dir / "mac.csv"), SideTable(out_dir / "aircomp.csv")

    def round(self, outcome: RoundOutcome, silent: bool) -> None:
        """Keep ``outcome``'s rows: its contention statistics, its analog slot."""
        if outcome.mac_slots is not None:
            carrier_sense = any(s.extra() for s in outcome.mac_slots)
            self.mac.add(MAC_COLUMNS + (CSMA_COLUMNS if carrier_sense else ()),
                         [(s.round, s.contenders, s.slots, s.successes, *s.extra())
                          for s in outcome.mac_slots], silent)
        if outcome.air is not None:
            self.air.add(AIR_COLUMNS, [air_row(outcome.air)], silent)

    def flush(self) -> None:
        self.mac.flush()
        self.air.flush()

    def discard(self) -> None:
        self.mac.discard()
        self.air.discard()
