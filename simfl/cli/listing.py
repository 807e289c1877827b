"""``simfl list``: the scenarios simfl finds by name, and the registered names of each
extension point, with their summaries and the plug-ins that added them."""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

# Importing the scenario tree defines every config class, which registers each kind in
# its extension point's registry: ``simfl list`` reads REGISTRIES after this import.
import simfl.core.config  # noqa: F401
import simfl.core.records  # noqa: F401  (registers the local rules)
from simfl.core.registry import REGISTRIES, is_plugged
from simfl.plugins import warn_failed_plugins

#: ``simfl list`` topics (one per extension point), in display order
LIST_TOPICS = ("aggregators", "local_rules", "samplers", "availability", "channels", "rates",
               "macs", "schedulers", "placements", "mobility", "path_loss", "power_control", "fading",
               "radio_links",
               "datasets", "partitions", "models", "initialisers", "lr_schedules",
               "server_modes", "server_optimizers", "local_optimizers", "step_schedules",
               "compressions", "policies")
#: every ``simfl list`` topic: the scenarios, the extension points, then the sections that
#: are one model each (not a choice of kinds) and cite their source
TOPICS = ("scenarios", *LIST_TOPICS, "sections")


def summary_line(script: Path) -> str:
    """The first sentence of a scenario script's docstring, read without running it."""
    try:
        doc = ast.get_docstring(ast.parse(script.read_bytes())) or ""
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return "(unreadable script)"
    paragraph = " ".join(doc.split("\n\n")[0].split())
    return re.split(r"(?<=[.?!])\s", paragraph, maxsplit=1)[0] or "(no docstring)"


def scenario_scripts() -> list[tuple[str, Path]]:
    """The scenarios a name finds, as ``simfl run NAME`` looks for them: ./scenarios
    first, then simfl's own; a name found twice is the first."""
    from simfl.core.config.scripts import scenario_search_dirs

    found: dict[str, Path] = {}
    for folder in scenario_search_dirs():
        if folder.is_dir():
            for script in sorted(folder.glob("*.py")):
                if not script.stem.startswith("_") and script.is_file():
                    found.setdefault(script.stem, script)
    return sorted(found.items())


def _list_scenarios() -> None:
    from simfl.core.config.scripts import bundled_scenarios_dir

    print("scenarios:")
    scripts = scenario_scripts()
    width = max([16, *(len(name) for name, _ in scripts)])
    own = bundled_scenarios_dir().resolve()
    for name, script in scripts:
        where = "" if script.parent.resolve() == own else "(./scenarios) "
        print(f"  {name:<{width}} {where}{summary_line(script)}")


def sourced_sections() -> list[tuple[str, str, str]]:
    """The sections of the scenario tree that implement one published model (a class
    attribute ``paper``, as a kind has): (their paths, their summary, the source)."""
    from simfl.core.config.reference import section_paths

    found = []
    for cls, paths in section_paths().items():
        paper = str(getattr(cls, "paper", ""))
        if paper:
            found.append((", ".join(paths), _summary(_SectionEntry(cls)), paper))
    return found


class _SectionEntry:
    """A section class seen as a registry entry, for :func:`_summary`."""

    def __init__(self, cls: type) -> None:
        self.obj = cls
        self.summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""


def _list_sections() -> None:
    print("sections:")
    entries = sourced_sections()
    width = max([16, *(len(path) for path, _, _ in entries)])
    for path, summary, paper in entries:
        print(f"  {path:<{width}} {summary}  [{paper}]")


def cmd_list(args: argparse.Namespace) -> int:
    warn_failed_plugins("list", sys.stderr.write)
    topics = [args.topic] if args.topic else list(TOPICS)
    for topic in topics:
        if topic == "scenarios":
            _list_scenarios()
            continue
        if topic == "sections":
            _list_sections()
            continue
        print(f"{topic}:")
        width = max([16, *(len(entry.name) for entry in REGISTRIES[topic])])
        for entry in REGISTRIES[topic]:
            paper = f"  [{entry.paper}]" if entry.paper else ""
            plugin = (f"(plug-in: {entry.obj.__module__}) " if entry.plugin
                      else "(plug-in implementation) " if is_plugged(entry.obj) else "")
            print(f"  {entry.name:<{width}} {plugin}{_summary(entry)}{paper}")
    return 0


def _summary(entry: object) -> str:
    """A kind's one-line description: the first line of its docstring, or its whole first
    paragraph where that line stops mid-sentence."""
    from simfl.core.config.reference import description

    summary = str(getattr(entry, "summary", ""))
    obj = getattr(entry, "obj", None)
    if summary.rstrip().endswith((".", "!", "?", ")")) or not isinstance(obj, type):
        return summary
    return description(obj) or summary
