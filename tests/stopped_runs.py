"""A finished run folder turned into one that stopped before its summary, for resume tests."""

import shutil
from pathlib import Path


def stopped_copy(run_dir: Path, to: Path,
                 drop: tuple[str, ...] = ("summary.json", "clients.csv")) -> Path:
    """A copy of ``run_dir`` at ``to`` as a run stopped after its last rows were written
    but before the files ``drop`` (by default ``summary.json`` and ``clients.csv``, what
    a resume starts from; a resume must write whatever is dropped again)."""
    shutil.copytree(run_dir, to)
    for name in drop:
        (to / name).unlink()
    return to
