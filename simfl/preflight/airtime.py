"""Whether an update can arrive at all: one upload's airtime against the round deadline.

A warning, not an error: a run in which every upload outlasts the deadline is valid (its
timing tables are right), but it aggregates nothing, and its accuracy stays the initial
model's.
"""

from __future__ import annotations

import math

from simfl.core.config import IdealChannel, Scenario
from simfl.preflight.mpdus import check_mpdus


def nominal_rate_bps(channel) -> float:
    """The bit rate of ``channel``'s rate model at its configured SNR, without fading
    (0.0 when a byte would take forever, as at an SNR far below the noise)."""
    airtime_s = _byte_airtime_s(channel)
    return 8.0 / airtime_s if 0.0 < airtime_s < math.inf else (0.0 if airtime_s else math.inf)


def _byte_airtime_s(channel) -> float:
    """The airtime of one byte at the nominal rate of ``channel``'s rate model."""
    from simfl.sim.links.channel import build_link

    return build_link(IdealChannel(rate=channel.rate)).transmit(0.0, 1, None).airtime_s


def upload_airtime_warnings(scenario: Scenario, model_bytes: int) -> list[str]:
    """One line when a single upload of ``model_bytes`` at the uplink's nominal rate
    (no losses, retries, contention or computation) already takes longer than
    ``server.deadline_s``; else none. A ``csma_ca`` upload cut into more MPDUs than the
    DCF simulates is an error (:func:`~simfl.preflight.mpdus.check_mpdus`)."""
    check_mpdus(scenario, model_bytes)
    deadline_s = scenario.server.deadline_s
    airtime_s = model_bytes * _byte_airtime_s(scenario.network.uplink)
    if deadline_s is None or airtime_s <= deadline_s:
        return []
    rate_bps = nominal_rate_bps(scenario.network.uplink)
    return [f"one upload of the model ({model_bytes / 1e6:.3g} MB) takes {airtime_s:.3g} s "
            f"at the uplink's nominal {rate_bps / 1e6:.3g} Mb/s, longer than server.deadline_s "
            f"= {deadline_s:g} s: no update can arrive in time (raise the deadline or the "
            "uplink rate, or use a smaller model)"]
