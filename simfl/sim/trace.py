"""Availability traces: per-client on intervals, read from text files (never pickles).

The simfl trace CSV
-------------------
UTF-8 text; blank lines and lines starting with ``#`` are ignored; the first other
line is the header ``client,start_s,end_s``; every further line is one interval during
which a client is online::

    # two phones, one day
    client,start_s,end_s
    0,0,3600
    0,7200,10800
    1,100,86400

``client`` is a non-negative integer id (ids need not be contiguous: the K distinct ids
are taken in increasing order), ``0 <= start_s < end_s`` in seconds. A client's
intervals may come in any order but must not overlap; touching intervals are merged.
A malformed line fails with its line number.

Converters
----------
* FLASH state traces (JSON): a list of devices, or an object whose values are devices;
  each device has ``messages``, lines ``"YYYY-MM-DD HH:MM:SS<TAB>state"`` (one string
  with newlines, or a list). A device is *ready* (online) while its screen is locked,
  it is on WiFi and it is charging; states ``screen_lock``/``screen_unlock``,
  ``wifi``/``2g``..``5g``/``unknown`` and ``battery_charged_on``/``battery_charged_off``
  change those flags, other states are ignored. Every flag starts false. Times are
  seconds since 2020-01-02 00:00:00 (FLASH's origin), clipped at 0; a device still
  ready at its last message is taken offline at that message.
* FedScale behaviour lists, JSON ``{client_id: {"active": [...], "inactive": [...],
  "finish_time": T, ...}}`` or CSV with header ``client,active,inactive,finish_time``
  and space-separated lists. Interval i is ``[active[i], inactive[i])``; the client's
  availability repeats with period ``finish_time``.

Reading
-------
Only regular files are read (a directory, FIFO or device is refused before anything
blocks), at most :data:`MAX_TRACE_BYTES`; CSV formats are streamed line by line into
flat arrays (lines of at most :data:`MAX_LINE_CHARS` characters), JSON formats parsed
whole within that cap. Every time must be a finite number. An error names the file and
the line (or device, client) and echoes at most :data:`ECHO_CHARS` characters of it.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import os
import stat
from array import array
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from simfl.core.errors import ConfigError

FIELD = "population.availability.path"
HEADER = ["client", "start_s", "end_s"]
FLASH_ORIGIN = dt.datetime(2020, 1, 2)
#: FLASH state -> (flag, value); ready = all three flags
FLASH_STATES = {"screen_lock": ("locked", True), "screen_unlock": ("locked", False),
                "wifi": ("wifi", True), "2g": ("wifi", False), "3g": ("wifi", False),
                "4g": ("wifi", False), "5g": ("wifi", False), "unknown": ("wifi", False),
                "battery_charged_on": ("charging", True),
                "battery_charged_off": ("charging", False)}
#: largest trace file read (bytes); a larger one is refused
MAX_TRACE_BYTES = 1 << 30
#: longest line of a CSV trace (characters)
MAX_LINE_CHARS = 1 << 24
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


def _bad(where: str, line: int, text: str, allowed: str) -> ConfigError:
    return ConfigError(FIELD, f"{where} line {line}: {echo(text)!r}", allowed)


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
    def of_rows(cls, rows: Rows) -> "Intervals":
        out = cls()
        out.labels = []
        for cid in sorted(rows):
            for start, end, label in rows[cid]:
                out.add(cid, start, end, len(out.labels))
                out.labels.append(label)
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
    return _checked(TraceData(ids, starts_a, ends_a, offsets_a, period))


def _checked(trace: TraceData) -> TraceData:
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


def _client_id(text: str) -> int:
    """A client id from ``text``; ValueError unless an integer in [0, MAX_CLIENT_ID]."""
    cid = int(text)
    if not 0 <= cid <= MAX_CLIENT_ID:
        raise ValueError(text)
    return cid


def read_csv(path: str | Path, period_s: float | None = None) -> TraceData:
    """Read a simfl trace CSV (module docstring)."""
    got = Intervals()
    header_seen = False
    allowed = ("a row client,start_s,end_s: an integer id in [0, 2^63) and finite times "
               "0 <= start_s < end_s")
    with _lines(path) as lines:
        for number, line in lines:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = [f.strip() for f in line.split(",")]
            if not header_seen:
                if fields != HEADER:
                    raise _bad(str(path), number, line, "the header line client,start_s,end_s")
                header_seen = True
                continue
            if len(fields) != 3:
                raise _bad(str(path), number, line, allowed)
            try:
                cid, start, end = _client_id(fields[0]), float(fields[1]), float(fields[2])
            except ValueError:
                raise _bad(str(path), number, line, allowed) from None
            if not (0.0 <= start < end < math.inf):
                raise _bad(str(path), number, line, allowed)
            got.add(cid, start, end, number)
    if not header_seen:
        raise ConfigError(FIELD, str(path), "a CSV with the header line client,start_s,end_s")
    return build_trace(got, period_s, str(path))


def write_csv(trace: TraceData, path: str | Path) -> None:
    """Write ``trace`` in the simfl trace CSV format."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    for k, cid in enumerate(trace.ids.tolist()):
        for start, end in trace.intervals(k):
            writer.writerow([cid, repr(start), repr(end)])
    Path(path).write_text(out.getvalue(), encoding="utf-8")


def from_flash(devices: list | dict, where: str = "FLASH trace") -> TraceData:
    """Ready intervals (locked, WiFi, charging) of FLASH state-trace devices, ids 0..K-1."""
    if isinstance(devices, dict):
        devices = list(devices.values())
    if not isinstance(devices, list):
        raise ConfigError(FIELD, f"{where}: {echo(json.dumps(devices))}",
                          "a JSON list of devices or an object whose values are devices")
    rows: Rows = {}
    for cid, device in enumerate(devices):
        messages = device.get("messages", "") if isinstance(device, dict) else None
        if isinstance(messages, list) and all(isinstance(m, str) for m in messages):
            lines = messages
        elif isinstance(messages, str):
            lines = messages.splitlines()
        else:
            raise ConfigError(FIELD, f"{where} device {cid}", "an object with a 'messages' "
                              "field: one string of lines, or a list of strings")
        flags = {"locked": False, "wifi": False, "charging": False}
        ready_since: float | None = None
        t_s = 0.0
        rows[cid] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            stamp, _, state = line.partition("\t")
            try:
                when = dt.datetime.strptime(stamp.strip(), "%Y-%m-%d %H:%M:%S")
            except ValueError:
                raise ConfigError(FIELD, f"{where} device {cid} message {number}: "
                                  f"{echo(line)!r}", "'YYYY-MM-DD HH:MM:SS<TAB>state'") from None
            t_s = max(0.0, (when - FLASH_ORIGIN).total_seconds())
            if state.strip() in FLASH_STATES:
                flag, value = FLASH_STATES[state.strip()]
                flags[flag] = value
            ready = all(flags.values())
            if ready and ready_since is None:
                ready_since = t_s
            elif not ready and ready_since is not None:
                if t_s > ready_since:
                    rows[cid].append((ready_since, t_s, f"device {cid} message {number}"))
                ready_since = None
        if ready_since is not None and t_s > ready_since:
            rows[cid].append((ready_since, t_s, f"device {cid} end"))
    return build_trace(rows, None, where)


_FEDSCALE_ENTRY = ("an integer client id in [0, 2^63) with 'active' and 'inactive' lists of "
                   "numbers and a 'finish_time'")


def _fedscale_entry(key: object, entry: object, where: str, label: str) -> tuple[int, list, float]:
    try:
        cid = _client_id(key)  # type: ignore[arg-type]
        if not isinstance(entry, dict):
            raise TypeError(label)
        active = [_number(a) for a in _list(entry["active"])]
        inactive = [_number(a) for a in _list(entry["inactive"])]
        period_s = _number(entry["finish_time"])
    except (KeyError, TypeError, ValueError, OverflowError):
        raise ConfigError(FIELD, f"{where} {echo(label)}", _FEDSCALE_ENTRY) from None
    if len(active) != len(inactive) or any(not 0 <= a < b < math.inf
                                           for a, b in zip(active, inactive)):
        raise ConfigError(FIELD, f"{where} {echo(label)}", "'active' and 'inactive' lists of "
                          "equal length with finite times 0 <= active[i] < inactive[i]")
    if not (0.0 < period_s < math.inf):
        raise ConfigError(FIELD, f"{where} {echo(label)}", "a finite 'finish_time' > 0 (the "
                          f"period of its availability), not {period_s!r}")
    return cid, [(a, b, label) for a, b in zip(active, inactive)], period_s


def _list(value: object) -> list:
    if not isinstance(value, list):
        raise TypeError("not a list")
    return value


def _number(value: object) -> float:
    """A float from a JSON number or a numeric string (not a bool, list or object)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError("not a number")
    return float(value)


def from_fedscale(clients: dict, where: str = "FedScale trace") -> TraceData:
    """Intervals [active[i], inactive[i]) of FedScale behaviour lists, period finish_time."""
    if not isinstance(clients, dict):
        raise ConfigError(FIELD, f"{where}: {echo(json.dumps(clients))}",
                          "a JSON object {client_id: {active, inactive, finish_time}}")
    rows: Rows = {}
    periods: dict[int, float] = {}
    for key, entry in clients.items():
        cid, spans, period = _fedscale_entry(key, entry, where, f"client {key}")
        if cid in rows:
            raise ConfigError(FIELD, f"{where} client {echo(key)}",
                              f"one entry per client (client {cid} repeats)")
        rows[cid], periods[cid] = spans, period
    return build_trace(rows, periods, where)


def to_fedscale(trace: TraceData) -> dict[str, dict]:
    """The FedScale behaviour-list form of ``trace`` (JSON-ready)."""
    out = {}
    for k, cid in enumerate(trace.ids.tolist()):
        spans = trace.intervals(k)
        out[str(cid)] = {"active": [a for a, _ in spans], "inactive": [b for _, b in spans],
                         "finish_time": float(trace.period_s[k])}
    return out


def read_fedscale_csv(path: str | Path) -> TraceData:
    """Read FedScale behaviour lists from CSV (module docstring)."""
    got = Intervals()
    periods: dict[int, float] = {}
    with _lines(path) as lines:
        first = next(lines, None)
        header = [h.strip() for h in first[1].split(",")] if first is not None else []
        if header != ["client", "active", "inactive", "finish_time"]:
            raise _bad(str(path), 1, first[1] if first is not None else "",
                       "the header client,active,inactive,finish_time")
        for number, line in lines:
            if not line.strip():
                continue
            fields = line.split(",")
            if len(fields) != 4:
                raise _bad(str(path), number, line, "four fields client,active,inactive,"
                           "finish_time with space-separated lists")
            entry = {"active": fields[1].split(), "inactive": fields[2].split(),
                     "finish_time": fields[3].strip()}
            cid, spans, period_s = _fedscale_entry(fields[0].strip(), entry, str(path),
                                                   f"line {number}")
            if cid in periods:
                raise _bad(str(path), number, line, f"one line per client (client {cid} repeats)")
            periods[cid] = period_s
            got.ids.add(cid)
            for start, end, _ in spans:
                got.add(cid, start, end, number)
    return build_trace(got, periods, str(path))


def write_fedscale_csv(trace: TraceData, path: str | Path) -> None:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["client", "active", "inactive", "finish_time"])
    for cid, entry in to_fedscale(trace).items():
        writer.writerow([cid, " ".join(map(repr, entry["active"])),
                         " ".join(map(repr, entry["inactive"])), repr(entry["finish_time"])])
    Path(path).write_text(out.getvalue(), encoding="utf-8")


def load_trace(path: str | Path, format: str = "csv", period_s: float | None = None) -> TraceData:
    """Read a trace file in one of the formats of the ``trace`` availability model."""
    if period_s is not None and not (0.0 < period_s < math.inf):
        raise ConfigError("population.availability.period_s", period_s,
                          "a finite number of seconds > 0, or null")
    if format == "csv":
        return read_csv(path, period_s)
    if format == "fedscale_csv":
        trace = read_fedscale_csv(path)
    else:
        data = read_json(path)
        trace = from_flash(data, str(path)) if format == "flash" else from_fedscale(data, str(path))
    if period_s is not None:
        return _checked(TraceData(trace.ids, trace.starts, trace.ends, trace.offsets,
                                  np.full(trace.n_clients, float(period_s))))
    return trace


def read_json(path: str | Path) -> object:
    """The JSON value of the file at ``path`` (at most MAX_TRACE_BYTES), one line on error."""
    with _text(path) as text:
        raw = _decoded(path, text.read)
    try:
        return json.loads(raw)
    except json.JSONDecodeError as err:
        raise ConfigError(FIELD, f"{path} line {err.lineno}", f"valid JSON ({err.msg})") from None
    except RecursionError:
        raise ConfigError(FIELD, str(path), "JSON nested less deeply (a list of devices, or "
                          "an object of clients)") from None
    except ValueError as err:  # e.g. an integer with thousands of digits
        raise ConfigError(FIELD, str(path), f"valid JSON ({echo(err)})") from None


class _Capped(io.RawIOBase):
    """A raw file that refuses to yield more than ``limit`` bytes (a file that grows)."""

    def __init__(self, raw: io.FileIO, limit: int, path: str | Path) -> None:
        super().__init__()
        self._raw, self._limit, self._path, self._seen = raw, limit, path, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self._raw.readinto(buffer) or 0
        self._seen += n
        if self._seen > self._limit:
            raise _too_big(self._path, self._seen)
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def _too_big(path: str | Path, size: int) -> ConfigError:
    return ConfigError(FIELD, str(path), f"a trace file of at most {MAX_TRACE_BYTES} bytes "
                       f"(simfl.sim.trace.MAX_TRACE_BYTES); this one has {size} or more")


@contextmanager
def _text(path: str | Path) -> Iterator[io.TextIOWrapper]:
    """The UTF-8 text of the regular file at ``path``, opened without blocking on a FIFO
    and capped at MAX_TRACE_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise ConfigError(FIELD, str(path), f"a readable trace file ({err.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(FIELD, str(path), "a regular trace file (not a directory, FIFO, "
                              "socket or device)")
        if info.st_size > MAX_TRACE_BYTES:
            raise _too_big(path, info.st_size)
        os.set_blocking(fd, True)
        raw = io.FileIO(fd, "r", closefd=True)
    except BaseException:
        os.close(fd)
        raise
    text = io.TextIOWrapper(io.BufferedReader(_Capped(raw, MAX_TRACE_BYTES, path)),
                            encoding="utf-8")
    try:
        yield text
    finally:
        text.close()


def _decoded(path: str | Path, read: Callable[[], str]) -> str:
    try:
        return read()
    except UnicodeDecodeError:
        raise ConfigError(FIELD, str(path), "a UTF-8 text trace file (binary files such as "
                          "pickles are never read)") from None
    except OSError as err:
        raise ConfigError(FIELD, str(path), f"a readable trace file ({err.strerror})") from None


@contextmanager
def _lines(path: str | Path) -> Iterator[Iterator[tuple[int, str]]]:
    """(number, line) pairs of the file at ``path``, streamed; a line longer than
    MAX_LINE_CHARS is refused."""
    with _text(path) as text:
        def numbered() -> Iterator[tuple[int, str]]:
            number = 0
            while True:
                line = _decoded(path, lambda: text.readline(MAX_LINE_CHARS + 1))
                if not line:
                    return
                number += 1
                if len(line) > MAX_LINE_CHARS:
                    raise _bad(str(path), number, line, f"a line of at most {MAX_LINE_CHARS} "
                               "characters")
                yield number, line.rstrip("\r\n")

        yield numbered()
