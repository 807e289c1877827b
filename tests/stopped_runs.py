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


def assert_resumes_identically(scenario, tmp_path: Path, every_rounds: int, last_round: int,
                               files: tuple[str, ...],
                               drop: tuple[str, ...] = ("summary.json", "clients.csv")) -> None:
    """Run ``scenario`` plainly and with a checkpoint every ``every_rounds`` rounds (the
    latest after ``last_round``), stop the latter before ``drop`` and resume it: ``files``
    must come out byte for byte as the plain run's."""
    from simfl.core.config import apply_overrides, parse_override
    from simfl.experiment import checkpoint, resume_run, run_scenario

    plain = run_scenario(scenario, tmp_path / "plain").out_dir
    kept = run_scenario(apply_overrides(scenario, [parse_override(
        f"run.checkpoint_every_rounds={every_rounds}")]), tmp_path / "kept").out_dir
    assert checkpoint.latest(kept).name == f"round_{last_round:06d}"
    stopped = stopped_copy(kept, tmp_path / "stopped", drop=drop)
    resume_run(stopped)
    for name in files:
        assert (plain / name).read_bytes() == (stopped / name).read_bytes(), name
