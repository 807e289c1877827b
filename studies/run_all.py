"""Every study, then the report: ``python -m studies [--quick] --out DIR``.

The campaigns go to ``DIR/<study>`` and the report to ``DIR/report/report.md`` (or the
report folder ``--report``). A study already done is skipped run by run (its campaign
index), so the command resumes. With ``--only NAME...`` only those studies run and only
their parts of the report are regenerated; the other studies' parts already in the
report folder are kept (``--report docs/reproduction`` updates the committed report).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from typing import Sequence

import simfl
from studies import cvar, fedar, fedgs, fedlaavg, warm_start
from studies.common import INTERRUPTED, add_run_options, check_run_options, narrow, run_study

STUDIES = {m.NAME: m for m in (fedar, cvar, warm_start, fedgs, fedlaavg)}
REPORT = Path(__file__).resolve().parents[1] / "analysis" / "report.py"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m studies",
                                description="Run every reproduction study, then the report.")
    p.add_argument("--quick", action="store_true",
                   help="fewer rounds, 2 seeds, the bundled data sets (a few minutes)")
    p.add_argument("--out", type=Path, required=True, help="folder of the campaigns and report")
    add_run_options(p)
    p.add_argument("--only", nargs="+", choices=sorted(STUDIES), default=None,
                   help="run these studies only and regenerate only their parts of the "
                   "report (the others' parts in the report folder are kept)")
    p.add_argument("--report", type=Path, default=None,
                   help="report folder (default DIR/report; e.g. docs/reproduction)")
    args = p.parse_args(argv)
    started_s = time.perf_counter()
    try:
        check_run_options(args, args.out)
        # --model goes to the studies that take one (cvar and fedgs train their own)
        chosen = {name: narrow(module.study(args.quick, None if getattr(module, "OWN_MODEL",
                                                                        False) else args.model,
                                            args.device), args.seeds, args.arms, args.rounds)
                  for name, module in STUDIES.items() if not args.only or name in args.only}
    except simfl.SimflError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for study in chosen.values():
        print(study.plan(), flush=True)
    for name, study in chosen.items():
        t_s = time.perf_counter()
        try:
            run_study(study, args.out / name, jobs=args.jobs or (1 if args.quick else 2))
        except simfl.SimflError as err:
            print(f"error: {name}: {err}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(f"{name}: {INTERRUPTED}", file=sys.stderr)
            return 130
        except OSError as err:  # the campaign folder cannot be made or written
            print(f"error: {name}: {err.filename or args.out}: {err.strerror or err}",
                  file=sys.stderr)
            return 1
        print(f"{name}: {time.perf_counter() - t_s:.1f} s", flush=True)
    campaigns = [str(args.out / name) for name in (args.only or STUDIES)
                 if (args.out / name / "study.json").is_file()]
    status = load_report().main([*campaigns, "--out", str(args.report or args.out / "report")])
    print(f"all studies and the report: {time.perf_counter() - started_s:.1f} s")
    return status


def load_report():
    """``analysis/report.py`` (a script, not a package module), loaded from its file."""
    spec = importlib.util.spec_from_file_location("simfl_analysis_report", REPORT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    raise SystemExit(main())
