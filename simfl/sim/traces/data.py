"""A trace's per-client on intervals in flat arrays, and how collected intervals become one.

Every trace format (:mod:`simfl.sim.traces.formats`) collects ``(client, start_s, end_s)``
intervals, either as :data:`Rows` (a dict per client, each interval labelled with where
it came from) or streamed into :class:`Intervals`; :func:`build_trace` sorts them,
refuses overlaps, merges touching intervals and attaches each client's period.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass

import numpy as np

from simfl.core.errors import ConfigError

FIELD = "population.availability.path"
#: characters of an offending line echoed in an error message
ECHO_CHARS = 100
#: largest client id (int64)
MAX_CLIENT_ID = 2 ** 63 - 1


@dataclass(frozen=True)
class TraceData:
    """K clients' on intervals, flattened: client k owns rows offsets[k]:offsets[k+1].

    Within a client the intervals are sorted, disjoint and not touching.
    """

    ids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    offsets: np.ndarray
    period_s: np.ndarray

    @property
    def n_clients(self) -> int:
        return len(self.ids)

    def intervals(self, k: int) -> list[tuple[float, float]]:
        rows = slice(self.offsets[k], self.offsets[k + 1])
        return list(zip(self.starts[rows].tolist(), self.ends[rows].tolist()))

    def on_fraction(self, horizon_s: float) -> float:
        """Share of client-time online over [0, horizon_s), all K clients, no repetition."""
        on = np.clip(np.minimum(self.ends, horizon_s) - self.starts, 0.0, None).sum()
        return float(on / (horizon_s * self.n_clients))


def echo(text: object) -> str:
    """``text`` stripped and cut to :data:`ECHO_CHARS` characters, for an error message."""
    text = str(text).strip()
    return text if len(text) <= ECHO_CHARS else text[:ECHO_CHARS] + "..."


def bad_line(where: str, line: int, text: str, allowed: str, column: int | None = None,
             field: str = FIELD) -> ConfigError:
    """The error for line ``line`` (and ``column``, counted from 1) of the file ``where``.

    The line's text is never repeated: a file named by mistake (a key file, the process
    environment) must not reach the terminal or a log through an error message."""
    at = f"{where} line {line}" + ("" if column is None else f", column {column}")
    return ConfigError(field, Located(at), allowed)


class Located(str):
    """A place in a file (``path line 3, column 7``), shown as it is in an error message."""

    def __repr__(self) -> str:
        return str(self)


def count_column(line: str, expected: int, sep: str = ",") -> int:
    """Where a line of the wrong number of fields goes wrong: the first field too many,
    or the end of a line that is short of fields (columns from 1)."""
    if len(line.split(sep)) > expected:
        return column_of(line, expected, sep)
    return len(line) + 1


def column_of(line: str, index: int, sep: str = ",") -> int:
    """The column (from 1) where field ``index`` of ``line``, split at ``sep``, starts."""
    parts = line.split(sep)
    start = sum(len(part) + len(sep) for part in parts[:index])
    field = parts[index] if index < len(parts) else ""
    return start + len(field) - len(field.lstrip()) + 1


#: a number as simfl's text files write it: decimal digits, an optional point and exponent
#: (no digit separators such as ``1_000``, no ``inf`` or ``nan``, no hexadecimal)
NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
INTEGER = re.compile(r"\+?[0-9]+")


def number(text: str) -> float:
    """A float from ``text`` written as :data:`NUMBER` (ValueError otherwise)."""
    if NUMBER.fullmatch(text) is None:
        raise ValueError("not a decimal number")
    return float(text)


def client_id(text: str | int) -> int:
    """A client id from ``text``; ValueError unless an integer in [0, MAX_CLIENT_ID]."""
    if isinstance(text, str) and (len(text) > 20 or INTEGER.fullmatch(text) is None):
        raise ValueError("not a decimal integer")
    cid = int(text)
    if not 0 <= cid <= MAX_CLIENT_ID:
        raise ValueError(text)
    return cid


#: ``{client: [(start_s, end_s, where the interval came from), ...]}``
Rows = dict[int, list[tuple[float, float, str]]]


class Intervals:
    """Intervals collected in flat arrays (client, start, end, and a sort key for ties)."""

    def __init__(self) -> None:
        self.clients, self.keys = array("q"), array("q")
        self.starts, self.ends = array("d"), array("d")
        self.labels: list[str] | None = None  # per interval, else "line <key>"
        self.ids: set[int] = set()  # every client, with intervals or not

    def add(self, client: int, start: float, end: float, key: int) -> None:
        self.clients.append(client)
        self.starts.append(start)
        self.ends.append(end)
        self.keys.append(key)

    def label(self, i: int) -> str:
        return self.labels[i] if self.labels is not None else f"line {self.keys[i]}"

    @classmethod
    def of_rows(cls, rows: Rows) -> Intervals:
        out = cls()
        labels: list[str] = []
        out.labels = labels
        for cid in sorted(rows):
            for start, end, label in rows[cid]:
                out.add(cid, start, end, len(labels))
                labels.append(label)
        out.ids = set(rows)
        return out


def build_trace(rows: Rows | Intervals, period_s: dict[int, float] | float | None,
                where: str) -> TraceData:
    """Sort, check and merge per-client intervals into a trace."""
    got = rows if isinstance(rows, Intervals) else Intervals.of_rows(rows)
    if not len(got.clients):
        raise ConfigError(FIELD, where, "a trace with at least one on interval")
    cids, keys = np.frombuffer(got.clients, dtype=np.int64), np.frombuffer(got.keys, dtype=np.int64)
    ids = np.union1d(cids, np.array(sorted(got.ids), dtype=np.int64))
    starts, ends = np.frombuffer(got.starts), np.frombuffer(got.ends)
    order = np.lexsort((keys, ends, starts, cids))
    c, s, e = cids[order], starts[order], ends[order]
    same = c[1:] == c[:-1]
    overlap = np.flatnonzero(same & (s[1:] < e[:-1]))
    if overlap.size:
        i = int(overlap[0])
        raise ConfigError(FIELD, f"{where} {got.label(int(order[i + 1]))}",
                          f"intervals of client {int(c[i])} that do not overlap (this one "
                          f"starts before the one of {got.label(int(order[i]))} ends)")
    begins = np.flatnonzero(np.r_[True, ~(same & (s[1:] == e[:-1]))])  # touching: merged
    lasts = np.r_[begins[1:] - 1, len(c) - 1]
    starts_a, ends_a, owners = s[begins].copy(), e[lasts].copy(), c[begins]
    offsets_a = np.r_[np.searchsorted(owners, ids), len(owners)].astype(np.int64)
    if isinstance(period_s, dict):
        period = np.array([period_s[int(cid)] for cid in ids], dtype=float)
    else:
        period = np.full(len(ids), period_s if period_s is not None else ends_a.max())
    return checked(TraceData(ids, starts_a, ends_a, offsets_a, period))


def checked(trace: TraceData) -> TraceData:
    """``trace`` if every client's period is finite, positive and covers its intervals."""
    period, offsets = trace.period_s, trace.offsets
    bad = np.flatnonzero(~np.isfinite(period) | (period <= 0))
    if bad.size:
        raise ConfigError("population.availability.period_s", float(period[bad[0]]),
                          "a finite number of seconds > 0")
    tail = trace.ends[np.maximum(offsets[1:] - 1, 0)]
    too_long = np.flatnonzero((offsets[1:] > offsets[:-1]) & (tail > period))
    if too_long.size:
        k = int(too_long[0])
        raise ConfigError("population.availability.period_s", float(period[k]),
                          f"at least {tail[k]} s, the end of client {trace.ids[k]}'s last interval")
    return trace
