"""The whole report: each campaign's section written as its study's parts, then
``report.md`` assembled from every study's parts in the report folder
(:mod:`.parts`)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from simfl.core.errors import SimflError

from .campaigns import STUDY_FILE, read_campaign
from .papers import SECTIONS
from .parts import FIGURES_DIR, assemble, write_part


def write_report(campaigns: Sequence[Path], out: Path) -> Path:
    """Regenerate the parts of the studies whose campaign folders are given (their
    sections, figures, rows of ``comparisons.csv``, runs and raw claim metrics) in the
    report folder ``out``, keep the other studies' parts there, and write
    ``out/report.md`` from all of them. With no campaign the report is only reassembled."""
    out = Path(out)
    read = []
    for folder in campaigns:  # every folder is read and checked before anything is written
        campaign = read_campaign(folder)
        make = SECTIONS.get(campaign.study)
        if make is None:
            raise SimflError(f"{Path(folder) / STUDY_FILE}: unknown study {campaign.study!r} "
                             f"(expected one of {', '.join(SECTIONS)})")
        read.append((campaign, make))
    for campaign, make in read:
        section = make(campaign, out / FIGURES_DIR)
        section.campaign = campaign
        write_part(section, campaign, out)
    return assemble(out)
