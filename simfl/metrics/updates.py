"""``updates.csv`` and the round records of the asynchronous server modes.

In the ``async`` and ``buffered`` modes a row of ``rounds.csv`` is one server version
(the interval between two steps), recorded through :class:`StepRecorder`: the
:class:`~simfl.metrics.recorder.RunRecorder` with the invariants that hold without
rounds (:func:`check_step`). ``updates.csv`` gets one row per applied update
(:class:`UpdatesWriter`), appended as the run goes like the other tables.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Iterable, Sequence

from simfl.core.records import MISSING_REASONS, RoundOutcome
from simfl.metrics.recorder import RunRecorder
from simfl.metrics.rundir import UPDATE_COLUMNS, append_text, csv_text, write_atomic


class UpdatesWriter:
    """Appends rows of ``updates.csv`` (:data:`UPDATE_COLUMNS`), at most every
    ``flush_every_s`` seconds of wall time and at :meth:`flush` with ``force``."""

    def __init__(self, out_dir: Path, flush_every_s: float = 1.0) -> None:
        self.path = Path(out_dir) / "updates.csv"
        self.flush_every_s = flush_every_s
        self._pending: list[Sequence[object]] = []
        self._last_flush = 0.0
        self.n_rows = 0
        self.staleness_total = 0
        write_atomic(self.path, csv_text(UPDATE_COLUMNS, ()))

    def add(self, rows: Iterable[Sequence[object]]) -> None:
        """Rows in :data:`UPDATE_COLUMNS` order (``staleness`` fifth)."""
        for row in rows:
            self._pending.append(row)
            self.n_rows += 1
            self.staleness_total += int(row[4])  # type: ignore[call-overload]
        self.flush()

    @property
    def mean_staleness(self) -> float | None:
        """The mean staleness of the updates so far (None before the first)."""
        return self.staleness_total / self.n_rows if self.n_rows else None

    def flush(self, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self._last_flush < self.flush_every_s:
            return
        self._last_flush = now
        if self._pending:
            append_text(self.path, csv_text(None, self._pending))
            self._pending = []


def check_step(previous_close_s: float, outcome: RoundOutcome, trained: int,
               aggregated: int) -> list[str]:
    """Violations of one version's invariants (empty when all hold).

    Monotone clock (the previous version's close <= this one's open <= its close);
    known missing reasons; every update applied to this version was sent an earlier or
    the same version and landed within the interval; trained == aggregated, and 0 or
    every update of the row (an upload landing at the instant the run ends is received
    but never applied).
    """
    r = outcome.round
    problems: list[str] = []
    if not previous_close_s <= outcome.t_open_s <= outcome.t_close_s:
        problems.append(f"round {r}: clock not monotone (previous close {previous_close_s}, "
                        f"open {outcome.t_open_s}, close {outcome.t_close_s})")
    unknown = {m.reason for m in outcome.missing} - set(MISSING_REASONS)
    if unknown:
        problems.append(f"round {r}: unknown missing reasons {sorted(unknown)}")
    wrong = [a.client for a in outcome.received
             if a.base_round > r or not outcome.t_open_s <= a.t_s <= outcome.t_close_s]
    if wrong:
        problems.append(f"round {r}: updates from a later version or outside the interval: "
                        f"{wrong}")
    if outcome.late_received:
        problems.append(f"round {r}: late uploads in an asynchronous mode")
    n = len(outcome.received)
    if trained != aggregated or trained not in (0, n):
        problems.append(f"round {r}: trained {trained}, aggregated {aggregated}, received {n}")
    return problems


class StepRecorder(RunRecorder):
    """The run recorder of the asynchronous modes: one ``rounds.csv`` row per version,
    checked by :func:`check_step` instead of the synchronous round invariants."""

    _close_s = 0.0

    def _check(self, outcome: RoundOutcome, trained: int, aggregated: int) -> None:
        self.problems += check_step(self._close_s, outcome, trained, aggregated)
        self._close_s = outcome.t_close_s
