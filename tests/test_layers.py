"""Imports flow one way: core <- {sim, train, algorithms, metrics} <- experiment, cli.

The import graph is read from the source (every import statement, those inside functions
included): absolute imports, relative ones (resolved against the importing module's
package) and imports of the ``simfl`` package itself (``import simfl``, ``from simfl
import register``), which run ``simfl/__init__.py`` and with it the composition root's
entry points, so no lower layer may use them. setup.cfg states the same layers for
import-linter (tests/test_static.py runs it); this file also covers what import-linter
does not see: the root package and the ``analysis/`` scripts.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "simfl"
PEERS = ("sim", "train", "algorithms", "metrics")
#: what ``import simfl`` / ``from simfl import name`` reaches: the package's __init__
PACKAGE_ROOT = "<simfl/__init__>"
#: analysis scripts read run folders: simfl.core and simfl.metrics only. The benchmark
#: harnesses (analysis/bench*.py) drive whole runs and are the stated exception.
ANALYSIS_MAY_IMPORT = {"core", "metrics"}
HARNESSES = "bench*.py"


def _package_of(path: Path, root: Path) -> list[str]:
    """Dotted parts of the package a module file belongs to (for ``pkg/__init__.py``,
    ``pkg`` itself), ``root`` being the top package's folder."""
    return list(path.relative_to(root.parent).parts[:-1])


def _is_submodule(name: str) -> bool:
    return (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file()


def imported_simfl_modules(source: str, path: Path, root: Path = PACKAGE) -> set[str]:
    """Absolute names of the simfl modules that ``source`` (the file at ``path``) imports."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = _package_of(path, root)
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module == "simfl":
                found.update(f"simfl.{a.name}" if _is_submodule(a.name) else "simfl"
                             for a in node.names)
            elif node.level and not node.module:
                found.update(f"{module}.{a.name}" for a in node.names)
            else:
                found.add(module)
    return {m for m in found if m == "simfl" or m.startswith("simfl.")}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else PACKAGE_ROOT


def imported_simfl_layers(layer):
    found = set()
    for path in (PACKAGE / layer).rglob("*.py"):
        found |= {layer_of(m) for m in imported_simfl_modules(path.read_text(), path)}
    return found


@pytest.mark.parametrize("layer", PEERS)
def test_peer_layers_import_only_core(layer):
    assert imported_simfl_layers(layer) <= {"core", layer}


def test_core_imports_no_other_layer():
    assert imported_simfl_layers("core") <= {"core"}


@pytest.mark.parametrize("source, where, expected", [
    ("import simfl", "sim/x.py", {PACKAGE_ROOT}),
    ("from simfl import register", "core/x.py", {PACKAGE_ROOT}),
    ("from simfl import experiment", "metrics/x.py", {"experiment"}),
    ("from .. import experiment", "sim/x.py", {"experiment"}),
    ("from ..train.models import build_model", "sim/x.py", {"train"}),
    ("from . import channel", "sim/x.py", {"sim"}),
    ("from .config import node", "core/__init__.py", {"core"}),
    ("from ... import cli", "core/config/x.py", {"cli"}),
    ("def f():\n    import simfl.experiment", "core/x.py", {"experiment"}),
])
def test_every_form_of_import_is_seen(source, where, expected):
    """The holes a name-only check leaves: bare, relative and function-level imports."""
    path = PACKAGE / where
    assert {layer_of(m) for m in imported_simfl_modules(source, path)} == expected


def analysis_imports(path: Path) -> set[str]:
    return {layer_of(m) for m in imported_simfl_modules(path.read_text(), path, ROOT)}


@pytest.mark.parametrize("path", sorted(p for p in (ROOT / "analysis").glob("*.py")
                                        if not p.match(HARNESSES)), ids=lambda p: p.name)
def test_analysis_reads_runs_without_the_composition_root(path):
    assert analysis_imports(path) <= ANALYSIS_MAY_IMPORT


def test_analysis_rule_catches_the_composition_root(tmp_path):
    script = tmp_path / "analysis" / "report.py"
    script.parent.mkdir()
    script.write_text("import simfl\nfrom simfl.experiment import run_scenario\n")
    assert not analysis_imports(script) <= ANALYSIS_MAY_IMPORT


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
