"""``simfl list``: the registered names of each extension point, with their summaries and
the plug-ins that added them."""

from __future__ import annotations

import argparse
import sys

# Importing the scenario tree defines every config class, which registers each kind in
# its extension point's registry: ``simfl list`` reads REGISTRIES after this import.
import simfl.core.config  # noqa: F401
import simfl.core.records  # noqa: F401  (registers the local rules)
from simfl.core.registry import REGISTRIES
from simfl.plugins import warn_failed_plugins

#: ``simfl list`` topics (one per extension point), in display order
LIST_TOPICS = ("aggregators", "local_rules", "samplers", "availability", "channels", "rates",
               "macs", "placements", "mobility", "path_loss", "power_control", "fading",
               "datasets", "partitions", "models", "initialisers", "lr_schedules",
               "server_modes", "server_optimizers")


def cmd_list(args: argparse.Namespace) -> int:
    warn_failed_plugins("list", sys.stderr.write)
    topics = [args.topic] if args.topic else list(LIST_TOPICS)
    for topic in topics:
        print(f"{topic}:")
        width = max([16, *(len(entry.name) for entry in REGISTRIES[topic])])
        for entry in REGISTRIES[topic]:
            paper = f"  [{entry.paper}]" if entry.paper else ""
            plugin = f"(plug-in: {entry.obj.__module__}) " if entry.plugin else ""
            print(f"  {entry.name:<{width}} {plugin}{entry.summary}{paper}")
    return 0
