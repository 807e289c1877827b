"""The campaign folder: one sweep at a time (an advisory lock), and the runs a sweep
(re)does, each with the run folder it writes.

A run already done is skipped; a new one gets a free folder name; a redone one keeps
its folder, resumes from its latest checkpoint when it has one, or starts over in an
empty folder; one that a killed sweep left ``running`` gets a fresh folder, since a
worker of that sweep may still be writing the old one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Iterator

from simfl.campaign.grid import RunSpec
from simfl.campaign.index import CampaignError, CampaignIndex, Row

LOCK_NAME = "index.lock"


@contextlib.contextmanager
def campaign_lock(folder: Path) -> Iterator[None]:
    """One sweep at a time per campaign folder (an advisory lock, freed if we die)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    handle = open(folder / LOCK_NAME, "a+")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise CampaignError(f"{folder} is in use by another simfl sweep") from None
        yield
    finally:
        handle.close()


def _owned(folder: Path, name: str) -> Path | None:
    """The run folder ``name`` of the campaign in ``folder`` when it may be removed: a
    direct child, not a link."""
    path = folder / name
    if name in ("", ".", "..") or "/" in name or os.sep in name or path.is_symlink():
        return None
    return path if path.parent == folder else None


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
    old = _owned(folder, row.folder)
    resumable = old is not None and _resumable(old)
    name = row.folder
    if row.status == "running":
        name = _free_name(folder, row.folder, taken)
        taken.add(name)
        index.set_folder(row.id, name)
        if resumable:
            assert old is not None
            try:
                shutil.copytree(old, folder / name)
            except (OSError, shutil.Error):  # changed while copied: start over
                shutil.rmtree(folder / name, ignore_errors=True)
    elif resumable:
        return name
    if old is not None and old.exists():
        shutil.rmtree(old, ignore_errors=True)
    return name


def _resumable(run_folder: Path) -> bool:
    """Whether ``run_folder`` holds an unfinished run with a checkpoint."""
    return ((run_folder / "checkpoint" / "LATEST").is_file()
            and not (run_folder / "summary.json").exists())


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
    todo = []
    for spec in specs:
        row = known[spec.id]
        if row.status == "done" and (folder / row.folder / "summary.json").is_file():
            continue
        todo.append((row, _prepare(index, folder, row, taken)))
    return todo
