"""A finished run folder turned into one that stopped before its summary, for resume tests."""

import shutil
from pathlib import Path


def stopped_copy(run_dir: Path, to: Path) -> Path:
    """A copy of ``run_dir`` at ``to`` as a run stopped after its last rows were written
    but before ``summary.json`` and ``clients.csv`` (what a resume starts from)."""
    shutil.copytree(run_dir, to)
    for name in ("summary.json", "clients.csv"):
        (to / name).unlink()
    return to
