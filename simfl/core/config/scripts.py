"""Scenario scripts: finding one by path or bundled name, and building its scenario.

A scenario is a Python script defining ``scenario()``, which returns a
:class:`~simfl.core.config.scenario.Scenario`. The command line takes either the path
of an existing script or the bare name of one in ``./scenarios/`` or simfl's own.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import os
from pathlib import Path

from simfl.core.config.scenario import Scenario
from simfl.core.errors import SimflError


def bundled_scenarios_dir() -> Path:
    """The folder of simfl's own scenario scripts.

    Installed, they are the package ``simfl.scenarios`` (the repository's top-level
    ``scenarios/`` folder, mapped by setup.cfg), found with :mod:`importlib.resources`.
    A source checkout put on the path without installing it has no such package; its
    scenarios are then the ``scenarios/`` folder beside the ``simfl`` package.
    """
    try:
        return Path(str(importlib.resources.files("simfl.scenarios")))
    except ModuleNotFoundError:
        return Path(str(importlib.resources.files("simfl"))).parent / "scenarios"


def scenario_search_dirs() -> list[Path]:
    """Where a scenario given by name is looked for: ./scenarios, then simfl's own."""
    return [Path.cwd() / "scenarios", bundled_scenarios_dir()]


def resolve_scenario_path(name_or_path: str) -> Path:
    """An existing file, or a bare name (no path separator, no ``.py``) looked up in
    :func:`scenario_search_dirs`; a path that does not exist is an error."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    if name_or_path.endswith(".py") or {"/", os.sep, os.altsep} & set(name_or_path):
        raise SimflError(f"scenario {name_or_path!r} not found: not an existing file (a "
                         "path must name one; only a bare name such as quickstart names a "
                         "bundled one).")
    for folder in scenario_search_dirs():
        candidate = folder / f"{name_or_path}.py"
        if candidate.is_file():
            return candidate
    known = sorted({p.stem for d in scenario_search_dirs() if d.is_dir() for p in d.glob("*.py")
                    if not p.stem.startswith("_")})
    raise SimflError(f"scenario {name_or_path!r} not found: give a path to a scenario script "
                     f"or one of the names {', '.join(known) or '(none found)'}.")


def load_scenario(name_or_path: str) -> Scenario:
    """Import a scenario script and call its ``scenario()`` function; a script that
    exits meanwhile (``sys.exit``) is an error naming it, not the caller's exit."""
    path = resolve_scenario_path(name_or_path)
    spec = importlib.util.spec_from_file_location(f"simfl_scenario_{path.stem}", path)
    assert spec is not None and spec.loader is not None  # a .py path always has both
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        make = getattr(module, "scenario", None)
        if not callable(make):
            raise SimflError(f"{path} defines no scenario() returning a simfl.Scenario.")
        result = make()
    except SystemExit as stop:
        raise SimflError(f"{path}: the script exited (SystemExit({stop.code!r})) while it "
                         "was loaded or its scenario() built; a scenario script must "
                         "return a simfl.Scenario, not exit.") from None
    if not isinstance(result, Scenario):
        raise SimflError(f"{path}: scenario() returned {type(result).__name__}, not a simfl.Scenario.")
    return result
