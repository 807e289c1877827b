"""The campaign folder: one sweep at a time (an advisory lock), and the runs a sweep
(re)does, each with the run folder it writes.

A run already done is skipped; a new one gets a free folder name; a redone one keeps
its folder, resumes from its latest checkpoint when it has one, or starts over in an
empty folder; one that a killed sweep left ``running`` gets a fresh folder, since a
worker of that sweep may still be writing the old one. A run's folder is always built
inside the campaign folder from a name the checked index agrees with
(:mod:`simfl.campaign.rows`), never taken from the index as a path.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from pathlib import Path
from typing import IO, Iterator

from simfl.campaign.grid import RunSpec
from simfl.campaign.index import CampaignError, CampaignIndex, Row
from simfl.campaign.rows import base_folder

LOCK_NAME = "index.lock"


@contextlib.contextmanager
def campaign_lock(folder: Path) -> Iterator[None]:
    """One sweep at a time per campaign folder (an advisory lock, freed if we die)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    handle = _open_lock(folder / LOCK_NAME)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise CampaignError(f"{folder} is in use by another simfl sweep") from None
        yield
    finally:
        handle.close()


def _open_lock(path: Path) -> IO[str]:
    """The lock file, opened (made when missing); a link, folder or other non-file there
    is a :class:`CampaignError`."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0), 0o644)
    except OSError as err:
        if err.errno not in (errno.EISDIR, errno.ELOOP, errno.ENXIO):
            raise
        fd = -1
    if fd < 0 or not stat.S_ISREG(os.fstat(fd).st_mode):
        if fd >= 0:
            os.close(fd)
        raise CampaignError(f"{path}: the campaign's lock must be a plain file (this is a "
                            f"folder, link or device); nothing was touched")
    return os.fdopen(fd, "a+")


def run_folder(folder: Path, name: str) -> Path:
    """The run folder ``name`` inside the campaign ``folder``: always one direct child,
    whatever the name holds (names come from the checked index rows)."""
    path = folder / name
    if not name or name in (".", "..") or os.sep in name or "/" in name or path.parent != folder:
        raise CampaignError(f"{folder}: {name!r} is not a run folder name; nothing was touched")
    return path


def _free_name(folder: Path, name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... the first neither indexed nor on disk."""
    n = 1
    candidate = name
    while candidate in taken or os.path.lexists(folder / candidate):
        n += 1
        candidate = f"{name}_{n}"
    return candidate


def _prepare(index: CampaignIndex, folder: Path, row: Row, taken: set[str]) -> str:
    """The folder a redone run writes: its old one, or a fresh one when a killed sweep
    left it ``running`` (a worker of that sweep may still be writing it). A run stopped
    after a checkpoint keeps its folder (a fresh one gets a copy) and resumes from it;
    any other is started over in an empty folder."""
    old = run_folder(folder, row.folder)
    resumable = _resumable(old)
    name = row.folder
    if row.status == "running":
        name = _free_name(folder, base_folder(row.folder, row.id, row.params), taken)
        taken.add(name)
        index.set_folder(row.id, name)
        if resumable:
            try:
                shutil.copytree(old, run_folder(folder, name))
            except (OSError, shutil.Error):  # changed while copied: start over
                shutil.rmtree(run_folder(folder, name), ignore_errors=True)
    elif resumable:
        return name
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)
    return name


def _resumable(path: Path) -> bool:
    """Whether the run folder ``path`` holds an unfinished run with a checkpoint."""
    return ((path / "checkpoint" / "LATEST").is_file()
            and not (path / "summary.json").exists())


def runs_to_do(index: CampaignIndex, folder: Path, specs: list[RunSpec]) -> list[tuple[Row, str]]:
    """Add the new runs to the index; return the runs to execute, with their folders."""
    known = {row.id: row for row in index.rows()}
    taken = index.folders()
    for spec in specs:
        if spec.id not in known:
            name = _free_name(folder, spec.folder, taken)
            taken.add(name)
            index.add(spec.id, name, spec.params, spec.scenario)
    known = {row.id: row for row in index.rows()}
    redo = [known[spec.id] for spec in specs if not (
        known[spec.id].status == "done"
        and (run_folder(folder, known[spec.id].folder) / "summary.json").is_file())]
    for row in redo:  # every folder checked before any is touched
        if run_folder(folder, row.folder).is_symlink():
            raise CampaignError(f"{folder / row.folder} is a link, not a run folder: move "
                                f"it away; nothing was touched")
    return [(row, _prepare(index, folder, row, taken)) for row in redo]
