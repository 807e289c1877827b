"""Continuous-time availability: clients change state at event times in simulated seconds.

An on/off Markov chain per client, or per-client on intervals replayed from a trace file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from simfl.core.config.availability.base import Availability
from simfl.core.config.checks import positive, require


@dataclass(frozen=True)
class Markov(Availability):
    """Continuous-time on/off Markov chain per client (exponential on and off periods).

    ``on_rate_per_s`` is the off->on rate alpha, ``off_rate_per_s`` the on->off rate
    beta: long-run availability alpha / (alpha + beta), mean on period 1/beta. Each client
    starts in the stationary distribution.
    """

    kind = "markov"
    paper = ("two-state continuous-time Markov chain: availability alpha/(alpha+beta), "
             "P(on through T | on) = exp(-beta T)")
    on_rate_per_s: float = 1.0 / 1800.0
    off_rate_per_s: float = 1.0 / 600.0

    def validate(self) -> None:
        positive(self, "on_rate_per_s", "off_rate_per_s")


@dataclass(frozen=True)
class Trace(Availability):
    """Replay per-client on intervals from a file (simfl CSV, FLASH states or FedScale lists).

    ``format``: ``csv`` (rows ``client,start_s,end_s``), ``flash`` (JSON of state lines),
    ``fedscale_json`` / ``fedscale_csv`` (active/inactive lists). Simulated client c
    replays the trace's (c mod K)-th client of the K it lists, in id order. ``periodic``
    repeats the trace every ``period_s`` (default: the latest end time in the file, or
    FedScale's ``finish_time``).
    """

    kind = "trace"
    paper = ("trace replay; FLASH (Yang et al., WWW 2021) state traces; FedScale (Lai et al., "
             "ICML 2022) client_behave_trace lists")
    path: str = ""
    format: Literal["csv", "flash", "fedscale_json", "fedscale_csv"] = "csv"
    periodic: bool = False
    period_s: float | None = None

    def validate(self) -> None:
        require(bool(self.path), "path", self.path, "the path of a trace file")
        positive(self, "period_s")
        require(self.period_s is None or math.isfinite(self.period_s), "period_s",
                self.period_s, "a finite number of seconds > 0, or null")
