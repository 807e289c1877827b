"""The argument parser of the ``simfl`` command: one sub-command per command function,
with the arguments that several of them share (the scenario and its overrides,
``--quiet``)."""

from __future__ import annotations

import argparse

from simfl.cli.campaigns import cmd_results, cmd_sweep
from simfl.cli.listing import TOPICS, cmd_list
from simfl.cli.plotting import cmd_plot
from simfl.cli.runs import cmd_resume, cmd_run, cmd_validate


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="simfl", description=(
        "Discrete-event simulator of federated learning over unreliable networks."))
    from simfl import __version__

    parser.add_argument("--version", action="version", version=f"simfl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def scenario_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("scenario", help="path to an existing scenario script, or the bare "
                       "name (no / and no .py) of one in ./scenarios/ or simfl's own")
        p.add_argument("--set", action="append", metavar="KEY=VALUE",
                       help="override a dotted scenario key (value parsed as JSON when possible)")

    def trust_arg(p: argparse.ArgumentParser, what: str) -> None:
        p.add_argument("--trust-code", action="store_true",
                       help=f"import the code (factories, losses) that {what} names, even "
                       "from modules inside it")

    def quiet_arg(p: argparse.ArgumentParser) -> None:
        p.add_argument("--quiet", action="store_true",
                       help="no progress bar (the one-line summary stays)")

    run = sub.add_parser("run", help="simulate a scenario and write its run directory")
    scenario_args(run)
    run.add_argument("--seed", type=int, metavar="N", help="root random seed (overrides the scenario's)")
    run.add_argument("--out", metavar="DIR", help="run directory (default runs/NAME_seedN, with the --set "
                     "values between: runs/NAME_key=value_seedN; never overwritten)")
    run.add_argument("--name", metavar="RUN_NAME", help="run directory runs/RUN_NAME instead "
                     "(a plain folder name)")
    run.add_argument("--timing-only", action="store_true", help="simulate timing, skip training")
    run.add_argument("--events", action="store_true", help="also write the full events.csv")
    quiet_arg(run)
    run.set_defaults(func=cmd_run)

    resume = sub.add_parser("resume", help="continue a stopped run from its latest checkpoint "
                            "(run.checkpoint_every_rounds)")
    resume.add_argument("dir", metavar="DIR", help="the run folder")
    resume.add_argument("--set", action="append", metavar="KEY=MODULE:FUNCTION",
                        help="name again code that the folder's config.json names (a "
                        "factory, a loss): only code named here is imported")
    trust_arg(resume, "the run folder")
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
    sweeper.add_argument("--out", metavar="DIR", help="campaign folder (default runs/NAME_sweep)")
    trust_arg(sweeper, "the campaign folder")
    sweeper.add_argument("--jobs", type=int, default=1, metavar="N",
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
    res.add_argument("--columns", metavar="A,B,C", help="only these columns, in this order "
                     "(run, the grid keys, seed, status, the summary metrics, error)")
    res.set_defaults(func=cmd_results)

    validate = sub.add_parser("validate", help="print the resolved scenario or what is wrong")
    scenario_args(validate)
    validate.set_defaults(func=cmd_validate)

    lister = sub.add_parser("list", help="the scenarios simfl finds by name, or the "
                            "registered names of an extension point")
    lister.add_argument("topic", nargs="?", choices=TOPICS)
    lister.set_defaults(func=cmd_list)

    plot = sub.add_parser("plot", help=(
        "plot run folders, or folders of runs: runs that differ only by seed are one line "
        "(their mean) with a band"))
    plot.add_argument("dirs", nargs="+", metavar="DIR",
                      help="a run folder, or a folder searched for run folders (a campaign)")
    plot.add_argument("--metric", default="accuracy", metavar="COLUMN",
                      help="a column of evals.csv (accuracy, loss...) or rounds.csv (energy_j...)")
    plot.add_argument("--x", choices=("time", "round"), default="time")
    plot.add_argument("--unit", choices=("s", "min", "h", "days"),
                      help="time unit (default: s, min, h or days, from the longest line)")
    plot.add_argument("--band", choices=("ci", "minmax", "none"), default="ci",
                      help="over seeds: 95%% CI of the mean (default), min-max, or none")
    plot.add_argument("--label", action="extend", nargs="+", metavar="TEXT",
                      help="legend labels: LINE=TEXT (LINE: a run folder or a line's "
                      "automatic label), or plain texts bound to the DIRs in the order given, "
                      "one per line or per DIR; several after one --label or repeated "
                      "(default: what differs)")
    plot.add_argument("--target", type=float, metavar="Y", help="dashed target line (default: "
                      "run.target_accuracy when plotting accuracy)")
    plot.add_argument("--out", metavar="FILE.png", help="default METRIC_vs_X.png here")
    plot.add_argument("--force", action="store_true", help="overwrite an existing FILE.png")
    plot.set_defaults(func=cmd_plot)
    return parser
