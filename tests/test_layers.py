"""Imports flow one way (DESIGN.md 3.1): core <- {sim, train, algorithms, metrics} <- experiment."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "simfl"
PEERS = ("sim", "train", "algorithms", "metrics")


def imported_simfl_layers(layer):
    found = set()
    for path in (PACKAGE / layer).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                parts = name.split(".")
                if parts[0] == "simfl" and len(parts) > 1:
                    found.add(parts[1])
    return found


@pytest.mark.parametrize("layer", PEERS)
def test_peer_layers_import_only_core(layer):
    assert imported_simfl_layers(layer) <= {"core", layer}


def test_core_imports_no_other_layer():
    assert imported_simfl_layers("core") <= {"core"}


def test_core_needs_neither_simpy_nor_torch():
    code = ("import sys, simfl.core.config, simfl.core.rng, simfl.core.records, "
            "simfl.core.protocols; bad = {'simpy', 'torch'} & set(sys.modules); "
            "assert not bad, bad")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_every_registered_kind_has_an_implementation():
    from simfl import algorithms
    from simfl.core.registry import REGISTRIES
    from simfl.sim import availability, channel

    implemented = {
        "aggregators": algorithms.AGGREGATORS, "samplers": algorithms.SAMPLERS,
        "availability": availability._MODELS, "channels": channel._LINKS,
    }
    for point, impls in implemented.items():
        for entry in REGISTRIES[point]:
            assert entry.obj in impls, f"{point}: {entry.name} has no implementation"
