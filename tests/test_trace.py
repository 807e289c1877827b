"""Trace files: only regular files are read, within a size cap, streamed; every bad file
(shape, non-finite time, huge line) gets one line that echoes little of it."""

import json
import math
import os
import signal
import tracemalloc

import numpy as np
import pytest

from simfl.cli import main as cli_main
from simfl.core.config import Trace
from simfl.core.errors import ConfigError
from simfl.sim.traces import formats as tr

FIELD = "population.availability.path"


def write(tmp_path, text, name="t.csv"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def one_line_error(call, *args, **kwargs):
    """The ConfigError ``call`` raises: one line, short, naming the path field."""
    with pytest.raises(ConfigError) as err:
        call(*args, **kwargs)
    message = str(err.value)
    assert "\n" not in message and len(message) < 400, message
    return err.value


@pytest.fixture
def alarm():
    """Fail instead of hanging if the code under test blocks for over 10 s."""
    def ring(signum, frame):
        raise TimeoutError("blocked")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("fmt", ["csv", "fedscale_csv", "fedscale_json", "flash"])
def test_a_fifo_is_refused_without_blocking(tmp_path, fmt, alarm):
    path = tmp_path / "trace.fifo"
    os.mkfifo(path)
    err = one_line_error(tr.load_trace, path, fmt)
    assert err.field == FIELD and "regular" in err.allowed


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/null", "DIR"])
def test_devices_and_directories_are_refused(tmp_path, path, alarm):
    path = str(tmp_path) if path == "DIR" else path
    assert "regular" in one_line_error(tr.load_trace, path, "csv").allowed
    assert "regular" in one_line_error(tr.load_trace, path, "fedscale_json").allowed


def test_a_missing_file_is_one_line(tmp_path):
    assert "readable" in one_line_error(tr.load_trace, tmp_path / "nope.csv").allowed


def test_files_over_the_size_cap_are_refused(tmp_path, monkeypatch):
    path = write(tmp_path, "client,start_s,end_s\n" + "".join(f"0,{2 * i},{2 * i + 1}\n"
                                                               for i in range(40)))
    assert tr.read_csv(path).n_clients == 1
    monkeypatch.setattr(tr, "MAX_TRACE_BYTES", 100)
    err = one_line_error(tr.read_csv, path)
    assert "at most 100 bytes" in err.allowed
    assert "at most 100 bytes" in one_line_error(tr.load_trace, path, "fedscale_json").allowed


def test_a_file_that_grows_past_the_cap_while_read_is_refused(tmp_path, monkeypatch):
    path = write(tmp_path, "client,start_s,end_s\n" + "".join(f"0,{2 * i},{2 * i + 1}\n"
                                                               for i in range(40)))
    monkeypatch.setattr(tr, "MAX_TRACE_BYTES", 10_000)
    real_fstat = os.fstat

    def small(fd):  # the file claims to be small when opened, then yields more
        info = real_fstat(fd)
        return os.stat_result((info.st_mode, 0, 0, 0, 0, 0, 10) + tuple(info[7:10]))

    monkeypatch.setattr(os, "fstat", small)
    monkeypatch.setattr(tr, "MAX_TRACE_BYTES", 100)
    assert "at most 100 bytes" in one_line_error(tr.read_csv, path).allowed


def test_an_overlong_line_is_refused_and_echoed_short(tmp_path, monkeypatch):
    monkeypatch.setattr(tr, "MAX_LINE_CHARS", 1000)
    path = write(tmp_path, "client,start_s,end_s\n0,0," + "9" * 5000 + "\n")
    err = one_line_error(tr.read_csv, path)
    assert "line 2" in err.value and "at most 1000 characters" in err.allowed


def test_an_offending_line_is_echoed_at_most_about_100_characters(tmp_path):
    path = write(tmp_path, "client,start_s,end_s\n0,0,1,\"" + "x" * 20_000 + "\n")
    err = one_line_error(tr.read_csv, path)
    assert "line 2" in err.value and len(err.value) < len(path) + 140
    path = write(tmp_path, "client,active,inactive,finish_time\n" + "7" * 9000 + ",0,1,5\n",
                 "f.csv")
    assert len(one_line_error(tr.load_trace, path, "fedscale_csv").value) < len(path) + 140


@pytest.mark.parametrize("data", [[1, 2, 3], 5, None, "devices", [[1]], {"a": 3},
                                  [{"messages": [1, 2]}], [{"messages": {"x": 1}}]])
def test_wrong_flash_shapes_get_one_line(tmp_path, data):
    path = write(tmp_path, json.dumps(data), "flash.json")
    assert one_line_error(tr.load_trace, path, "flash").field == FIELD


@pytest.mark.parametrize("data", [[1, 2, 3], 5, None, "x", {"1": [1, 2]}, {"1": None},
                                  {"1": {"active": 5, "inactive": [1], "finish_time": 2}},
                                  {"1": {"active": [{}], "inactive": [1], "finish_time": 2}},
                                  {"1": {"active": [True], "inactive": [1], "finish_time": 2}},
                                  {"x": {"active": [0], "inactive": [1], "finish_time": 2}},
                                  {"1": {"active": [0], "inactive": [1], "finish_time": [2]}},
                                  {"99999999999999999999": {"active": [0], "inactive": [1],
                                                            "finish_time": 2}}])
def test_wrong_fedscale_shapes_get_one_line(tmp_path, data):
    path = write(tmp_path, json.dumps(data), "f.json")
    assert one_line_error(tr.load_trace, path, "fedscale_json").field == FIELD


@pytest.mark.parametrize("text", ["[" * 200_000 + "]" * 200_000,
                                  '{"a": ' * 100_000 + "1" + "}" * 100_000, "[" + "1" * 6000 + "]"])
def test_deep_nesting_and_huge_numbers_get_one_line(tmp_path, text):
    path = write(tmp_path, text, "deep.json")
    for fmt in ("flash", "fedscale_json"):
        assert one_line_error(tr.load_trace, path, fmt).field == FIELD


@pytest.mark.parametrize("entry", [
    {"active": [0], "inactive": [1], "finish_time": math.nan},
    {"active": [0], "inactive": [1], "finish_time": math.inf},
    {"active": [0], "inactive": [math.inf], "finish_time": 10},
    {"active": [math.nan], "inactive": [1], "finish_time": 10},
    {"active": [0], "inactive": [1], "finish_time": 0},
])
def test_fedscale_non_finite_times_are_refused(tmp_path, entry):
    path = write(tmp_path, json.dumps({"3": entry}), "f.json")  # Python's JSON writes NaN
    err = one_line_error(tr.load_trace, path, "fedscale_json")
    assert err.field == FIELD and "client 3" in err.value


@pytest.mark.parametrize("row", ["0,0,inf", "0,nan,5", "0,inf,inf", "0,0,1e400", "0,-inf,3"])
def test_csv_non_finite_times_name_their_line(tmp_path, row):
    path = write(tmp_path, f"client,start_s,end_s\n0,0,1\n{row}\n")
    assert "line 3" in one_line_error(tr.read_csv, path).value
    path = write(tmp_path, f"client,active,inactive,finish_time\n0,{row.split(',')[1]},"
                           f"{row.split(',')[2]},10\n", "f.csv")
    assert "line 2" in one_line_error(tr.load_trace, path, "fedscale_csv").value


@pytest.mark.parametrize("period", [math.inf, math.nan, -1.0, 0.0])
def test_non_finite_trace_period_is_refused(tmp_path, period):
    with pytest.raises(ConfigError, match="period_s"):
        Trace(path="x.csv", period_s=period)
    path = write(tmp_path, "client,start_s,end_s\n0,0,1\n")
    with pytest.raises(ConfigError, match="period_s"):
        tr.load_trace(path, "csv", period)


def test_a_huge_client_id_is_one_line(tmp_path):
    path = write(tmp_path, "client,start_s,end_s\n" + "9" * 30 + ",0,1\n")
    assert "line 2" in one_line_error(tr.read_csv, path).value


def test_the_cli_refuses_a_fifo_and_an_infinite_period(tmp_path, capsys, alarm):
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)
    for extra in ([f"population.availability.path={fifo}"],
                  [f"population.availability.path={write(tmp_path, 'client,start_s,end_s')}",
                   "population.availability.period_s=Infinity"]):
        args = ["run", "quickstart", "--quiet", "--timing-only", "--out", str(tmp_path / "run"),
                "--set", "population.availability.kind=trace"]
        for item in extra:
            args += ["--set", item]
        code = cli_main(args)
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and "population.availability" in err[0]


def test_csv_is_streamed_into_flat_arrays(tmp_path):
    # 50,000 rows (1.5 MB): whole-text reading with a tuple per row peaked near 15 MB
    rows = "".join(f"{c},{t * 300.0},{t * 300.0 + 100.5}\n" for c in range(250) for t in range(200))
    path = write(tmp_path, "client,start_s,end_s\n" + rows)
    tracemalloc.start()
    try:
        trace = tr.read_csv(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert trace.n_clients == 250 and len(trace.starts) == 50_000
    assert trace.intervals(3)[:2] == [(0.0, 100.5), (300.0, 400.5)]
    assert peak < 10e6, peak
    assert np.all(np.diff(trace.offsets) == 200)
