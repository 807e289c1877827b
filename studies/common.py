"""What every study shares: its arms, seeds and mode, the campaign it runs through
``simfl.sweep``, the data set it falls back to, and the ``study.json`` the report reads.

A study is one campaign folder. Each *arm* (one method under comparison, in one setting)
is one sweep into that folder: the arm's overrides are applied to every run, its name
becomes the runs' ``name`` (so a run folder reads ``name=fedar-mifa,p_min=0.1,seed=2``
and the report tells arms apart from ``config.json`` alone) and the study's shared grid
and seeds multiply it. A study that is run again skips the runs already done (the
campaign's index), so an interrupted study resumes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import simfl
from studies.data import fashion_mnist

#: the file in a campaign folder that says which study made it and how
STUDY_FILE = "study.json"
#: seeds of the full and the quick mode (a study may take more: ``seeds(n)``)
FULL_SEEDS = (1, 2, 3, 4, 5)
QUICK_SEEDS = (1, 2)
#: what the quick mode's report says of its settings
#: what a study stopped with Ctrl-C (or a timeout's SIGINT) says
INTERRUPTED = ("interrupted: finished runs stay in the campaign; the same command resumes "
               "with the others")
QUICK_DIFFERS = ["quick mode: a check of the machinery on small bundled data with few rounds "
                 "and 2 seeds, not a reproduction"]


def seeds(n: int) -> tuple[int, ...]:
    """The seeds 1..n of a full study."""
    return tuple(range(1, n + 1))


@dataclass(frozen=True)
class Arm:
    """One method in one setting: its name (the runs' ``name``) and its overrides."""

    name: str
    set: dict[str, Any]
    grid: dict[str, list[Any]] = field(default_factory=dict)
    seeds: tuple[int, ...] | None = None  # default: the study's seeds


@dataclass(frozen=True)
class Study:
    """A campaign: a base scenario, the arms, the grid every arm shares, the seeds."""

    name: str
    base: simfl.Scenario
    arms: list[Arm]
    seeds: tuple[int, ...]
    mode: str
    grid: dict[str, list[Any]] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)  # settings the report prints
    after: Callable[[Path], None] | None = None  # extra files written once the runs are done

    def plan(self) -> str:
        """One line: the study's runs and, in the full mode, its expected wall time."""
        hours = self.notes.get("expected_wall_h")
        expected = f", expected about {hours:g} h of wall time with --jobs 2" if hours else ""
        return f"{self.name}: {self.n_runs} runs ({self.mode} mode){expected}"

    @property
    def n_runs(self) -> int:
        total = 0
        for arm in self.arms:
            n = len(arm.seeds or self.seeds)
            for values in {**self.grid, **arm.grid}.values():
                n *= len(values)
            total += n
        return total


def narrow(study: Study, seeds: Sequence[int] | None = None,
           arms: Sequence[str] | None = None, rounds: int | None = None) -> Study:
    """``study`` on fewer seeds or arms, or with another number of rounds per run (a
    smaller campaign, e.g. a GPU variant in a short lease); its ``differs`` says so."""
    names = [arm.name for arm in study.arms]
    unknown = sorted(set(arms or ()) - set(names))
    if unknown:
        raise simfl.SimflError(f"--arms: {', '.join(unknown)} is not an arm of {study.name} "
                               f"(expected some of {', '.join(dict.fromkeys(names))})")
    if rounds is not None and rounds < 1:
        raise simfl.SimflError(f"--rounds: {rounds} is not allowed: expected an integer >= 1")
    chosen = [arm for arm in study.arms if not arms or arm.name in arms]
    notes, differs = dict(study.notes), list(study.notes.get("differs", ()))
    if seeds or arms or rounds is not None:
        notes.pop("expected_wall_h", None)  # the estimate is the whole study's
    if rounds is not None:  # the study's own note on its rounds gives way
        chosen = [replace(arm, set={**arm.set, "run.rounds": rounds}) for arm in chosen]
        differs = [d for d in differs if not d.startswith(f"{notes.get('rounds')} rounds")]
        notes["rounds"] = rounds
        differs.append(f"{rounds} rounds per run in this campaign (--rounds)")
    if seeds:
        differs.append(f"seeds {', '.join(map(str, seeds))} only in this campaign (--seeds)")
    if arms:
        differs.append(f"arms {', '.join(arms)} only in this campaign (--arms)")
    return replace(study, arms=chosen, seeds=tuple(seeds or study.seeds),
                   notes={**notes, "differs": differs})


def image_task(quick: bool, model: str | dict[str, Any] | None, device: str,
               full_model: str | dict[str, Any] = "logreg") -> dict[str, Any]:
    """Overrides of a study on images: the quick mode keeps the bundled scenario's
    digits and logistic regression; the full mode takes Fashion-MNIST
    (:func:`studies.data.fashion_mnist`) with ``model`` (default ``full_model``; ``cnn``
    or ``lenet5`` are the papers' image models, for a GPU). The deadline is lifted:
    these studies are about availability, not stragglers."""
    out: dict[str, Any] = {"server.deadline_s": 1e6}
    if not quick:
        out["task.dataset"] = fashion_mnist()
        out["task.model"] = model or full_model
    elif model:
        out["task.model"] = model
    if device != "cpu":
        out["run.device"] = device
    return out


def describe(overrides: dict[str, Any]) -> dict[str, Any]:
    """The data set and model of a study's overrides, for the report's setting line."""
    dataset = overrides.get("task.dataset", {"kind": "digits"})
    model = overrides.get("task.model", "logreg")
    if isinstance(model, dict):
        model = f"{model['kind']} {'-'.join(str(h) for h in model.get('hidden', ()))}".strip()
    data = "fashion-mnist" if dataset["kind"] == "idx" else dataset["kind"]
    return {"data": data, "model": model}


def run_study(study: Study, out: Path, jobs: int = 1, echo: Callable[[str], None] = print) -> Path:
    """Run every arm of ``study`` into the campaign folder ``out``; write ``study.json``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    started_s = time.perf_counter()
    ran = failed = 0
    for arm in study.arms:
        grid = {"name": [f"{study.name}-{arm.name}"], **study.grid, **arm.grid}
        report = simfl.sweep(study.base, seeds=list(arm.seeds or study.seeds), grid=grid,
                             set=arm.set, out=out, jobs=jobs,
                             command=["python", "-m", f"studies.{study.name}"])
        ran += report.ran
        failed += report.failed
        echo(f"{study.name}/{arm.name}: {report.line()}")
    if study.after is not None:
        study.after(out)
    wall_time_s = time.perf_counter() - started_s
    meta = {"study": study.name, "mode": study.mode, "seeds": list(study.seeds),
            "arms": list(dict.fromkeys(arm.name for arm in study.arms)), "runs": study.n_runs, "ran_now": ran,
            "failed_now": failed, "wall_time_s": round(wall_time_s, 1), "jobs": jobs,
            "simfl": simfl.__version__, "notes": study.notes}
    (out / STUDY_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return out


def run_folders(out: Path) -> list[Path]:
    """The finished run folders of a campaign (those with summary.json), in name order."""
    return sorted(p.parent for p in Path(out).glob("*/summary.json"))


def write_client_labels(out: Path) -> None:
    """Each finished run's training-label counts per client, ``client_labels.json`` in its
    folder: ``{"n_classes": C, "counts": [[...C counts...] per client]}``. The partition
    is rebuilt from the run's resolved scenario (data and seed; nothing is trained), so
    the report can weigh per-class accuracies into per-client ones."""
    from simfl.core.config.code_refs import check_saved_code
    from simfl.experiment.build import build_context
    from simfl.train.probe import label_histograms

    for folder in run_folders(out):
        target = folder / "client_labels.json"
        if target.is_file():
            continue
        config = json.loads((folder / "config.json").read_text())
        check_saved_code(config["scenario"], str(folder / "config.json"), Path(out))
        scenario = simfl.Scenario.from_dict(config["scenario"])
        data = build_context(scenario).data
        counts = label_histograms(data)
        target.write_text(json.dumps({"n_classes": int(data.n_classes),
                                      "counts": [[int(c) for c in row] for row in counts]}))


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true",
                   help="fewer rounds, 2 seeds, the bundled data sets (minutes, for a check)")
    p.add_argument("--out", type=Path, default=None,
                   help="campaign folder (default runs/studies[_quick]/NAME)")
    add_run_options(p)
    return p


def add_run_options(p: argparse.ArgumentParser) -> None:
    """--jobs, --model, --device, --seeds, --arms and --rounds: how a study's runs are
    executed, and on how much of it."""
    p.add_argument("--jobs", type=int, default=None,
                   help="runs at a time (default: 1 with --quick, in this process; else 2)")
    p.add_argument("--model", default=None,
                   help="model of the image studies (default: logreg; e.g. cnn, lenet5)")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda", "auto"),
                   help="run.device of every run (default cpu)")
    p.add_argument("--seeds", type=int, nargs="+", default=None,
                   help="these seeds only (default: the study's)")
    p.add_argument("--arms", nargs="+", default=None, help="these arms only (default: all)")
    p.add_argument("--rounds", type=int, default=None,
                   help="rounds per run (default: the study's); the report lists the change")


def check_run_options(args: argparse.Namespace, out: Path | None) -> None:
    """Refuse (one line, exit 2) a campaign folder that is a file and ``--jobs`` below 1,
    before anything runs (``--rounds`` is checked with the study, by :func:`narrow`)."""
    if args.jobs is not None and args.jobs < 1:
        raise simfl.ConfigError("--jobs", args.jobs, "a number of runs at a time >= 1")
    if out is not None and out.exists() and not out.is_dir():
        raise simfl.ConfigError("--out", str(out), "a campaign folder, or a path where one "
                                "can be made (this is a file)")


def refuse_model(study_name: str, model: str | None, own: str) -> None:
    """A study with a model of its own takes no ``--model``: say so instead of ignoring it."""
    if model is not None:
        raise simfl.ConfigError("--model", model, f"no --model: the {study_name} study trains "
                                f"its own model ({own})")


def main_for(name: str, build: Callable[..., Study], description: str,
             argv: Sequence[str] | None = None) -> int:
    """The command line of one study: ``python -m studies.NAME [--quick] [--out DIR]``."""
    args = parser(description).parse_args(argv)
    out = args.out or Path("runs") / ("studies_quick" if args.quick else "studies") / name
    try:
        check_run_options(args, out)
        study = narrow(build(args.quick, args.model, args.device), args.seeds, args.arms,
                       args.rounds)
        print(study.plan(), flush=True)
        run_study(study, out, jobs=args.jobs or (1 if args.quick else 2))
    except simfl.SimflError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    except OSError as err:  # the campaign folder cannot be made or written
        print(f"error: {err.filename or out}: {err.strerror or err}", file=sys.stderr)
        return 1
    print(f"{out}: done; report: python analysis/report.py {out} --out REPORT_DIR")
    return 0
