"""The ``simfl`` command line: run, resume, sweep, results, validate, list, plot.

Exit status: 0 success, 2 invalid scenario or arguments (one line naming the field,
the bad value and what is allowed), 1 a run that could not write its files (one line)
or a bug (a traceback), 141 when the output pipe closed early (``| head``), 130 on
Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from typing import Any
from pathlib import Path

# Importing the scenario tree defines every config class, which registers each kind in
# its extension point's registry: ``simfl list`` reads REGISTRIES after this import.
from simfl.core.config import Scenario, apply_overrides, load_scenario, parse_override
import simfl.core.records  # noqa: F401  (registers the local rules)
from simfl.core.errors import SimflError
from simfl.core.registry import REGISTRIES
from simfl.plugins import warn_failed_plugins

#: ``simfl list`` topics (one per extension point), in display order
LIST_TOPICS = ("aggregators", "local_rules", "samplers", "availability", "channels", "rates",
               "macs", "datasets", "partitions", "models", "initialisers", "lr_schedules",
               "server_modes", "server_optimizers")


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
    if getattr(args, "timing_only", False):
        overrides.append(("run.timing_only", True))
    if getattr(args, "events", False):
        overrides.append(("run.events", True))
    return apply_overrides(scenario, overrides)


def cmd_validate(args: argparse.Namespace) -> int:
    from simfl.preflight import preflight

    scenario = _scenario_from_args(args)
    preflight(scenario)
    print(json.dumps(scenario.to_dict(), indent=2))
    return 0


class Progress:
    """The progress bar of ``simfl run``: in rounds, or in simulated seconds when the run
    is bounded by ``run.horizon_s`` alone (``run.rounds = null``).

    The bar is made at the first round's end, so that its rate and ETA do not count the
    imports and data loading before it; it is off when stderr is not a terminal.
    """

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        run = scenario.run
        self.by_time = run.rounds is None
        self.horizon_s = run.horizon_s
        self.bar: Any = None

    def _open(self):
        from tqdm import tqdm

        run = self.scenario.run
        return tqdm(total=run.horizon_s if self.by_time else run.rounds,
                    unit="sim s" if self.by_time else "round", desc=self.scenario.name,
                    file=sys.stderr, dynamic_ncols=True, disable=None,
                    bar_format=("{l_bar}{bar}| {n:,.0f}/{total:,.0f} sim s "
                                "[{elapsed}<{remaining}{postfix}]") if self.by_time else None)

    def __call__(self, done: int, t_s: float, accuracy: float | None) -> None:
        if self.bar is None:  # a resumed run starts where its checkpoint was
            self.bar = self._open()
            if not self.by_time:
                self.bar.update(done - 1)
        if self.by_time:
            self.bar.update(min(t_s, self.horizon_s) - self.bar.n)
        else:
            self.bar.update(1)
        acc = "-" if accuracy is None else f"{accuracy:.3f}"
        where = f"round {done}" if self.by_time else f"sim {t_s:,.1f} s"
        self.bar.set_postfix_str(f"{where}, acc {acc}", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def cmd_run(args: argparse.Namespace) -> int:
    from simfl.core.config.scenario import resolve_scenario_path
    from simfl.metrics.rundir import write_provenance

    started_at = time.time()
    scenario = _scenario_from_args(args)
    from simfl.experiment import run_scenario

    bar = None if args.quiet else Progress(scenario)
    try:
        result = run_scenario(scenario, Path(args.out) if args.out else None, bar)
    finally:
        if bar:
            bar.close()
    write_provenance(result.out_dir, ["simfl", *args.argv], started_at,
                     resolve_scenario_path(args.scenario).resolve())
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
    from simfl.metrics.rundir import write_provenance

    started_at = time.time()
    bar = None
    if not args.quiet:
        try:
            config = json.loads((Path(args.dir) / "config.json").read_text(encoding="utf-8"))
            bar = Progress(Scenario.from_dict(config["scenario"]))  # type: ignore[arg-type]
        except (OSError, ValueError, KeyError, TypeError, SimflError):
            bar = None  # resume_run says what is wrong with the folder
    try:
        result = resume_run(Path(args.dir), bar)
    finally:
        if bar:
            bar.close()
    write_provenance(result.out_dir, ["simfl", *args.argv], started_at, None)
    return _report("resume", result)


def cmd_sweep(args: argparse.Namespace) -> int:
    from simfl.campaign import sweep

    warn_failed_plugins(args.command, sys.stderr.write)
    try:
        report = sweep(args.scenario, seeds=args.seeds, grid=args.grid, set=args.set,
                       out=args.out, jobs=args.jobs, engine=args.engine,
                       scheduler=args.scheduler, quiet=args.quiet,
                       command=["simfl", *args.argv])
    except KeyboardInterrupt:
        print("simfl sweep: interrupted: finished runs stay done, the others are pending; "
              "the same command resumes", file=sys.stderr)
        return 130
    print(report.line())
    return 1 if report.failed else 0


def cmd_results(args: argparse.Namespace) -> int:
    from simfl.campaign.results import csv_table, table, text_table
    from simfl.metrics.rundir import write_atomic

    columns, rows = table(Path(args.campaign))
    if args.csv:
        write_atomic(Path(args.csv), csv_table(columns, rows))
        print(args.csv)
    else:
        sys.stdout.write(text_table(columns, rows))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    warn_failed_plugins("list", sys.stderr.write)
    topics = [args.topic] if args.topic else list(LIST_TOPICS)
    for topic in topics:
        print(f"{topic}:")
        for entry in REGISTRIES[topic]:
            paper = f"  [{entry.paper}]" if entry.paper else ""
            plugin = f"(plug-in: {entry.obj.__module__}) " if entry.plugin else ""
            print(f"  {entry.name:<16} {plugin}{entry.summary}{paper}")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from simfl.metrics.plot import plot_runs

    dirs = [Path(d) for d in args.dirs]
    missing = [str(d) for d in dirs if not d.is_dir()]
    if missing:
        raise SimflError(f"not a run directory: {', '.join(missing)}")
    out = Path(args.out) if args.out else Path(f"{args.metric}_vs_{args.x}.png")
    print(plot_runs(dirs, out, args.metric, args.x, unit=args.unit, band=args.band,
                    labels=args.label, target=args.target, force=args.force,
                    warn=lambda text: print(f"simfl plot: warning: {text}", file=sys.stderr)))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="simfl", description=(
        "Discrete-event simulator of federated learning over unreliable networks."))
    from simfl import __version__

    parser.add_argument("--version", action="version", version=f"simfl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def scenario_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("scenario", help="path to a scenario script, or the name of one in scenarios/")
        p.add_argument("--set", action="append", metavar="KEY=VALUE",
                       help="override a dotted scenario key (value parsed as JSON when possible)")

    def quiet_arg(p: argparse.ArgumentParser) -> None:
        p.add_argument("--quiet", action="store_true",
                       help="no progress bar (the one-line summary stays)")

    run = sub.add_parser("run", help="simulate a scenario and write its run directory")
    scenario_args(run)
    run.add_argument("--seed", type=int, help="root random seed (overrides the scenario's)")
    run.add_argument("--out", help="run directory (default runs/NAME_seedN, never overwritten)")
    run.add_argument("--timing-only", action="store_true", help="simulate timing, skip training")
    run.add_argument("--events", action="store_true", help="also write the full events.csv")
    quiet_arg(run)
    run.set_defaults(func=cmd_run)

    resume = sub.add_parser("resume", help="continue a stopped run from its latest checkpoint "
                            "(run.checkpoint_every_rounds)")
    resume.add_argument("dir", metavar="DIR", help="the run folder")
    quiet_arg(resume)
    resume.set_defaults(func=cmd_resume)

    sweeper = sub.add_parser("sweep", help="run a campaign: seeds x grid points, skipping runs "
                             "already done")
    scenario_args(sweeper)
    sweeper.add_argument("--seeds", metavar="A-B", help="seeds: 1-5, 1,3,7 (default: the "
                         "scenario's seed)")
    sweeper.add_argument("--grid", action="append", metavar="KEY=V1,V2",
                         help="a dotted scenario key and its values; several --grid give "
                         "every combination")
    sweeper.add_argument("--out", help="campaign folder (default runs/NAME_sweep)")
    sweeper.add_argument("--jobs", type=int, default=1,
                         help="runs at once (default 1: one after the other, in this process)")
    sweeper.add_argument("--engine", choices=("local", "dask"), default="local",
                         help="local process pool (default) or Dask distributed")
    sweeper.add_argument("--scheduler", metavar="ADDRESS",
                         help="a Dask scheduler (tcp://host:8786); default a LocalCluster")
    quiet_arg(sweeper)
    sweeper.set_defaults(func=cmd_sweep)

    res = sub.add_parser("results", help="a campaign's runs as one table")
    res.add_argument("campaign", metavar="CAMPAIGN", help="campaign folder (made by simfl sweep)")
    res.add_argument("--csv", metavar="FILE", help="write the table as CSV to FILE")
    res.set_defaults(func=cmd_results)

    validate = sub.add_parser("validate", help="print the resolved scenario or what is wrong")
    scenario_args(validate)
    validate.set_defaults(func=cmd_validate)

    lister = sub.add_parser("list", help="registered names of an extension point")
    lister.add_argument("topic", nargs="?", choices=LIST_TOPICS)
    lister.set_defaults(func=cmd_list)

    plot = sub.add_parser("plot", help=(
        "plot run folders, or folders of runs: runs that differ only by seed are one line "
        "(their mean) with a band"))
    plot.add_argument("dirs", nargs="+", metavar="DIR",
                      help="a run folder, or a folder searched for run folders (a campaign)")
    plot.add_argument("--metric", default="accuracy",
                      help="a column of evals.csv (accuracy, loss...) or rounds.csv (energy_j...)")
    plot.add_argument("--x", choices=("time", "round"), default="time")
    plot.add_argument("--unit", choices=("s", "min", "h"), help="time unit (default s)")
    plot.add_argument("--band", choices=("ci", "minmax", "none"), default="ci",
                      help="over seeds: 95%% CI of the mean (default), min-max, or none")
    plot.add_argument("--label", action="append", metavar="TEXT",
                      help="legend label, one per line in order (default: what differs)")
    plot.add_argument("--target", type=float, help="dashed target line (default: "
                      "run.target_accuracy when plotting accuracy)")
    plot.add_argument("--out", metavar="FILE.png", help="default METRIC_vs_X.png here")
    plot.add_argument("--force", action="store_true", help="overwrite an existing FILE.png")
    plot.set_defaults(func=cmd_plot)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    try:
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return status
    except SimflError as err:
        _error(args.command, str(err))
        return err.exit_status
    except BrokenPipeError:  # the reader left (``simfl validate x | head``): end quietly
        _silence_stdout()
        return 141
    except KeyboardInterrupt:
        print(f"simfl {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as err:  # the file system refused (full disk, read-only folder...)
        where = f"{err.filename}: " if err.filename else ""
        _error(args.command, f"{where}{err.strerror or err}")
        return 1
    except RecursionError:
        _error(args.command, "a value is nested too deeply")
        return 2
    except Exception:  # a bug: keep the traceback for the report
        traceback.print_exc()
        return 1


def _error(command: str, message: str) -> None:
    """Print ``message`` on one line of stderr."""
    print(f"simfl {command}: error: {message.replace(chr(13), ' ').replace(chr(10), ' ')}", file=sys.stderr)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (tests capture it)
        pass


if __name__ == "__main__":
    sys.exit(main())
