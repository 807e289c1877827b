"""Turns round outcomes and evaluations into the run directory's tables and summary."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Sequence

from simfl.core.records import Event, RoundOutcome
from simfl.metrics.invariants import check_energy, check_rounds
from simfl.metrics.rundir import (EVAL_COLUMNS, EVENT_COLUMNS, ROUND_COLUMNS, csv_text,
                                  write_atomic, write_json)


class RunRecorder:
    """Collects one run's records and keeps its directory valid while it runs.

    Tables are rewritten atomically at most every ``flush_every_s`` seconds of wall
    time and at the end, so an interrupted run leaves complete files.
    """

    def __init__(self, out_dir: Path, config: dict[str, Any], target_accuracy: float | None,
                 started_s: float, flush_every_s: float = 1.0,
                 eval_extra: tuple[str, ...] = (), late: bool = False) -> None:
        self.out_dir = out_dir
        self.late = late  # the aggregator asked for late uploads: rounds.csv counts them
        self.round_columns = ROUND_COLUMNS + (("n_late_stored",) if late else ())
        self.eval_columns = EVAL_COLUMNS + eval_extra  # extra columns of evals.csv
        self.target_accuracy = target_accuracy
        self.flush_every_s = flush_every_s
        self.outcomes: list[RoundOutcome] = []
        self.trained: list[int] = []
        self.aggregated: list[int] = []
        self.client_table: dict[str, Sequence[Any]] | None = None  # see clients()
        self.round_rows: list[tuple] = []
        self.eval_rows: list[tuple] = []
        self._last_flush = 0.0
        self._started_s = started_s  # time.perf_counter() when the run began
        write_json(out_dir / "config.json", config)

    def round(self, outcome: RoundOutcome, trained: int, aggregated: int,
              late_stored: int = 0) -> None:
        """Record a round; ``trained`` and ``aggregated`` include the ``late_stored``
        late uploads (``outcome.late_received``) that were trained and aggregated."""
        self.outcomes.append(outcome)
        self.trained.append(trained)
        self.aggregated.append(aggregated)
        n = outcome.n_missing
        self.round_rows.append((
            outcome.round, outcome.t_open_s, outcome.t_close_s, outcome.n_available,
            len(outcome.selected), len(outcome.received), n("late"), n("erased"), n("collided"),
            n("battery"), n("offline"), outcome.retries, outcome.energy_j, trained, aggregated,
            *((late_stored,) if self.late else ())))
        self.flush()

    def evaluation(self, t_s: float, round: int, accuracy: float, loss: float,
                   *extra: Any) -> None:
        self.eval_rows.append((t_s, round, accuracy, loss, *extra))

    def flush(self, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self._last_flush < self.flush_every_s:
            return
        self._last_flush = now
        write_atomic(self.out_dir / "rounds.csv", csv_text(self.round_columns, self.round_rows))
        write_atomic(self.out_dir / "evals.csv", csv_text(self.eval_columns, self.eval_rows))

    def clients(self, table: dict[str, Sequence[Any]]) -> None:
        """Write ``clients.csv``: per-client energy records (columns = the table's keys,
        ``client`` and ``energy_j`` first; battery columns when batteries are finite)."""
        self.client_table = table
        write_atomic(self.out_dir / "clients.csv", csv_text(list(table), zip(*table.values())))

    def finish(self, sim_time_s: float, n_events: int, events: list[Event] | None,
               extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """Write the tables, the optional event log and ``summary.json``; return the summary.

        ``extra`` adds fields (e.g. the samplers' query counts, kept apart from training).
        Raises RuntimeError if a run invariant is violated (a simulator bug).
        """
        self.flush(force=True)
        if events is not None:
            rows = ((e.t_s, e.kind, e.round, e.client, e.detail) for e in events)
            write_atomic(self.out_dir / "events.csv", csv_text(EVENT_COLUMNS, rows))
        accuracies = [row[2] for row in self.eval_rows]
        reached = [row[0] for row in self.eval_rows
                   if self.target_accuracy is not None and row[2] >= self.target_accuracy]
        summary = {
            "final_accuracy": accuracies[-1] if accuracies else None,
            "best_accuracy": max(accuracies) if accuracies else None,
            "time_to_target_s": reached[0] if reached else None,
            "rounds": len(self.outcomes),
            "sim_time_s": sim_time_s,
            "wall_time_s": round(time.perf_counter() - self._started_s, 3),
            "trained_updates": sum(self.trained),
            "aggregated_updates": sum(self.aggregated),
            "events": n_events,
            **(extra or {}),
        }
        table = self.client_table
        if table is not None:
            summary["energy_j"] = float(sum(table["energy_j"]))
            summary["battery_deaths"] = int(sum(table["battery_deaths"]))
        write_json(self.out_dir / "summary.json", summary)
        problems = check_rounds(self.outcomes, self.trained, self.aggregated, self.late)
        if table is not None:
            problems += check_energy(self.outcomes, table)
        if problems:
            raise RuntimeError("simulator invariant violated:\n" + "\n".join(problems))
        return summary


def load_summary(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text())
