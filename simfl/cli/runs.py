"""``simfl run``, ``simfl resume`` and ``simfl validate``: one scenario, from its script
and the command line's overrides, checked, or run (or resumed) into its run folder with
a one-line summary."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from simfl.cli.naming import run_out_dir
from simfl.cli.progress import Progress
from simfl.core.config import Scenario, apply_overrides, load_scenario, parse_override
from simfl.core.errors import SimflError
from simfl.plugins import warn_failed_plugins


def _scenario_from_args(args: argparse.Namespace) -> Scenario:
    warn_failed_plugins(args.command, sys.stderr.write)
    try:
        scenario = load_scenario(args.scenario)
    except SimflError:
        raise
    except Exception as err:  # the user's script failed to import or to build
        raise SimflError(f"could not load scenario {args.scenario!r}: "
                         f"{type(err).__name__}: {err}") from None
    overrides = [parse_override(text) for text in args.set or []]
    if getattr(args, "seed", None) is not None:
        overrides.append(("seed", args.seed))
    # the --set values are checked as given (as ``simfl validate`` checks them) before the
    # flags replace any of them: ``--set run.timing_only=1 --timing-only`` is refused
    scenario = apply_overrides(scenario, overrides)
    flags = [(key, True) for key, flag in (("run.timing_only", "timing_only"),
                                           ("run.events", "events"))
             if getattr(args, flag, False)]
    return apply_overrides(scenario, flags) if flags else scenario


def cmd_validate(args: argparse.Namespace) -> int:
    from simfl.preflight import preflight, upload_airtime_warnings

    scenario = _scenario_from_args(args)
    preflight(scenario, whole_files=True)
    if scenario.task.loss != "cross_entropy":
        from simfl.train.losses import check_task_loss

        check_task_loss(scenario.task)
    for warning in upload_airtime_warnings(scenario, _model_bytes(scenario)):
        print(f"simfl validate: warning: {warning}", file=sys.stderr)
    print(json.dumps(scenario.to_dict(), indent=2))
    return 0


def _model_bytes(scenario) -> int:
    """The model's size in bytes: ``network.model_bytes``, else its float32 parameters."""
    from simfl.train.models import model_bytes

    task = scenario.task
    return scenario.network.model_bytes or model_bytes(task.model, task.dataset.input_shape(),
                                                       task.dataset.shape()[1])


def cmd_run(args: argparse.Namespace) -> int:
    from simfl.core.config.scripts import resolve_scenario_path
    from simfl.metrics.rundir import write_provenance

    started_at = time.time()
    scenario = _scenario_from_args(args)
    from simfl.experiment import run_scenario

    given = [parse_override(text) for text in args.set or []]
    out = run_out_dir(args.out, args.name, scenario.name, given, scenario.seed)
    bar = None if args.quiet else Progress(scenario)
    try:
        result = run_scenario(scenario, out, bar)
    finally:
        if bar:
            bar.close()
    write_provenance(result.out_dir, ["simfl", *args.argv], started_at,
                     resolve_scenario_path(args.scenario).resolve(), given)
    return _report("run", result)


def _report(command: str, result) -> int:
    """The run's warnings on stderr and its one-line summary on stdout."""
    summary = result.summary
    for warning in summary.get("warnings", ()):
        print(f"simfl {command}: warning: {warning}", file=sys.stderr)
    acc = summary["final_accuracy"]
    print(f"{result.out_dir}: {summary['rounds']} rounds, {summary['sim_time_s']:.1f} s "
          f"simulated in {summary['wall_time_s']:.1f} s, "
          f"final accuracy {'-' if acc is None else f'{acc:.4f}'}, "
          f"{summary['aggregated_updates']} updates aggregated")
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    from simfl.experiment import resume_run
    from simfl.experiment.checkpoint_check import saved_scenario
    from simfl.metrics.rundir import write_provenance

    started_at = time.time()
    named, trust = _named_code(args.set or []), bool(args.trust_code)
    bar = None
    if not args.quiet:
        try:
            bar = Progress(saved_scenario(Path(args.dir), named, trust))
        except SimflError:
            bar = None  # resume_run says what is wrong with the folder
    try:
        result = resume_run(Path(args.dir), bar, named_code=named, trust_code=trust)
    finally:
        if bar:
            bar.close()
    write_provenance(result.out_dir, ["simfl", *args.argv], started_at, None)
    return _report("resume", result)


def _named_code(texts: list[str]) -> set[str]:
    """The import paths ``simfl resume --set KEY=MODULE:FUNCTION`` names again (resume
    changes nothing else in the scenario)."""
    from simfl.core.config.code_refs import IMPORT_PATH
    from simfl.core.errors import ConfigError

    named = set()
    for text in texts:
        _, value = parse_override(text)
        if not isinstance(value, str) or not IMPORT_PATH.fullmatch(value):
            raise ConfigError("--set", text, "KEY=package.module:function, naming again "
                              "code that the run folder's config.json names (resume "
                              "changes nothing else)")
        named.add(value)
    return named
