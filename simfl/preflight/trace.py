"""The trace file of a trace availability model: it exists and parses."""

from __future__ import annotations

import os

from simfl.core.config import Scenario
from simfl.core.config.availability import Trace
from simfl.core.errors import ConfigError


def check_trace(scenario: Scenario) -> None:
    """A trace availability model's file exists and parses."""
    availability = scenario.population.availability
    if isinstance(availability, Trace):
        from simfl.sim.traces.formats import load_trace

        if not os.path.isfile(availability.path):
            raise ConfigError("population.availability.path", availability.path,
                              "the path of an existing trace file")
        load_trace(availability.path, availability.format, availability.period_s)
