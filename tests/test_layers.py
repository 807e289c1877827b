"""Imports flow one way: core <- {sim, train, algorithms, metrics} <- experiment, cli.

The import graph is read from the source (every import statement, those inside functions
included): absolute imports, relative ones (resolved against the importing module's
package) and imports of the ``simfl`` package itself (``import simfl``, ``from simfl
import register``), which run ``simfl/__init__.py`` and with it the composition root's
entry points, so no lower layer may use them. setup.cfg states the same layers for
import-linter (tests/test_static.py runs it); this file also covers what import-linter
does not see: the root package and the ``analysis/`` scripts (which read run folders and so
never import the composition root; the timing harnesses that drive whole runs live in
``benchmarks/``).
"""

import ast
import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "simfl"
PEERS = ("sim", "train", "algorithms", "metrics")
#: what ``import simfl`` / ``from simfl import name`` reaches: the package's __init__
PACKAGE_ROOT = "<simfl/__init__>"
#: analysis scripts read run folders: simfl.core and simfl.metrics only, without exception
#: (harnesses that drive whole runs belong in benchmarks/)
ANALYSIS_MAY_IMPORT = {"core", "metrics"}
ANALYSIS_SCRIPTS = sorted((ROOT / "analysis").rglob("*.py"))


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
    # relative imports resolve inside analysis/ (``analysis.reproduction...``), whatever the
    # name of the folder that holds the repository (a clone named ``simfl`` included)
    return {layer_of(m) for m in imported_simfl_modules(path.read_text(), path,
                                                        ROOT / "analysis")}


@pytest.mark.parametrize("path", ANALYSIS_SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_analysis_reads_runs_without_the_composition_root(path):
    assert analysis_imports(path) <= ANALYSIS_MAY_IMPORT


def test_analysis_scripts_are_checked():
    """The rule above runs over every script in analysis/ and the packages beside them (an
    empty glob checks nothing)."""
    assert ANALYSIS_SCRIPTS, "analysis/ holds no script"
    assert any(p.parent != ROOT / "analysis" for p in ANALYSIS_SCRIPTS), \
        "the modules of analysis/'s packages are not checked"


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
    """Every kind of every point found through the registry names its implementation
    (the points implemented by their config classes' own methods have none to name)."""
    import simfl.algorithms.compression  # noqa: F401  (each names its kinds' implementations)
    import simfl.algorithms.policies  # noqa: F401
    import simfl.algorithms.server_optimizers  # noqa: F401
    import simfl.sim  # noqa: F401
    import simfl.sim.availability.models  # noqa: F401
    import simfl.sim.mac.band_split  # noqa: F401
    import simfl.sim.radio.fading  # noqa: F401
    import simfl.sim.radio.mobility  # noqa: F401
    import simfl.train.datasets  # noqa: F401
    import simfl.train.models  # noqa: F401
    import simfl.train.partition  # noqa: F401
    import simfl.train.rules  # noqa: F401
    from simfl.core.registry import REGISTRIES, has_implementation
    from simfl.plugins import CONFIG_IMPLEMENTED

    points = [point for point in REGISTRIES if point not in CONFIG_IMPLEMENTED]
    assert len(points) == 19, sorted(points)
    for point in points:
        for entry in REGISTRIES[point]:
            assert has_implementation(entry.obj), f"{point}: {entry.name} has no implementation"


def _module_sizes():
    """benchmarks/module_sizes.py (a script, not a package), loaded from its file."""
    spec = importlib.util.spec_from_file_location("module_sizes",
                                                  ROOT / "benchmarks" / "module_sizes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SIZES = _module_sizes()


def test_no_module_or_class_over_the_size_limits():
    """Sizes are a guide: past the warning sizes a module is reported (a pytest warning),
    only past the limits does the suite fail."""
    over = SIZES.offenders()
    assert not over, (f"over {SIZES.MODULE_LIMIT} lines (module) or {SIZES.CLASS_LIMIT} "
                      f"(class): split by concept: {sorted(over)}")
    worth_a_look = SIZES.offenders(module_limit=SIZES.MODULE_WARN, class_limit=SIZES.CLASS_WARN)
    if worth_a_look:
        warnings.warn(f"over {SIZES.MODULE_WARN} lines (module) or {SIZES.CLASS_WARN} (class), "
                      f"worth a look: {sorted(worth_a_look)}")


def test_size_rule_covers_the_scripts_beside_the_package():
    """analysis/, benchmarks/, studies/ and scenarios/ are held to the same sizes."""
    names = set(SIZES.scanned_modules())
    assert {"analysis.report", "analysis.reproduction.verdicts", "benchmarks.bench",
            "benchmarks.comparison.cli", "studies.run_all", "simfl.core.errors"} <= names


def test_size_rule_counts_module_and_class_lines(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    body = "    x = 1\n"
    (package / "sub" / "big.py").write_text("import os\n" * (SIZES.MODULE_LIMIT + 1))
    (package / "sub" / "edge.py").write_text("x = 1\n" * SIZES.MODULE_LIMIT)
    (package / "classes.py").write_text(
        "@decorated\nclass Long:\n" + body * (SIZES.CLASS_LIMIT - 1)  # CLASS_LIMIT + 1 lines
        + "class Short:\n" + body * (SIZES.CLASS_LIMIT - 1)  # CLASS_LIMIT lines
        + "def f():\n    class Inner:\n" + "        y = 2\n" * SIZES.CLASS_LIMIT)  # + 1
    assert SIZES.offenders(package) == {"pkg.sub.big", "pkg.classes", "pkg.classes:Long",
                                        "pkg.classes:f.<locals>.Inner"}
    assert "pkg.sub.edge" in SIZES.offenders(package, module_limit=SIZES.MODULE_WARN)


def test_package_graph_follows_every_form_of_import(tmp_path):
    package = tmp_path / "simfl"
    for sub in ("core", "sim", "metrics"):
        (package / sub).mkdir(parents=True)
        (package / sub / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "sim" / "a.py").write_text("from ..core import x\n")
    (package / "metrics" / "b.py").write_text("def f():\n    import simfl.sim.a\n")
    (package / "core" / "x.py").write_text("from . import y\n")
    (package / "core" / "y.py").write_text("")
    graph = SIZES.package_graph(package)
    assert graph == {"simfl": set(), "simfl.core": set(), "simfl.sim": {"simfl.core"},
                     "simfl.metrics": {"simfl.sim"}}


def _defined_names(module_file: Path) -> set[str]:
    """The names a module itself binds at top level (functions, classes, assignments)."""
    names = set()
    for node in ast.walk(ast.parse(module_file.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def test_inside_the_simulation_each_name_comes_from_the_module_that_defines_it():
    """No re-exports inside simfl.sim: ``from simfl.sim.X import name`` names a module of
    X or something X itself defines, so the layout shows where each concept lives."""
    wrong = []
    for path in sorted((PACKAGE / "sim").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.module
                    and node.module.startswith("simfl.sim")):
                continue
            folder = ROOT.joinpath(*node.module.split("."))
            source = folder.with_suffix(".py") if folder.with_suffix(".py").exists() \
                else folder / "__init__.py"
            for alias in node.names:
                is_module = (folder / f"{alias.name}.py").exists() or (folder / alias.name).is_dir()
                if not is_module and alias.name not in _defined_names(source):
                    wrong.append(f"{path.relative_to(ROOT)}: {alias.name} from {node.module}")
    assert not wrong, wrong


def test_the_simulation_subpackages_import_each_other_without_cycles():
    graph = SIZES.package_graph(within="simfl.sim")
    assert {"simfl.sim.mac", "simfl.sim.links", "simfl.sim.energy", "simfl.sim.rounds",
            "simfl.sim.availability", "simfl.sim.traces"} <= set(graph)
    done: set[str] = set()

    def visit(node: str, path: tuple[str, ...]) -> None:
        assert node not in path, f"import cycle: {' -> '.join(path + (node,))}"
        if node not in done:
            for target in graph.get(node, ()):
                visit(target, path + (node,))
            done.add(node)

    for node in graph:
        visit(node, ())
