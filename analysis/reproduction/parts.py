"""The report's committed parts, one set per study, and ``report.md`` assembled from them.

A report folder (``docs/reproduction``) holds, for each study's part ``KEY`` (the study,
or ``fedar_lenet5`` for a second campaign of one study):

* ``sections/KEY.md``: the study's section (its heading, tables, verdicts, figure links);
* ``sections/KEY.json``: its rows of the verdict table, title, mode, campaign folder and
  when it was generated;
* ``results/KEY.csv``: the campaign's finished runs, one row each (grid values, seed and
  the numbers of their ``summary.json``);
* ``results/KEY_claims.csv``: the raw claim metrics (:mod:`.claim_metrics`);
* its rows of ``comparisons.csv`` (its ``study`` column is ``KEY``);
* its figures in ``figures/``.

Regenerating a study from its campaign folder rewrites its own parts only, and
``report.md`` is then assembled from every part in the folder: the other studies'
parts stay as they were, so the campaigns need not all be present at once.
"""

from __future__ import annotations

import csv
import datetime
import json
from pathlib import Path
from typing import Any

from .campaigns import Campaign, RunInfo
from .claim_metrics import claims_path, write_claim_metrics
from .comparisons_csv import comparison_rows, replace_study
from .figures import HOW_TO_READ
from .papers import SECTIONS
from .sections import Section
from .tables import md_table
from .verdicts import RULE, seed_order

SECTIONS_DIR, RESULTS_DIR, FIGURES_DIR = "sections", "results", "figures"
COMPARISONS, REPORT = "comparisons.csv", "report.md"
#: the numbers of a run's summary.json shown first in ``results/KEY.csv``, in this order
SUMMARY_FIRST = ("final_accuracy", "best_accuracy", "time_to_target_s", "rounds", "sim_time_s",
                 "wall_time_s", "trained_updates", "aggregated_updates", "energy_j")
VERDICT_HEADER = ("paper", "claim", "paper's effect", "simfl's effect ± interval", "verdict",
                  "why", "seeds", "rounds", "settings that still differ", "study wall time")


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def part_key(section: Section, campaign: Campaign) -> str:
    """The name of a study's parts: the section's ``key``, else the campaign's study."""
    return section.key or campaign.study


def write_part(section: Section, campaign: Campaign, out: Path) -> str:
    """Write ``section``'s parts into the report folder ``out`` (its figures are already
    in ``out/figures``); return the part's key."""
    out = Path(out)
    key = part_key(section, campaign)
    sections, results = out / SECTIONS_DIR, out / RESULTS_DIR
    sections.mkdir(parents=True, exist_ok=True)
    results.mkdir(parents=True, exist_ok=True)
    (sections / f"{key}.md").write_text("\n".join([f"## {section.title}", "", *section.body]))
    meta = {"key": key, "study": campaign.study, "title": section.title,
            "mode": str(campaign.meta.get("mode")), "campaign": str(campaign.folder),
            "generated": _now(), "rows": section.rows()}
    (sections / f"{key}.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n")
    write_runs_table(campaign, results / f"{key}.csv")
    write_claim_metrics(section, claims_path(results, key))
    replace_study(out / COMPARISONS, key, comparison_rows(section, key), part_order(out))
    return key


def write_runs_table(campaign: Campaign, path: Path) -> Path:
    """The campaign's finished runs, one row each: the run folder, its grid values (read
    from the folder's name, ``name=cvar-cvar30-a1,seed=3``), its arm and seed, and the
    numbers of its ``summary.json`` (the first ones in :data:`SUMMARY_FIRST`'s order)."""
    runs = sorted(campaign.runs, key=lambda r: (r.arm, seed_order(r.seed), r.path.name))
    grid = list(dict.fromkeys(k for r in runs for k in _grid(r) if k not in ("name", "seed")))
    summaries = [r.summary() for r in runs]
    numbers = {k for s in summaries for k, v in s.items()
               if isinstance(v, (int, float)) and not isinstance(v, bool)}
    metrics = [k for k in SUMMARY_FIRST if k in numbers] + sorted(numbers - set(SUMMARY_FIRST))
    with open(path, "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["run", "arm", *grid, "seed", *metrics])
        for r, summary in zip(runs, summaries):
            cells = _grid(r)
            out.writerow([r.path.name, r.arm, *(cells.get(k, "") for k in grid), r.seed,
                          *("" if summary.get(k) is None else summary[k] for k in metrics)])
    return path


def _grid(run: RunInfo) -> dict[str, str]:
    return dict(part.split("=", 1) for part in run.path.name.split(",") if "=" in part)


def read_parts(out: Path) -> list[dict[str, Any]]:
    """The parts in the report folder ``out`` (``sections/*.json``), in the report's
    order: the studies in :data:`.papers.SECTIONS`'s order, then by key."""
    rank = {study: i for i, study in enumerate(SECTIONS)}
    parts = [json.loads(p.read_text()) for p in sorted((Path(out) / SECTIONS_DIR).glob("*.json"))]
    return sorted(parts, key=lambda m: (rank.get(m.get("study"), len(rank)), m["key"]))


def part_order(out: Path) -> list[str]:
    return [m["key"] for m in read_parts(out)]


def assemble(out: Path) -> Path:
    """Write ``out/report.md`` from every part in ``out``: the verdict table (each part's
    rows), the rule, and each part's section."""
    out = Path(out)
    parts = read_parts(out)
    modes = sorted({str(m.get("mode")) for m in parts})
    lines = ["# simfl reproduction report", "",
             f"Assembled by `analysis/report.py` on {_now()} from the parts of {len(parts)} "
             f"stud{'y' if len(parts) == 1 else 'ies'} (mode: {', '.join(modes) or '-'}), each "
             "generated from its campaign folder (its section's first line names it, the "
             "list below says when). Nothing was re-run: every number below is read from "
             "the run folders.", "",
             *[f"- {m['title'].split(':')[0]}: generated {m.get('generated', '-')}" for m in parts],
             "", "## Verdicts", "",
             md_table(VERDICT_HEADER, [row for m in parts for row in m["rows"]]),
             "## How the verdicts are decided", "", RULE, "", HOW_TO_READ, ""]
    for m in parts:
        lines += [(out / SECTIONS_DIR / f"{m['key']}.md").read_text()]
    path = out / REPORT
    path.write_text("\n".join(lines))
    return path
