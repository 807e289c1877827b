"""Module and class sizes in simfl/ and the scripts beside it, and which of simfl's
packages imports which.

Reads the source only (``ast``, nothing is imported). A module's size is its number of
lines; a class's size runs from its ``class`` line (or first decorator) to its last
line. Sizes are a guide, not a wall: a module should read as one idea, and one that
grows past :data:`MODULE_WARN` lines (a class past :data:`CLASS_WARN`) is listed as worth
a look; only one past :data:`MODULE_LIMIT` (a class past :data:`CLASS_LIMIT`) is an
offender. Prints both lists and the import graph between the packages (every import
statement counts, those inside functions and relative ones included). The size rule
covers the package and the script folders :data:`SCANNED` names (analysis/, benchmarks/,
studies/, scenarios/); the graph is simfl's own::

    python benchmarks/module_sizes.py            # offenders and the package graph
    python benchmarks/module_sizes.py --all      # every module's size too

tests/test_layers.py fails on any offender.
"""

from __future__ import annotations

import argparse
import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "simfl"
#: the folders the size rule covers: the package and the scripts that live beside it
SCANNED = (PACKAGE, ROOT / "analysis", ROOT / "benchmarks", ROOT / "studies", ROOT / "scenarios")
#: a module longer than this (lines) is listed as worth a look
MODULE_WARN = 300
#: a class longer than this (lines) is listed as worth a look
CLASS_WARN = 200
#: a module longer than this (lines) is an offender
MODULE_LIMIT = 500
#: a class longer than this (lines) is an offender
CLASS_LIMIT = 400


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under ``package``."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def scanned_modules(folders: tuple[Path, ...] = SCANNED) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under each of ``folders``."""
    found: dict[str, Path] = {}
    for folder in folders:
        found.update(modules(folder))
    return found


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def class_sizes(path: Path) -> dict[str, int]:
    """Qualified class name -> lines, for every class in the file (nested ones too)."""
    sizes: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                name = f"{prefix}{child.name}"
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                sizes[name] = (child.end_lineno or child.lineno) - first + 1
                visit(child, f"{name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, f"{prefix}{child.name}.<locals>.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return sizes


def offenders(*folders: Path, module_limit: int = MODULE_LIMIT,
              class_limit: int = CLASS_LIMIT) -> set[str]:
    """``module`` for each module over ``module_limit`` lines and ``module:Class`` for each
    class over ``class_limit`` lines, under ``folders`` (default: :data:`SCANNED`); with
    :data:`MODULE_WARN` and :data:`CLASS_WARN`, the ones worth a look."""
    out = set()
    for name, path in scanned_modules(folders or SCANNED).items():
        if line_count(path) > module_limit:
            out.add(name)
        out |= {f"{name}:{cls}" for cls, size in class_sizes(path).items()
                if size > class_limit}
    return out


def package_of(module: str, depth: int = 2) -> str:
    """The package a module belongs to for the graph: ``simfl.X`` for anything under
    ``simfl/X``, ``simfl`` for the root package's own ``__init__`` (``depth`` 3 gives
    ``simfl.X.Y`` for the subpackages of ``simfl.X``)."""
    parts = module.split(".")
    return ".".join(parts[:depth])


def imported(module: str, path: Path, known: set[str] | dict[str, Path]) -> set[str]:
    """The absolute names of the simfl modules (among ``known``) that ``path``, the file
    of module ``module``, imports."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[:len(base) - node.level + (1 if is_package else 0)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.add(name)
            found.update(f"{name}.{a.name}" for a in node.names)
    return {name for name in found if name in known}


def package_graph(package: Path = PACKAGE, within: str = "") -> dict[str, set[str]]:
    """Package -> the other simfl packages its modules import; with ``within`` (e.g.
    ``simfl.sim``), the subpackages of that package and the imports among them."""
    depth = within.count(".") + 2 if within else 2
    graph: dict[str, set[str]] = defaultdict(set)
    known = modules(package)
    for name, path in known.items():
        if within and not name.startswith(within + "."):
            continue
        source = package_of(name, depth)
        targets = {package_of(m, depth) for m in imported(name, path, known)}
        if within:
            targets = {t for t in targets if t.startswith(within + ".")}
        graph[source] |= targets - {source}
    return {k: graph[k] for k in sorted(graph)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--all", action="store_true", help="list every module's size")
    args = parser.parse_args()
    found = scanned_modules()
    sizes = {name: line_count(path) for name, path in found.items()}
    if args.all:
        print("modules (lines):")
        for name, size in sorted(sizes.items(), key=lambda kv: -kv[1]):
            print(f"  {size:5d}  {name}")
    for limit, what in ((MODULE_WARN, "worth a look"), (MODULE_LIMIT, "offenders")):
        print(f"modules over {limit} lines ({what}):")
        for name in sorted(n for n, size in sizes.items() if size > limit):
            print(f"  {sizes[name]:5d}  {name}")
    for limit, what in ((CLASS_WARN, "worth a look"), (CLASS_LIMIT, "offenders")):
        print(f"classes over {limit} lines ({what}):")
        for name, path in found.items():
            for cls, size in sorted(class_sizes(path).items()):
                if size > limit:
                    print(f"  {size:5d}  {name}:{cls}")
    print(f"{sum(1 for size in sizes.values() if size < 40)} modules under 40 lines")
    print(f"{len(sizes)} modules, {sum(sizes.values())} lines")
    print("imports between packages (package -> the packages it imports):")
    for source, targets in package_graph().items():
        print(f"  {source} -> {', '.join(sorted(targets)) or '(none)'}")
    print("inside simfl.sim (module or subpackage -> those it imports):")
    for source, targets in package_graph(within="simfl.sim").items():
        print(f"  {source} -> {', '.join(sorted(targets)) or '(none)'}")


if __name__ == "__main__":
    main()
