"""The run directory: claimed atomically; whole files written atomically (a uniquely named
temporary file, then rename); the round and evaluation tables grow by appended rows."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Sequence

from simfl.core.errors import ConfigError, OutputError, SimflError

ROUND_COLUMNS = ("round", "t_open_s", "t_close_s", "n_available", "n_selected", "n_received",
                 "n_late", "n_erased", "n_collided", "n_battery", "n_offline", "retries",
                 "energy_j", "trained_updates", "aggregated_updates")
EVAL_COLUMNS = ("t_s", "round", "accuracy", "loss")
EVENT_COLUMNS = ("t_s", "kind", "round", "client", "detail")
MAC_COLUMNS = ("round", "contenders", "slots", "successes")
#: the further columns of mac.csv when the MAC counts carrier-sense slots (``csma_ca``)
CSMA_COLUMNS = ("idle_slots", "collision_slots", "channel_s", "throughput")
UPDATE_COLUMNS = ("t_s", "client", "base_version", "applied_version", "staleness", "weight",
                  "job")


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that readers see the old or the new file, never half."""
    write_rows_atomic(path, lambda handle: handle.write(text))


def write_rows_atomic(path: Path, write: Callable[[IO[str]], Any]) -> None:
    """Replace ``path`` with what ``write(handle)`` writes, atomically.

    The temporary file has a unique name next to ``path`` (two writers never share one)
    and is removed if anything fails (a full disk, a read-only folder), so no ``.tmp``
    file is left behind; the failure is re-raised as an :class:`OutputError`.
    """
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise _output_error(path, err) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(err, OSError):
            raise _output_error(path, err) from None
        raise


def append_text(path: Path, text: str) -> None:
    """Append ``text`` (whole rows) to ``path`` in one write."""
    try:
        with open(path, "a", encoding="utf-8", newline="") as handle:
            handle.write(text)
    except OSError as err:
        raise _output_error(path, err) from None


def _output_error(path: Path, err: OSError) -> OutputError:
    return OutputError(f"cannot write {path}: {err.strerror or err}")


def table_sizes(folder: Path, names: Sequence[str]) -> dict[str, int | None]:
    """The size in bytes of each appended table in ``folder`` (None: not written yet)."""
    return {name: (folder / name).stat().st_size if (folder / name).exists() else None
            for name in names}


def check_tables(folder: Path, names: Sequence[str], sizes: dict[str, int | None]) -> None:
    """``sizes`` gives a size (None: not written yet) for exactly the tables ``names``,
    and each sized table in ``folder`` is a plain file at least that long."""
    if set(sizes) != set(names):
        raise SimflError(f"the checkpoint sizes the tables {sorted(sizes)}; this run's are "
                         f"{sorted(names)}")
    for name in names:  # paths built from the run's own names, never from ``sizes``
        size, path = sizes[name], folder / name
        if size is not None and (path.is_symlink() or not path.is_file()
                                 or path.stat().st_size < size):
            raise SimflError(f"{path} is not a plain file of at least {size} bytes as at the "
                             "checkpoint: the run folder was changed since")


def cut_tables(folder: Path, names: Sequence[str], sizes: dict[str, int | None]) -> None:
    """Cut each table of ``names`` back to its size in ``sizes`` (the rows appended since
    go); one of size None is removed. Everything is checked (:func:`check_tables`) before
    the first table is cut."""
    check_tables(folder, names, sizes)
    for name in names:
        size, path = sizes[name], folder / name
        if size is None:
            path.unlink(missing_ok=True)
        else:
            os.truncate(path, size)


def csv_text(columns: Sequence[str] | None, rows: Iterable[Sequence[Any]]) -> str:
    """CSV lines of ``rows``, after a header line of ``columns`` unless it is None."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if columns is not None:
        writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue()


def write_csv(path: Path, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Write a whole table atomically, row by row (never one string of the whole table)."""
    def write(handle: IO[str]) -> None:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)

    write_rows_atomic(path, write)


def strict_json(data: Any) -> Any:
    """``data`` with every NaN or infinite float replaced by None (null): strict JSON."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: strict_json(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [strict_json(v) for v in data]
    return data


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as strict JSON (non-finite numbers become null)."""
    write_atomic(path, json.dumps(strict_json(data), indent=2, sort_keys=False,
                                  allow_nan=False) + "\n")


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


#: how many suffixes ``fresh_run_dir`` tries before it gives up
MAX_SUFFIX = 100_000


def fresh_run_dir(base: Path) -> Path:
    """Claim a new run folder: ``base`` itself if unused, else ``base_2``, ``base_3``...

    A run never overwrites another: a folder is claimed atomically by creating its
    ``config.json`` exclusively (``O_EXCL``) in it while it is still empty, so two runs
    started at once with the same name and seed get different folders. A ``base`` that
    is a file is an error naming it; a folder that cannot be created is an
    :class:`OutputError`.
    """
    base = Path(base)
    if base.name in ("", ".."):  # ".", "..", "/": the folder's own name, for base_2...
        base = Path(os.path.abspath(base))
        if base.name == "":
            raise ConfigError("--out", str(base), "a run folder below the root folder")
    if base.exists() and not base.is_dir():
        raise ConfigError("--out", str(base), "a folder, or a path where one can be made "
                          "(this is a file)")
    for n in range(1, MAX_SUFFIX + 1):
        candidate = base if n == 1 else base.with_name(f"{base.name}_{n}")
        try:
            candidate.mkdir(parents=True, exist_ok=True)
        except FileExistsError:  # a file of that name: try the next
            continue
        except OSError as err:
            raise OutputError(f"cannot create the run folder {candidate}: "
                              f"{err.strerror or err}") from None
        if _claim(candidate):
            return candidate
    raise OutputError(f"no free run folder name next to {base} ({MAX_SUFFIX} are taken)")


def _claim(folder: Path) -> bool:
    """Claim an empty ``folder`` by creating its config.json exclusively."""
    try:
        if any(folder.iterdir()):
            return False
        os.close(os.open(folder / "config.json", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        return True
    except FileExistsError:  # another run claimed it meanwhile
        return False
    except OSError as err:
        raise OutputError(f"cannot write in the run folder {folder}: {err.strerror or err}") from None


#: seconds ``git rev-parse`` may take before provenance.json goes without a commit
GIT_TIMEOUT_S = 5.0


def git_commit(folder: Path | None) -> str | None:
    """The commit checked out in the git repository holding ``folder`` (with ``+dirty``
    when tracked files changed), or None: no git, not a repository, or any failure."""
    import shutil
    import subprocess

    if folder is None or shutil.which("git") is None:
        return None
    try:
        def git(*args: str) -> "subprocess.CompletedProcess[str]":
            return subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True,
                                  timeout=GIT_TIMEOUT_S, stdin=subprocess.DEVNULL)

        head = git("rev-parse", "--verify", "HEAD")
        if head.returncode != 0:
            return None
        dirty = git("status", "--porcelain", "--untracked-files=no")
        return head.stdout.strip() + ("+dirty" if dirty.returncode == 0 and dirty.stdout.strip()
                                      else "")
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def provenance(command: Sequence[str], started_at: float, source: Path | None) -> dict[str, Any]:
    """Where a run came from: command line, start time (UTC), host, simfl version, and
    the git commit of the scenario script's repository if there is one."""
    import importlib.metadata
    import platform
    import time

    try:  # the installed distribution's version (metrics does not import the package root)
        __version__ = importlib.metadata.version("simfl")
    except importlib.metadata.PackageNotFoundError:
        __version__ = "unknown"

    source = Path(source) if source is not None else None
    return {
        "command": list(command),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started_at)),
        "host": platform.node(),
        "simfl_version": __version__,
        "scenario_file": None if source is None else str(source),
        "git_commit": git_commit(source.parent if source is not None else None),
    }


def write_provenance(out_dir: Path, command: Sequence[str], started_at: float,
                     source: Path | None = None,
                     given: Sequence[tuple[str, Any]] | None = None) -> None:
    """Write ``provenance.json`` in a run folder (never part of ``config.json``, which
    stays byte-stable between identical runs).

    ``given``: the ``(key, value)`` overrides the run was given (``--set``, a campaign's
    grid values), recorded as ``given`` for the legends of ``simfl plot``; None keeps
    the ``given`` of the folder's earlier provenance.json (a resumed run), if any.
    """
    path = Path(out_dir) / "provenance.json"
    record = provenance(command, started_at, source)
    if given is not None:
        record["given"] = [[str(key), value] for key, value in given]
    else:
        try:
            earlier = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(earlier, dict) and isinstance(earlier.get("given"), list):
                record["given"] = earlier["given"]
        except (OSError, ValueError, RecursionError):
            pass
    write_json(path, record)
