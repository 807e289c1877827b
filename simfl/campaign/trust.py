"""The code a sweep may import: only what the user names.

A sweep's runs take their scenario from the campaign's index, and a stopped run its
scenario from its folder's ``config.json``; both are files in a folder that may have
come from anyone. Before anything runs, every code reference (a factory, a loss) those
files name for this sweep's runs must be one the sweep's own scenario and ``--set``
name (and none may load from inside the campaign folder), unless the user passes
``--trust-code`` (:mod:`simfl.core.config.code_refs`).
"""

from __future__ import annotations

import json
from pathlib import Path

from simfl.campaign.grid import RunSpec
from simfl.campaign.index import CampaignIndex
from simfl.core.config.code_refs import check_saved_code, named_references

#: how the user names code again for a sweep
HOW = "name it in the sweep's scenario or with --set"


def check_campaign_code(index: CampaignIndex, folder: Path, specs: list[RunSpec],
                        trust: bool) -> set[str]:
    """The import paths the user named (``specs``, built from their scenario and
    ``--set``), after refusing a campaign whose index or run folders name other code
    for these runs (or load it from inside ``folder``)."""
    named: set[str] = set()
    for spec in specs:
        named |= named_references(spec.scenario)
    if trust:
        return named
    ids = {spec.id for spec in specs}
    for row in index.rows():
        if row.id not in ids:
            continue
        check_saved_code(row.scenario, f"{index.path} (run {row.id})", folder, named,
                         trust, HOW)
        _check_config(folder / row.folder / "config.json", folder, named)
    return named


def _check_config(config: Path, folder: Path, named: set[str]) -> None:
    """The run folder's config.json, when it is a readable file, names only ``named``."""
    if config.is_symlink() or not config.is_file():
        return
    try:
        tree = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return  # unreadable: the worker starts that run over
    scenario = tree.get("scenario") if isinstance(tree, dict) else None
    check_saved_code(scenario, str(config), folder, named, False, HOW)
