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
whole within that cap. Every time must be a finite decimal number (``12``, ``0.5``,
``1e3``; not ``1_000``, ``inf`` or hexadecimal). An error names the file and where in it
the problem is (line and column, or device, message and entry), and never repeats the
file's text: naming a file that is not a trace by mistake shows none of its content.

Modules
-------
This module reads and writes the files and is the one to import; the pieces live in
:mod:`simfl.sim.traces.data` (the intervals, merged and checked),
:mod:`simfl.sim.traces.files` (safe reading), :mod:`simfl.sim.traces.flash` and
:mod:`simfl.sim.traces.fedscale` (the converters).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np

from simfl.core.errors import ConfigError
from simfl.sim.traces.data import (ECHO_CHARS, FIELD, MAX_CLIENT_ID, Intervals, Rows,
                                  TraceData, bad_line, build_trace, checked, client_id,
                                  column_of, count_column, echo)
from simfl.sim.traces.data import number as to_number
from simfl.sim.traces.fedscale import csv_intervals, csv_text, from_fedscale, to_fedscale
from simfl.sim.traces.files import json_value, numbered_lines
from simfl.sim.traces.flash import FLASH_ORIGIN, FLASH_STATES, from_flash

__all__ = ["ECHO_CHARS", "FIELD", "FLASH_ORIGIN", "FLASH_STATES", "HEADER", "Intervals",
           "MAX_CLIENT_ID", "MAX_LINE_CHARS", "MAX_TRACE_BYTES", "Rows", "TraceData",
           "build_trace", "echo", "from_fedscale", "from_flash", "load_trace", "read_csv",
           "read_fedscale_csv", "read_json", "to_fedscale", "write_csv", "write_fedscale_csv"]

HEADER = ["client", "start_s", "end_s"]
#: largest trace file read (bytes); a larger one is refused
MAX_TRACE_BYTES = 1 << 30
#: longest line of a CSV trace (characters)
MAX_LINE_CHARS = 1 << 24


def read_csv(path: str | Path, period_s: float | None = None) -> TraceData:
    """Read a simfl trace CSV (module docstring)."""
    got = Intervals()
    header_seen = False
    allowed = ("a row client,start_s,end_s: an integer id in [0, 2^63) and finite times "
               "0 <= start_s < end_s")
    with numbered_lines(path, MAX_TRACE_BYTES, MAX_LINE_CHARS) as lines:
        for number, line in lines:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = [f.strip() for f in line.split(",")]
            if not header_seen:
                if fields != HEADER:
                    raise bad_line(str(path), number, line, "the header line client,start_s,end_s")
                header_seen = True
                continue
            if len(fields) != 3:
                raise bad_line(str(path), number, line, allowed, count_column(line, 3))
            values = []
            for index, (text, parse) in enumerate(zip(fields, (client_id, to_number,
                                                               to_number))):
                try:
                    values.append(parse(text))
                except ValueError:
                    raise bad_line(str(path), number, line, allowed,
                                   column_of(line, index)) from None
            cid, start, end = int(values[0]), values[1], values[2]
            if not (0.0 <= start < end < math.inf):
                raise bad_line(str(path), number, line, allowed,
                               column_of(line, 1 if not 0.0 <= start < math.inf else 2))
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


def read_fedscale_csv(path: str | Path) -> TraceData:
    """Read FedScale behaviour lists from CSV (module docstring)."""
    with numbered_lines(path, MAX_TRACE_BYTES, MAX_LINE_CHARS) as lines:
        got, periods = csv_intervals(lines, str(path))
    return build_trace(got, periods, str(path))


def write_fedscale_csv(trace: TraceData, path: str | Path) -> None:
    """Write ``trace`` as FedScale behaviour lists in CSV."""
    Path(path).write_text(csv_text(trace), encoding="utf-8")


def read_json(path: str | Path) -> object:
    """The JSON value of the file at ``path`` (at most MAX_TRACE_BYTES), one line on error."""
    return json_value(path, MAX_TRACE_BYTES)


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
        return checked(TraceData(trace.ids, trace.starts, trace.ends, trace.offsets,
                                 np.full(trace.n_clients, float(period_s))))
    return trace
