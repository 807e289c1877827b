"""FedScale behaviour lists: per client, ``active`` and ``inactive`` times and a period.

JSON ``{client_id: {"active": [...], "inactive": [...], "finish_time": T, ...}}`` or CSV
with the header ``client,active,inactive,finish_time`` and space-separated lists.
Interval i is ``[active[i], inactive[i])``; the client's availability repeats with
period ``finish_time``. Parsing and rendering only: :mod:`simfl.sim.traces.formats` reads and
writes the files.
"""

from __future__ import annotations

import csv
import io
import math
from typing import Iterator, TypedDict

from simfl.core.errors import ConfigError
from simfl.sim.traces.data import (FIELD, Intervals, Rows, TraceData, bad_line, build_trace,
                                  Located, client_id, count_column)
from simfl.sim.traces.data import number as data_number

HEADER = ["client", "active", "inactive", "finish_time"]
_ENTRY = ("an integer client id in [0, 2^63) with 'active' and 'inactive' lists of "
          "numbers and a 'finish_time'")


class FedScaleEntry(TypedDict):
    """One client's behaviour lists, as written (JSON-ready)."""

    active: list[float]
    inactive: list[float]
    finish_time: float


def entry_intervals(key: str | int, entry: object, where: str,
                    label: str) -> tuple[int, list[tuple[float, float, str]], float]:
    """(client id, labelled intervals, period) of one client's entry; one line on error."""
    try:
        cid = client_id(key)
        if not isinstance(entry, dict):
            raise TypeError(label)
        active = [_number(a) for a in _list(entry["active"])]
        inactive = [_number(a) for a in _list(entry["inactive"])]
        period_s = _number(entry["finish_time"])
    except (KeyError, TypeError, ValueError, OverflowError):
        raise ConfigError(FIELD, Located(f"{where} {label}"), _ENTRY) from None
    if len(active) != len(inactive) or any(not 0 <= a < b < math.inf
                                           for a, b in zip(active, inactive)):
        raise ConfigError(FIELD, Located(f"{where} {label}"), "'active' and 'inactive' lists of "
                          "equal length with finite times 0 <= active[i] < inactive[i]")
    if not (0.0 < period_s < math.inf):
        raise ConfigError(FIELD, Located(f"{where} {label}"), "a finite 'finish_time' > 0 "
                          "(the period of its availability)")
    return cid, [(a, b, label) for a, b in zip(active, inactive)], period_s


def _list(value: object) -> list[object]:
    if not isinstance(value, list):
        raise TypeError("not a list")
    return value


def _number(value: object) -> float:
    """A float from a JSON number or a numeric string (not a bool, list or object)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError("not a number")
    return data_number(value) if isinstance(value, str) else float(value)


def from_fedscale(clients: object, where: str = "FedScale trace") -> TraceData:
    """Intervals [active[i], inactive[i]) of FedScale behaviour lists, period finish_time.

    ``clients`` is the parsed JSON value; any other shape fails with one line.
    """
    if not isinstance(clients, dict):
        raise ConfigError(FIELD, Located(f"{where}: a JSON {type(clients).__name__}"),
                          "a JSON object {client_id: {active, inactive, finish_time}}")
    rows: Rows = {}
    periods: dict[int, float] = {}
    for index, (key, entry) in enumerate(clients.items(), start=1):
        # an entry is named by its client id, or by its position when its key is not one
        # (the key is then arbitrary text from the file, never repeated)
        try:
            label = f"client {client_id(key)}"
        except ValueError:
            label = f"entry {index}"
        cid, spans, period = entry_intervals(key, entry, where, label)
        if cid in rows:
            raise ConfigError(FIELD, Located(f"{where} {label}"),
                              f"one entry per client (client {cid} repeats)")
        rows[cid], periods[cid] = spans, period
    return build_trace(rows, periods, where)


def to_fedscale(trace: TraceData) -> dict[str, FedScaleEntry]:
    """The FedScale behaviour-list form of ``trace`` (JSON-ready)."""
    out: dict[str, FedScaleEntry] = {}
    for k, cid in enumerate(trace.ids.tolist()):
        spans = trace.intervals(k)
        out[str(cid)] = FedScaleEntry(active=[a for a, _ in spans],
                                      inactive=[b for _, b in spans],
                                      finish_time=float(trace.period_s[k]))
    return out


def csv_intervals(lines: Iterator[tuple[int, str]],
                  where: str) -> tuple[Intervals, dict[int, float]]:
    """The intervals and periods of the numbered lines of a FedScale CSV file ``where``."""
    got = Intervals()
    periods: dict[int, float] = {}
    first = next(lines, None)
    header = [h.strip() for h in first[1].split(",")] if first is not None else []
    if header != HEADER:
        raise bad_line(where, 1, first[1] if first is not None else "",
                       "the header client,active,inactive,finish_time")
    for number, line in lines:
        if not line.strip():
            continue
        fields = line.split(",")
        if len(fields) != 4:
            raise bad_line(where, number, line, "four fields client,active,inactive,"
                           "finish_time with space-separated lists", count_column(line, 4))
        entry = {"active": fields[1].split(), "inactive": fields[2].split(),
                 "finish_time": fields[3].strip()}
        cid, spans, period_s = entry_intervals(fields[0].strip(), entry, where,
                                               f"line {number}")
        if cid in periods:
            raise bad_line(where, number, line, f"one line per client (client {cid} repeats)")
        periods[cid] = period_s
        got.ids.add(cid)
        for start, end, _ in spans:
            got.add(cid, start, end, number)
    return got, periods


def csv_text(trace: TraceData) -> str:
    """``trace`` as FedScale CSV text."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    for cid, entry in to_fedscale(trace).items():
        writer.writerow([cid, " ".join(map(repr, entry["active"])),
                         " ".join(map(repr, entry["inactive"])), repr(entry["finish_time"])])
    return out.getvalue()
