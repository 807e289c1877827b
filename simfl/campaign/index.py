"""The campaign index: an SQLite database (``index.sqlite``, WAL mode) in the campaign
folder, one row per run. Only the coordinator of a sweep writes it; workers write their
run folders only.

Columns: ``id`` (the run id), ``folder`` (its run folder, relative to the campaign
folder), ``params`` (JSON of its grid values and seed), ``scenario`` (JSON of the
resolved scenario), ``status`` (pending, running, done or failed), ``error`` (the one-line
error of a failed run), ``wall_time_s``, ``summary`` (JSON of its summary.json),
``attempts`` and ``updated_at``. The table ``grid_keys`` lists the campaign's grid keys
in the order they were first given.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterator

from simfl.campaign.rows import STATUSES, CampaignError, Row, decode

INDEX_NAME = "index.sqlite"
#: the columns of each table that the index must have
COLUMNS = {"runs": {"id", "folder", "params", "scenario", "status", "error", "wall_time_s",
                    "summary", "attempts", "updated_at"},
           "grid_keys": {"position", "key"}}

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    folder TEXT NOT NULL UNIQUE,
    params TEXT NOT NULL,
    scenario TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
    error TEXT,
    wall_time_s REAL,
    summary TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT
);
CREATE TABLE IF NOT EXISTS grid_keys (position INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
"""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class CampaignIndex:
    """Open (or create, with ``create=True``) the index of the campaign in ``folder``.

    A file that is not SQLite, a damaged page, a missing table or column: each is a
    :class:`CampaignError` (one line), here or at the first query that meets it.
    """

    def __init__(self, folder: Path, create: bool = False) -> None:
        self.path = Path(folder) / INDEX_NAME
        if not create and not self.path.is_file():
            raise CampaignError(f"{folder} is not a campaign folder: it has no {INDEX_NAME}")
        try:
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        except sqlite3.Error as err:
            raise self._unreadable(err) from None
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            if create:
                self.db.executescript(SCHEMA)
            problems = [text for (text,) in self.db.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise sqlite3.DatabaseError(f"damaged: {problems[0]}")
            for table, needed in COLUMNS.items():
                found = {r[1] for r in self.db.execute(f"PRAGMA table_info({table})")}
                if needed - found:
                    raise sqlite3.DatabaseError(f"table {table} lacks the columns "
                                                f"{', '.join(sorted(needed - found))}")
        except sqlite3.Error as err:
            self.close()
            raise self._unreadable(err) from None

    def _unreadable(self, err: sqlite3.Error) -> CampaignError:
        return CampaignError(f"{self.path}: not a readable campaign index ({err}); "
                             f"nothing was touched")

    def close(self) -> None:
        self.db.close()

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            return self.db.execute(sql, args).fetchall()
        except sqlite3.Error as err:
            raise self._unreadable(err) from None

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        except sqlite3.Error as err:
            raise self._unreadable(err) from None

    # reading ---------------------------------------------------------------------
    def rows(self) -> list[Row]:
        """Every run, checked (:func:`~simfl.campaign.rows.decode`); two runs that claim
        one folder are refused too."""
        rows = [decode(self.path, raw) for raw in self._query(
            "SELECT id, folder, params, scenario, status, error, wall_time_s, summary, "
            "attempts FROM runs ORDER BY rowid")]
        folders = [row.folder for row in rows]
        if len(set(folders)) != len(folders):
            twice = sorted({f for f in folders if folders.count(f) > 1})
            raise CampaignError(f"{self.path}: two runs claim the folder {twice[0]!r}: the "
                                f"index is damaged; nothing was touched")
        return rows

    def grid_keys(self) -> list[str]:
        keys = [k for (k,) in self._query("SELECT key FROM grid_keys ORDER BY position")]
        if not all(isinstance(k, str) for k in keys):
            raise CampaignError(f"{self.path}: a grid key is not text: the index is damaged")
        return keys

    def folders(self) -> set[str]:
        return {row.folder for row in self.rows()}

    def counts(self) -> dict[str, int]:
        found = dict(self._query("SELECT status, COUNT(*) FROM runs GROUP BY status"))
        return {s: found.get(s, 0) for s in STATUSES}

    # writing (the coordinator only) ---------------------------------------------
    def add_grid_keys(self, keys: list[str]) -> None:
        with self._write() as db:
            for key in keys:
                db.execute("INSERT OR IGNORE INTO grid_keys (position, key) VALUES "
                           "((SELECT COALESCE(MAX(position), 0) + 1 FROM grid_keys), ?)", (key,))

    def add(self, id: str, folder: str, params: dict[str, Any], scenario: dict[str, Any]) -> None:
        with self._write() as db:
            db.execute("INSERT INTO runs (id, folder, params, scenario, status, updated_at) "
                       "VALUES (?, ?, ?, ?, 'pending', ?)",
                       (id, folder, json.dumps(params), json.dumps(scenario, sort_keys=True),
                        _now()))

    def set_folder(self, id: str, folder: str) -> None:
        with self._write() as db:
            db.execute("UPDATE runs SET folder = ?, updated_at = ? WHERE id = ?",
                       (folder, _now(), id))

    def set_running(self, id: str) -> None:
        with self._write() as db:
            db.execute("UPDATE runs SET status = 'running', error = NULL, "
                       "attempts = attempts + 1, updated_at = ? WHERE id = ?", (_now(), id))

    def set_done(self, id: str, folder: str, wall_time_s: float, summary: dict[str, Any]) -> None:
        with self._write() as db:
            db.execute("UPDATE runs SET status = 'done', folder = ?, error = NULL, "
                       "wall_time_s = ?, summary = ?, updated_at = ? WHERE id = ?",
                       (folder, wall_time_s, json.dumps(summary), _now(), id))

    def set_failed(self, id: str, error: str, wall_time_s: float | None) -> None:
        with self._write() as db:
            db.execute("UPDATE runs SET status = 'failed', error = ?, wall_time_s = ?, "
                       "updated_at = ? WHERE id = ?", (error, wall_time_s, _now(), id))

    def set_pending(self, ids: list[str]) -> None:
        with self._write() as db:
            db.executemany("UPDATE runs SET status = 'pending', updated_at = ? WHERE id = ?",
                           [(_now(), id) for id in ids])
