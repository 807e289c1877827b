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
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from dataclasses import dataclass
from pathlib import Path

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


def _bad(where: str, line: int, text: str, allowed: str) -> ConfigError:
    return ConfigError(FIELD, f"{where} line {line}: {text.strip()!r}", allowed)


#: ``{client: [(start_s, end_s, where the interval came from), ...]}``
Rows = dict[int, list[tuple[float, float, str]]]


def build_trace(rows: Rows, period_s: dict[int, float] | float | None, where: str) -> TraceData:
    """Sort, check and merge per-client intervals into a trace."""
    ids = sorted(rows)
    if not ids or not any(rows.values()):
        raise ConfigError(FIELD, where, "a trace with at least one on interval")
    starts, ends, offsets = [], [], [0]
    for cid in ids:
        last_end, last_label = -np.inf, ""
        for start, end, label in sorted(rows[cid]):
            if start < last_end:
                raise ConfigError(FIELD, f"{where} {label}", f"intervals of client {cid} that do "
                                  f"not overlap (this one starts before the one of {last_label} "
                                  "ends)")
            if start == last_end:
                ends[-1] = end
            else:
                starts.append(start)
                ends.append(end)
            last_end, last_label = end, label
        offsets.append(len(starts))
    starts_a, ends_a = np.asarray(starts, dtype=float), np.asarray(ends, dtype=float)
    offsets_a = np.asarray(offsets, dtype=np.int64)
    if isinstance(period_s, dict):
        period = np.array([period_s[c] for c in ids], dtype=float)
    else:
        period = np.full(len(ids), period_s if period_s is not None else ends_a.max())
    tail = ends_a[np.maximum(offsets_a[1:] - 1, 0)]
    too_long = np.flatnonzero((offsets_a[1:] > offsets_a[:-1]) & (tail > period))
    if too_long.size:
        k = int(too_long[0])
        raise ConfigError("population.availability.period_s", float(period[k]),
                          f"at least {tail[k]} s, the end of client {ids[k]}'s last interval")
    return TraceData(np.asarray(ids, dtype=np.int64), starts_a, ends_a, offsets_a, period)


def read_csv(path: str | Path, period_s: float | None = None) -> TraceData:
    """Read a simfl trace CSV (module docstring)."""
    text = _read_text(path)
    rows: Rows = {}
    header_seen = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split(",")]
        if not header_seen:
            if fields != HEADER:
                raise _bad(str(path), number, line, "the header line client,start_s,end_s")
            header_seen = True
            continue
        allowed = "a row client,start_s,end_s: an integer id >= 0 and 0 <= start_s < end_s"
        if len(fields) != 3:
            raise _bad(str(path), number, line, allowed)
        try:
            cid, start, end = int(fields[0]), float(fields[1]), float(fields[2])
        except ValueError:
            raise _bad(str(path), number, line, allowed) from None
        if cid < 0 or not (0.0 <= start < end < np.inf):
            raise _bad(str(path), number, line, allowed)
        rows.setdefault(cid, []).append((start, end, f"line {number}"))
    if not header_seen:
        raise ConfigError(FIELD, str(path), "a CSV with the header line client,start_s,end_s")
    return build_trace(rows, period_s, str(path))


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
    rows: Rows = {}
    for cid, device in enumerate(devices):
        messages = device.get("messages", "") if isinstance(device, dict) else None
        if messages is None:
            raise ConfigError(FIELD, f"{where} device {cid}", "an object with a 'messages' field")
        lines = messages.splitlines() if isinstance(messages, str) else list(messages)
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
                raise ConfigError(FIELD, f"{where} device {cid} message {number}: {line!r}",
                                  "'YYYY-MM-DD HH:MM:SS<TAB>state'") from None
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


def _fedscale_entry(key: object, entry: object, where: str, label: str) -> tuple[int, list, float]:
    try:
        cid = int(key)  # type: ignore[arg-type]
        active = [float(a) for a in entry["active"]]  # type: ignore[index]
        inactive = [float(a) for a in entry["inactive"]]  # type: ignore[index]
        period_s = float(entry["finish_time"])  # type: ignore[index]
    except (KeyError, TypeError, ValueError):
        raise ConfigError(FIELD, f"{where} {label}", "an integer client id with numeric "
                          "'active' and 'inactive' lists and a 'finish_time'") from None
    if len(active) != len(inactive) or any(not 0 <= a < b for a, b in zip(active, inactive)):
        raise ConfigError(FIELD, f"{where} {label}", "'active' and 'inactive' lists of equal "
                          "length with 0 <= active[i] < inactive[i]")
    return cid, [(a, b, label) for a, b in zip(active, inactive)], period_s


def from_fedscale(clients: dict, where: str = "FedScale trace") -> TraceData:
    """Intervals [active[i], inactive[i]) of FedScale behaviour lists, period finish_time."""
    if not isinstance(clients, dict):
        raise ConfigError(FIELD, where,
                          "a JSON object {client_id: {active, inactive, finish_time}}")
    rows: Rows = {}
    periods: dict[int, float] = {}
    for key, entry in clients.items():
        cid, rows[cid], periods[cid] = _fedscale_entry(key, entry, where, f"client {key}")
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
    lines = _read_text(path).splitlines()
    header = [h.strip() for h in lines[0].split(",")] if lines else []
    if header != ["client", "active", "inactive", "finish_time"]:
        raise _bad(str(path), 1, lines[0] if lines else "",
                   "the header client,active,inactive,finish_time")
    rows: Rows = {}
    periods: dict[int, float] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split(",")
        if len(fields) != 4:
            raise _bad(str(path), number, line, "four fields client,active,inactive,finish_time "
                       "with space-separated lists")
        entry = {"active": fields[1].split(), "inactive": fields[2].split(),
                 "finish_time": fields[3]}
        cid, spans, period_s = _fedscale_entry(fields[0], entry, str(path), f"line {number}")
        if cid in rows:
            raise _bad(str(path), number, line, f"one line per client (client {cid} repeats)")
        rows[cid], periods[cid] = spans, period_s
    return build_trace(rows, periods, str(path))


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
    if format == "csv":
        return read_csv(path, period_s)
    if format == "fedscale_csv":
        trace = read_fedscale_csv(path)
    else:
        try:
            data = json.loads(_read_text(path))
        except json.JSONDecodeError as err:
            raise ConfigError(FIELD, f"{path} line {err.lineno}",
                              f"valid JSON ({err.msg})") from None
        trace = from_flash(data, str(path)) if format == "flash" else from_fedscale(data, str(path))
    if period_s is not None:
        return build_trace({int(c): [(*span, f"client {c}") for span in trace.intervals(k)]
                            for k, c in enumerate(trace.ids)}, period_s, str(path))
    return trace


def _read_text(path: str | Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(FIELD, str(path), f"a readable trace file ({err.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigError(FIELD, str(path), "a UTF-8 text trace file (binary files such as "
                          "pickles are never read)") from None
