"""The run folder's tables that appear with their first row: ``mac.csv`` (a contention
MAC's slot statistics) and ``aircomp.csv`` (one row per round's analog slot when
``server.algorithm.kind = "aircomp"``)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from simfl.core.air_slot import AirSlot
from simfl.core.records import RoundOutcome
from simfl.metrics.rundir import CSMA_COLUMNS, MAC_COLUMNS, append_text, csv_text, write_atomic

AIR_COLUMNS = ("round", "t_start_s", "slot_s", "n_participants", "n_truncated", "eta", "mse",
               "participants", "truncated")


def air_row(slot: AirSlot) -> tuple[int | float | str, ...]:
    """The ``aircomp.csv`` row of ``slot``: the client lists as space-separated ids."""
    return (slot.round, slot.t_start_s, slot.slot_s, len(slot.participants),
            len(slot.truncated), slot.eta, slot.mse, " ".join(map(str, slot.participants)),
            " ".join(map(str, slot.truncated)))


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
