"""A campaign index's rows, decoded and checked before anything uses them.

The index is a file in the user's folder and may be damaged or edited: each column is
checked for its type, and each run's folder must be the one its run id and grid values
build (a readable name, a direct child of the campaign folder, perhaps with a ``_N``
suffix that a name collision added). A row that disagrees is refused as a whole, before
any run folder is touched: a stored folder name is never trusted as a path.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simfl.campaign.grid import MAX_FOLDER_CHARS, folder_name, short_keys
from simfl.core.errors import SimflError, echo

STATUSES = ("pending", "running", "done", "failed")
#: a run id: the first 16 hex digits of its scenario's hash
RUN_ID = re.compile(r"[0-9a-f]{16}")
#: the suffixes a name collision may add to a run's folder (``_2``, ``_3``...)
SUFFIX = re.compile(r"(_[0-9]{1,6})*")
#: the longest folder name an index may hold (a built name and a few suffixes)
MAX_STORED_CHARS = MAX_FOLDER_CHARS + 40


class CampaignError(SimflError):
    """A campaign folder or its index is missing, unreadable or in use."""


@dataclass(frozen=True)
class Row:
    """One run of the index, checked: ``folder`` is a safe name inside the campaign."""

    id: str
    folder: str
    params: dict[str, Any]
    scenario: dict[str, Any]
    status: str
    error: str | None
    wall_time_s: float | None
    summary: dict[str, Any] | None
    attempts: int


def built_folders(id: str, params: dict[str, Any]) -> tuple[str, ...]:
    """The folder names a run's id and grid values build: the readable one, the one
    ending in ``@id`` that two values reading the same once sanitised got, and those
    two with tables written as JSON (the names of earlier releases)."""
    keys = [k for k in params if k != "seed"]
    names = []
    for as_json in (False, True):
        name = folder_name(params, short_keys(keys), id, tables_as_json=as_json)
        names += [name, f"{name[:MAX_FOLDER_CHARS - 17]}@{id}"]
    return tuple(dict.fromkeys(names))


def agrees(folder: str, id: str, params: dict[str, Any]) -> bool:
    """Whether ``folder`` is a name built for run ``id``, with collision suffixes."""
    return len(folder) <= MAX_STORED_CHARS and any(
        folder.startswith(built) and SUFFIX.fullmatch(folder[len(built):])
        for built in built_folders(id, params))


def base_folder(folder: str, id: str, params: dict[str, Any]) -> str:
    """The built name that ``folder`` (which :func:`agrees`) starts with, without the
    collision suffixes."""
    return max((b for b in built_folders(id, params) if folder.startswith(b)), key=len,
               default=folder)


class _Bad(Exception):
    def __init__(self, column: str, value: Any, allowed: str) -> None:
        super().__init__(f"{column} = {echo(value)} is not {allowed}")


def _json(column: str, text: Any, kind: type, optional: bool = False) -> Any:
    if text is None and optional:
        return None
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except (ValueError, RecursionError):
        raise _Bad(column, text, "JSON") from None
    if not isinstance(value, kind):
        raise _Bad(column, text, f"a JSON {'object' if kind is dict else kind.__name__}")
    return value


def decode(path: Path, raw: tuple[Any, ...]) -> Row:
    """The row ``raw`` (the index's columns in :class:`Row`'s order), checked; a
    :class:`CampaignError` naming the run, the column and its value otherwise."""
    id = raw[0]
    try:
        if not isinstance(id, str) or not RUN_ID.fullmatch(id):
            raise _Bad("id", id, "a run id of 16 hex digits")
        params = _json("params", raw[2], dict)
        seed = params.get("seed")
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise _Bad("params", raw[2], "grid values with a non-negative integer seed")
        if not isinstance(raw[1], str) or not agrees(raw[1], id, params):
            raise _Bad("folder", raw[1], f"the folder its run id and grid values build "
                       f"({built_folders(id, params)[0]!r}, perhaps with a _N suffix)")
        scenario = _json("scenario", raw[3], dict)
        if raw[4] not in STATUSES:
            raise _Bad("status", raw[4], " or ".join(STATUSES))
        if raw[5] is not None and not isinstance(raw[5], str):
            raise _Bad("error", raw[5], "text")
        if raw[6] is not None and (not isinstance(raw[6], (int, float)) or raw[6] < 0):
            raise _Bad("wall_time_s", raw[6], "a number of seconds >= 0")
        summary = _json("summary", raw[7], dict, optional=True)
        if not isinstance(raw[8], int) or raw[8] < 0:
            raise _Bad("attempts", raw[8], "a count >= 0")
    except _Bad as bad:
        raise CampaignError(f"{path}: run {echo(id)}: {bad}: the index is damaged; "
                            f"nothing was touched") from None
    return Row(id, raw[1], params, scenario, raw[4], raw[5], raw[6], summary, raw[8])
