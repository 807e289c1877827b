"""Code that a scenario names by import path, and when a saved scenario may name it.

A scenario may name code to run by its import path ``"package.module:function"``: a
``torch_module`` model's ``factory`` and a ``task.loss``. Written by the user in a
scenario script or on the command line, such a name is theirs to give. Read back from
a run folder's ``config.json`` or a campaign's index, it is only text in a folder that
anyone may have handed over, and importing it would run whatever that folder's author
put there. So a scenario read back from such a file names code that is imported only
when the user names the same reference again (``simfl resume --set`` or the sweep's
own scenario script and ``--set``), or says that they trust the folder
(``--trust-code``); and even a reference named again is refused when its module would
be loaded from inside the folder itself, unless the folder is trusted.

:func:`check_saved_code` is the check, made on the plain form before a
:class:`~simfl.core.config.scenario.Scenario` is built from it (building one imports
its factory).
"""

from __future__ import annotations

import importlib.machinery
import os
import re
import sys
from pathlib import Path
from typing import Any, Collection, Iterator

from simfl.core.errors import SimflError, echo

#: an import path ``package.module:name`` (the name may be dotted: ``module:Class.make``)
IMPORT_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


class UntrustedCode(SimflError):
    """A saved scenario names code the user has not named again: nothing was imported."""


def code_references(tree: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """Every ``(field, import path)`` in a scenario's plain form: each text value that
    reads as ``package.module:name``, wherever it is."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from code_references(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(tree, (list, tuple)):
        for i, value in enumerate(tree):
            yield from code_references(value, f"{prefix}[{i}]")
    elif isinstance(tree, str) and IMPORT_PATH.fullmatch(tree):
        yield prefix, tree


def named_references(tree: Any) -> set[str]:
    """The import paths a scenario the user gave names (they may be named again)."""
    return {path for _, path in code_references(tree)}


def module_origin(path: str) -> list[Path]:
    """Where the top-level package of import path ``path`` would be loaded from (its
    file, or its package folders), found without importing anything: empty when it is
    already imported or built in (nothing would be read from a folder)."""
    top = path.partition(":")[0].split(".")[0]
    if top in sys.modules or top in sys.builtin_module_names:
        return []
    try:
        spec = importlib.machinery.PathFinder.find_spec(top)
        if spec is None:  # simfl's torch_module loader tries the current folder last
            spec = importlib.machinery.PathFinder.find_spec(top, [os.getcwd()])
    except (ImportError, ValueError, OSError):
        return []
    if spec is None:
        return []
    places = [Path(p) for p in (spec.submodule_search_locations or ())]
    if spec.origin and spec.has_location:
        places.append(Path(spec.origin))
    return places


def loads_from_inside(path: str, folder: Path) -> bool:
    """Whether importing ``path``'s module would read a file inside ``folder``."""
    try:
        inside = folder.resolve()
        return any(p.resolve().is_relative_to(inside) for p in module_origin(path))
    except OSError:
        return False


def check_saved_code(tree: Any, source: str, folder: Path, named: Collection[str] = (),
                     trust: bool = False, how: str = "") -> None:
    """Refuse a saved scenario (plain form ``tree``, read from ``source``, a file of
    ``folder``) that names code the user did not name again.

    A reference is allowed when it is in ``named`` (the user's own), or every one is with
    ``trust``; without ``trust``, one whose module would be loaded from inside ``folder``
    is refused even when named. ``how`` tells the user how to name it again. Raises
    :class:`UntrustedCode`; nothing is imported either way.
    """
    for field, path in code_references(tree):
        if trust:
            continue
        if path not in named:
            raise UntrustedCode(
                f"{source} names code to run, {field} = {echo(path)}, that this command "
                f"was not given: simfl does not import code named only in a run folder or "
                f"campaign; {how or 'name it again'}, or pass --trust-code if you trust "
                f"{folder}")
        if loads_from_inside(path, folder):
            raise UntrustedCode(
                f"{field} = {echo(path)} would be imported from inside {folder}: simfl "
                f"does not run code that a run folder or campaign brings along; move the "
                f"module out of it, or pass --trust-code if you trust {folder}")
