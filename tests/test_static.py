"""The type checker and the import contracts, run as part of the test command.

Both read their configuration from setup.cfg: mypy (``[mypy]``: strict on ``simfl.core``,
``simfl.algorithms`` and the availability and trace modules of ``simfl.sim``, default
checks with listed error codes left out elsewhere) and import-linter
(``[importlinter]``: the layers, core without SimPy or PyTorch, sim without PyTorch).
Each test fails with the tool's own report. Both tools come with the ``test`` extra.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _installed(module: str) -> None:
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
    assert done.returncode == 0, (
        f"{module} is not installed in {sys.executable}'s environment: "
        "pip install -e '.[test]'")


def _run(command: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "TERM": "dumb"}
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env,
                          timeout=600)


def test_mypy_finds_no_type_errors():
    _installed("mypy")
    done = _run([sys.executable, "-m", "mypy"])
    assert done.returncode == 0, f"mypy (config in setup.cfg):\n{done.stdout}{done.stderr}"
    assert "Success" in done.stdout


def test_import_contracts_are_kept():
    _installed("importlinter")
    done = _run([sys.executable, "-c", "import sys; from importlinter.cli import "
                 "lint_imports_command; sys.exit(lint_imports_command())", "--no-cache"])
    assert done.returncode == 0, f"lint-imports (setup.cfg):\n{done.stdout}{done.stderr}"
    assert "0 broken" in done.stdout
