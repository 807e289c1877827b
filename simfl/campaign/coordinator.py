"""The coordinator of a sweep: expands the runs, keeps the index, feeds an engine.

Only the coordinator writes the index. A re-run of the same sweep skips the runs that
are done, retries the failed ones, and runs the points a grown grid added. On Ctrl-C
(SIGINT) or SIGTERM it cancels what has not started, stops what runs, marks the
unfinished runs pending again and re-raises; a later sweep resumes each of them from its
latest checkpoint when it has one (``run.checkpoint_every_rounds``), and otherwise
redoes it in a clean folder.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from simfl.campaign.arguments import sweep_grid, sweep_overrides, sweep_seeds
from simfl.campaign.engines import check_engine
from simfl.campaign.folders import campaign_lock, run_folder, runs_to_do
from simfl.campaign.grid import expand
from simfl.campaign.index import CampaignIndex
from simfl.campaign.progress import CampaignProgress
from simfl.campaign.scheduling import execute
from simfl.campaign.trust import check_campaign_code
from simfl.campaign.worker import RunTask
from simfl.core.config import Scenario, load_scenario
from simfl.core.config.scripts import resolve_scenario_path
from simfl.core.errors import ConfigError


@dataclass(frozen=True)
class SweepReport:
    """What one sweep did: ``total`` runs in the campaign's sweep, ``skipped`` already
    done, ``ran`` executed now, of which ``failed`` failed; wall time of this sweep."""

    folder: Path
    total: int
    skipped: int
    ran: int
    failed: int
    wall_time_s: float

    def line(self) -> str:
        failed = f", {self.failed} failed" if self.failed else ""
        return (f"{self.folder}: {self.total} runs, {self.ran} run now{failed}, "
                f"{self.skipped} already done, in {self.wall_time_s:.1f} s")


def sweep(scenario: Scenario | str, seeds: str | int | Iterable[int] | None = None,
          grid: Iterable[str] | Mapping[str, Iterable[Any]] | None = None,
          set: Iterable[str] | Mapping[str, Any] | None = None, out: str | Path | None = None,
          jobs: int = 1, engine: str = "local", scheduler: str | None = None,
          quiet: bool = True, command: list[str] | None = None,
          trust_code: bool = False) -> SweepReport:
    """Run a campaign: every grid point times every seed, skipping runs already done.

    Parameters
    ----------
    scenario
        A :class:`Scenario`, or the path or bundled name of a scenario script.
    seeds
        ``"1-5"``, ``"1,3,7"``, an int or a list of ints (default: the scenario's seed).
    grid
        ``["KEY=v1,v2", ...]`` or ``{KEY: [v1, v2], ...}``: the runs cover every
        combination (the last key varies fastest).
    set
        Overrides applied to every run (``["KEY=VALUE", ...]`` or ``{KEY: VALUE}``).
    out
        The campaign folder (default ``runs/NAME_sweep``): ``index.sqlite`` and one run
        folder per run.
    jobs, engine, scheduler
        ``jobs`` workers of the ``local`` process pool (1: in this process) or of
        ``dask`` (a ``LocalCluster``, or the scheduler at ``scheduler``).
    quiet
        No progress bar (it is shown only when stderr is a terminal anyway).
    command
        The command line recorded in each run's provenance.json (default ``sys.argv``).
    trust_code
        Import code (a factory, a loss) that the campaign's index or run folders name
        although ``scenario`` and ``set`` do not, or from modules inside the campaign
        folder; without it such a campaign is refused before anything runs
        (:mod:`simfl.campaign.trust`).
    """
    from simfl import __version__

    started_s = time.perf_counter()
    check_engine(engine, jobs, scheduler)
    source = None
    if isinstance(scenario, str):
        source = str(resolve_scenario_path(scenario).resolve())
        scenario = load_scenario(scenario)
    overrides = sweep_overrides(set)
    specs = expand(scenario, overrides, sweep_grid(grid), sweep_seeds(seeds), __version__)
    folder = Path(out) if out is not None else Path("runs") / f"{scenario.name}_sweep"
    if folder.exists() and not folder.is_dir():
        raise ConfigError("--out", str(folder), "a folder, or a path where one can be made "
                          "(this is a file)")
    folder.mkdir(parents=True, exist_ok=True)
    folder = folder.resolve()
    command = list(sys.argv if command is None else command)
    with campaign_lock(folder):
        index = CampaignIndex(folder, create=True)
        try:
            named = check_campaign_code(index, folder, specs, trust_code)
            to_run = runs_to_do(index, folder, specs)  # checks the index first
            index.add_grid_keys([k for k in specs[0].params if k != "seed"] if specs else [])
            tasks = [RunTask(row.id, str(run_folder(folder, name)), row.scenario, command, source,
                             tuple(sorted(named)), trust_code, str(folder),
                             given_values(overrides, row.params))
                     for row, name in to_run]
            ran, failed = execute(index, tasks, engine, jobs, scheduler,
                                  CampaignProgress(folder.name, len(tasks), quiet))
        finally:
            index.close()
    return SweepReport(folder, len(specs), len(specs) - len(tasks), ran, failed,
                       time.perf_counter() - started_s)


def given_values(overrides: list[tuple[str, Any]], params: dict[str, Any]) -> list[list[Any]]:
    """What a campaign's run was given, for its provenance.json: the ``--set`` overrides,
    then its grid values (the seed is its folder's own)."""
    return [[key, value] for key, value in
            [*overrides, *((k, v) for k, v in params.items() if k != "seed")]]
