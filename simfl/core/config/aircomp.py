"""Over-the-air computation (``server.algorithm.kind = "aircomp"``): the analog slot's
numbers, and what the rest of the scenario must be for one slot per round."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from simfl.core.config.aggregator import Aggregator
from simfl.core.config.checks import finite, non_negative, positive, require, step_size
from simfl.core.config.mac import kinds_that

if TYPE_CHECKING:
    from simfl.core.config.scenario import Scenario

AIRCOMP = ("Zhu, Wang, Huang, Broadband Analog Aggregation for Low-Latency Federated Edge "
           "Learning, IEEE TWC 2020 (truncated channel inversion); Yang, Jiang, Shi, Ding, "
           "Federated Learning via Over-the-Air Computation, IEEE TWC 2020 (MSE = sigma^2/eta)")

#: the analog slot's symbol rate without a radio table (Hz: symbols per second)
DEFAULT_SYMBOL_RATE_HZ = 1e6


@dataclass(frozen=True)
class AirComp(Aggregator):
    """Over-the-air aggregation: every participant sends its update in one analog slot.

    Each scheduled client k draws a channel power gain |h_k|^2 for the round's slot
    (Rayleigh, unit mean, times the client's mean SNR when a radio table gives one). A
    client with |h_k|^2 < ``gain_threshold`` sits out (recorded ``truncated``); the
    others invert their channels to the common scale eta = ``power`` * min_k |h_k|^2,
    so that no one exceeds the power limit ``power``. The server receives
    sqrt(eta) * sum_k delta_k plus noise of variance ``noise_var`` per symbol and steps
    by ``server_lr`` * (received / sqrt(eta)) / n: the sum's error per entry has variance
    (MSE) ``noise_var`` / eta. The slot lasts d / ``symbol_rate_hz`` seconds for a model
    of d parameters (one real analog symbol per parameter, d = model bytes / 4); null:
    the radio's ``bandwidth_hz``, or 1 MHz without a radio table. ``power`` and
    ``noise_var`` are relative: with a radio table, 1 is the clients' ``tx_power_dbm``
    and the band's thermal noise.
    """

    kind = "aircomp"
    paper = AIRCOMP
    power: float = 1.0
    noise_var: float = 1e-4
    gain_threshold: float = 0.1
    symbol_rate_hz: float | None = None
    server_lr: float = 1.0

    def validate(self) -> None:
        positive(self, "power")
        non_negative(self, "noise_var", "gain_threshold")
        finite(self, "power", "noise_var", "gain_threshold")
        if self.symbol_rate_hz is not None:
            positive(self, "symbol_rate_hz")
        step_size(self, "server_lr")


def check_aircomp(scenario: Scenario) -> None:
    """One analog slot per round: the ideal MAC (the slot is the medium access) and every
    invitation counted (no over-selection)."""
    server = scenario.server
    if not isinstance(server.algorithm, AirComp):
        return
    mac = scenario.network.mac
    require(mac.capabilities.aircomp, "network.mac.kind", mac.kind,
            f"{kinds_that('aircomp')} with server.algorithm.kind = 'aircomp' (the analog "
            "slot is the uplink's medium access)")
    require(server.overcommit == 1.0, "server.overcommit", server.overcommit,
            "1 with server.algorithm.kind = 'aircomp' (all invitees share one slot)")
    compression = server.compression.kind
    require(compression == "none", "server.compression.kind", compression,
            "none with server.algorithm.kind = 'aircomp' (the analog slot carries each "
            "update's real values; bits do not apply)")
