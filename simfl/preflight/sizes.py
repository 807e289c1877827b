"""Sizes that fit the simulator's arithmetic: the model size in bytes and the uplink's
rate, which the energy model turns into bits."""

from __future__ import annotations

import math

from simfl.core.config import Scenario
from simfl.core.errors import ConfigError

#: the largest model size in bytes (a petabyte; ``model_bytes * 8`` bits stays in int64)
MAX_MODEL_BYTES = 10**15


def check_sizes(scenario: Scenario) -> None:
    """Sizes that fit the int64 arithmetic of the simulator."""
    model_bytes = scenario.network.model_bytes
    if model_bytes is not None and model_bytes > MAX_MODEL_BYTES:
        raise ConfigError("network.model_bytes", model_bytes,
                          f"a size in bytes of at most {MAX_MODEL_BYTES:.0e}")


def check_uplink_rate(scenario: Scenario) -> None:
    """A finite uplink rate: a run converts airtime to bits at the uplink's nominal rate
    (the energy model), which an infinite rate leaves undefined. (An infinite downlink
    rate is fine: downloads then take no time.)"""
    rate = getattr(scenario.network.uplink.rate, "rate_bps", None)
    if rate is not None and math.isinf(rate):
        raise ConfigError("network.uplink.rate.rate_bps", rate,
                          "a finite uplink rate in a run (the energy model converts airtime "
                          "to bits at the uplink's nominal rate; an infinite downlink rate is "
                          "allowed)")
