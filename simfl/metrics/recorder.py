"""Turns round outcomes and evaluations into the run directory's tables and summary."""

from __future__ import annotations

import collections
import time
from pathlib import Path
from typing import Any, Sequence

from simfl.core.records import Event, RoundOutcome
from simfl.metrics.bits import UploadBits
from simfl.metrics.invariants import check_energy, check_rounds
from simfl.metrics.rundir import (EVAL_COLUMNS, ROUND_COLUMNS, append_text,
                                  csv_text, cut_tables, table_sizes, write_atomic, write_csv,
                                  write_json)
from simfl.metrics.side_tables import SideTables

#: the columns ``rounds.csv`` gains in hierarchical FL (``server.hierarchy``): ``tier``,
#: ``edge`` (the edges aggregated) or ``cloud`` (then the cloud too); ``edges_up``: edge
#: models that reached the cloud; ``edges_down``: edges the cloud's model reached;
#: ``t_edge_close_s``: when the edge round closed (``t_close_s`` is the end of the cloud
#: phase in a cloud round)
TIER_COLUMNS = ("tier", "edges_up", "edges_down", "t_edge_close_s")

#: the tables the recorder appends to while the run goes on
TABLES = ("rounds.csv", "evals.csv", "mac.csv", "aircomp.csv")

#: invitee records (received plus missing) of the latest rounds that ``outcomes`` keeps
KEEP_OUTCOME_RECORDS = 200_000


class RunRecorder:
    """Collects one run's records and keeps its directory valid while it runs.

    ``rounds.csv`` and ``evals.csv`` get their header at once and their rows appended
    at most every ``flush_every_s`` seconds of wall time and at the end (whole rows in
    one write), so the cost of a flush is that of its new rows. Memory stays bounded:
    the summary needs only running totals, each round's invariants are checked when it
    is recorded, and :attr:`outcomes` holds the latest rounds only, up to
    ``keep_outcome_records`` invitee records (always at least the last round).
    """

    def __init__(self, out_dir: Path, config: dict[str, Any], target_accuracy: float | None,
                 started_s: float, flush_every_s: float = 1.0,
                 eval_extra: tuple[str, ...] = (), late: bool = False, tiers: bool = False,
                 keep_outcome_records: int = KEEP_OUTCOME_RECORDS, resume: bool = False,
                 upload_bits: int | None = None) -> None:
        self.out_dir = out_dir
        #: replaying a resumed run's completed rounds: their rows are on disk already
        self.silent = resume
        # late uploads the aggregator asked for; edge servers: rounds.csv counts both
        self.late, self.tiers = late, tiers
        self.round_columns = ROUND_COLUMNS + (("n_late_stored",) if late else ()) + (
            TIER_COLUMNS if tiers else ())
        self.eval_columns = EVAL_COLUMNS + eval_extra  # extra columns of evals.csv
        self.target_accuracy = target_accuracy
        self.flush_every_s = flush_every_s
        self.keep_outcome_records = keep_outcome_records
        self._outcomes: collections.deque[RoundOutcome] = collections.deque()
        self._kept_records = 0
        self.n_rounds = 0
        self.trained_total = self.aggregated_total = 0
        self.energy_total_j = 0.0
        self.problems: list[str] = []  # invariant violations found so far
        self._previous: RoundOutcome | None = None
        self._late_bases: dict[int, RoundOutcome] = {}  # rounds that late uploads may come from
        self.client_table: dict[str, Sequence[Any]] | None = None  # see clients()
        self.bits = UploadBits(upload_bits)  # the bits columns of compressed uploads
        self._pending_rounds: list[tuple] = []
        self._pending_evals: list[tuple] = []
        self.side_tables = SideTables(out_dir)  # mac.csv and aircomp.csv, from their first row
        #: the latest evaluation row (a list of at most one row, newest last)
        self.eval_rows: list[tuple] = []
        self._final_accuracy: float | None = None
        self._best_accuracy: float | None = None
        self._time_to_target_s: float | None = None
        self._last_flush = 0.0
        self._started_s = started_s  # time.perf_counter() when the run began
        if not resume:
            write_json(out_dir / "config.json", config)
            write_atomic(out_dir / "rounds.csv", csv_text(self.round_columns, ()))
            write_atomic(out_dir / "evals.csv", csv_text(self.eval_columns, ()))

    @property
    def outcomes(self) -> list[RoundOutcome]:
        """The latest rounds' outcomes (all of them unless the run is large)."""
        return list(self._outcomes)

    def round(self, outcome: RoundOutcome, trained: int, aggregated: int,
              late_stored: int = 0) -> None:
        """Record a round; ``trained`` and ``aggregated`` include the ``late_stored``
        late uploads (``outcome.late_received``) that were trained and aggregated."""
        self._check(outcome, trained, aggregated)
        self._keep(outcome)
        self.n_rounds += 1
        self.trained_total += trained
        self.aggregated_total += aggregated
        self.energy_total_j += outcome.energy_j
        self.bits.count(outcome)
        n = outcome.n_missing
        self._pending_rounds.append((
            outcome.round, outcome.t_open_s, outcome.t_close_s, outcome.n_available,
            len(outcome.selected), len(outcome.received), n("late"), n("erased"), n("collided"),
            n("battery"), n("offline"), outcome.retries, outcome.energy_j, trained, aggregated,
            *((late_stored,) if self.late else ()), *(tier_row(outcome) if self.tiers else ())))
        self.side_tables.round(outcome, self.silent)  # mac.csv, aircomp.csv
        self.flush()

    def _check(self, outcome: RoundOutcome, trained: int, aggregated: int) -> None:
        """This round's invariants (:func:`check_rounds`) against the round before it and
        the rounds its late uploads were invited in."""
        window = {o.round: o for o in (self._previous, *(
            self._late_bases.get(a.base_round) for a in outcome.late_received)) if o is not None}
        earlier = sorted(window.values(), key=lambda o: o.round)
        found = check_rounds([*earlier, outcome], [0] * len(earlier) + [trained],
                             [0] * len(earlier) + [aggregated], self.late)
        mine = f"round {outcome.round}:"
        self.problems += [p for p in found if p.startswith(mine)]
        self._previous = outcome
        if self.late and any(m.reason == "late" for m in outcome.missing):
            self._late_bases[outcome.round] = outcome

    def _keep(self, outcome: RoundOutcome) -> None:
        self._outcomes.append(outcome)
        self._kept_records += _records(outcome)
        while len(self._outcomes) > 1 and self._kept_records > self.keep_outcome_records:
            self._kept_records -= _records(self._outcomes.popleft())

    def evaluation(self, t_s: float, round: int, accuracy: float, loss: float,
                   *extra: Any) -> None:
        row = (t_s, round, accuracy, loss, *extra)
        self._pending_evals.append(row)
        self.eval_rows[:] = [row]
        self._final_accuracy = accuracy
        if accuracy == accuracy:  # not NaN (data sets without an accuracy)
            if self._best_accuracy is None or accuracy > self._best_accuracy:
                self._best_accuracy = accuracy
            if (self._time_to_target_s is None and self.target_accuracy is not None
                    and accuracy >= self.target_accuracy):
                self._time_to_target_s = t_s

    def flush(self, force: bool = False) -> None:
        """Append the rows recorded since the last flush (at most every ``flush_every_s``)."""
        now = time.perf_counter()
        if not force and now - self._last_flush < self.flush_every_s:
            return
        if self.silent:
            self._discard_pending()
            return
        self._last_flush = now
        if self._pending_rounds:
            append_text(self.out_dir / "rounds.csv", csv_text(None, self._pending_rounds))
            self._pending_rounds = []
        if self._pending_evals:
            append_text(self.out_dir / "evals.csv", csv_text(None, self._pending_evals))
            self._pending_evals = []
        self.side_tables.flush()

    def _discard_pending(self) -> None:
        self._pending_rounds, self._pending_evals = [], []
        self.side_tables.discard()

    def snapshot(self) -> dict[str, Any]:
        """What a checkpoint keeps of the recorder: its tables' sizes on disk (after a
        flush) and the evaluation totals; the round totals are rebuilt by the replay."""
        self.flush(force=True)
        return {"sizes": table_sizes(self.out_dir, TABLES), "eval_rows": list(self.eval_rows),
                "final_accuracy": self._final_accuracy, "best_accuracy": self._best_accuracy,
                "time_to_target_s": self._time_to_target_s}

    def restore(self, state: dict[str, Any]) -> None:
        """Go on from a checkpoint: the tables cut back to their sizes then (rows a killed
        run appended after it go), the evaluation totals restored, writing resumed."""
        cut_tables(self.out_dir, TABLES, state["sizes"])
        self.eval_rows[:] = state["eval_rows"]
        self._final_accuracy = state["final_accuracy"]
        self._best_accuracy = state["best_accuracy"]
        self._time_to_target_s = state["time_to_target_s"]
        self._discard_pending()
        self.silent = False

    def clients(self, table: dict[str, Sequence[Any]]) -> None:
        """Write ``clients.csv``: per-client energy records (columns = the table's keys,
        ``client`` and ``energy_j`` first; battery columns, ``bits_sent``, when there)."""
        self.client_table = table = self.bits.clients(table)
        write_csv(self.out_dir / "clients.csv", list(table), zip(*table.values()))

    def finish(self, sim_time_s: float, n_events: int, events: list[Event] | None,
               extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """Write the tables, the optional event log and ``summary.json``; return the summary.

        ``extra`` adds fields (e.g. the samplers' query counts, kept apart from training).
        ``summary.json`` is strict JSON: a NaN or infinite number is written as null.
        Raises RuntimeError if a run invariant is violated (a simulator bug).
        """
        self.flush(force=True)
        if events is not None:
            write_csv(self.out_dir / "events.csv", *self.bits.events(events))
        summary = {
            "final_accuracy": self._final_accuracy,
            "best_accuracy": self._best_accuracy,
            "time_to_target_s": self._time_to_target_s,
            "rounds": self.n_rounds,
            "sim_time_s": sim_time_s,
            "wall_time_s": round(time.perf_counter() - self._started_s, 3),
            "trained_updates": self.trained_total,
            "aggregated_updates": self.aggregated_total,
            "events": n_events,
            **(extra or {}),
        }
        table = self.client_table
        if table is not None:
            summary["energy_j"] = float(sum(table["energy_j"]))
            summary["battery_deaths"] = int(sum(table["battery_deaths"]))
        write_json(self.out_dir / "summary.json", summary)
        problems = list(self.problems)
        if table is not None:  # the rounds' energy, as one total (check_energy sums it)
            problems += check_energy([_EnergyTotal(self.energy_total_j)], table)
        if problems:
            raise RuntimeError("simulator invariant violated:\n" + "\n".join(problems))
        return summary


class _EnergyTotal:
    """Stands for all rounds in :func:`check_energy`, which reads only ``energy_j``."""

    def __init__(self, energy_j: float) -> None:
        self.energy_j = energy_j


def _records(outcome: RoundOutcome) -> int:
    return 1 + len(outcome.received) + len(outcome.missing) + len(outcome.late_received)


def tier_row(outcome: RoundOutcome) -> tuple[str, int, int, float]:
    """The :data:`TIER_COLUMNS` values of a hierarchical round."""
    tier = outcome.tier
    if tier is None:
        raise ValueError(f"round {outcome.round} has no tier record in a hierarchical run")
    return tier.tier, len(tier.edges_up), len(tier.edges_down), tier.t_edge_close_s
