"""The per-study sections of the report, one module per paper, and the table that picks
a campaign's section by the study named in its ``study.json``."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..campaigns import Campaign
from ..sections import Section
from .cvar import cvar_section
from .fedar import fedar_section
from .fedgs import fedgs_section
from .fedlaavg import fedlaavg_section
from .warm_start import warm_start_section

SECTIONS: dict[str, Callable[[Campaign, Path], Section]] = {
    "fedar": fedar_section, "cvar": cvar_section, "warm_start": warm_start_section,
    "fedgs": fedgs_section, "fedlaavg": fedlaavg_section}
