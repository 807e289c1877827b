"""Every OFDMA scheduler (``network.mac.scheduler``), built in or plugged in, splits a
cell's band into shares in [0, 1] that sum to at most 1, the same way for the same
inputs, and serves a whole OFDMA round under the MAC contract."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import simfl
from simfl.core.config.network import OfdmaMac
from simfl.sim.mac.band_split import BandSplit, build_band_split

from .kinds import kinds, registered_for_now
from .test_network_contracts import mac_contract

N_CLIENTS = 8


def shares(name: str) -> list[np.ndarray]:
    """The split of ``name`` over three rounds of uploads joining one by one."""
    split = build_band_split(OfdmaMac(scheduler=name), None, N_CLIENTS)
    assert isinstance(split, BandSplit)
    out = []
    for round in range(3):
        split.new_round()
        started = np.arange(round, N_CLIENTS)
        if split.needs_plan:
            split.plan(started, 8e5, 10.0)
        for n in range(1, started.size + 1):
            clients = started[:n]
            link_bps = 1e6 * (1.0 + clients)
            fractions = np.asarray(split.fractions(clients, link_bps), dtype=float)
            rates = np.asarray(split.rates_bps(clients, link_bps), dtype=float)
            split.served(clients, rates, 0.1)
            out += [fractions, rates]
    return out


def scheduler_contract(name: str) -> None:
    got = shares(name)
    for fractions, rates in zip(got[::2], got[1::2]):
        assert np.all(fractions >= 0) and fractions.sum() <= 1 + 1e-12, fractions
        assert np.all(np.isfinite(rates)) and np.all(rates >= 0), rates
    assert all(np.array_equal(a, b) for a, b in zip(got, shares(name))), \
        "the same uploads gave another split"
    mac_contract(OfdmaMac(scheduler=name))


@pytest.mark.parametrize("name", kinds("schedulers"))
def test_scheduler_contract(name):
    scheduler_contract(name)


def test_a_plugged_in_scheduler_is_built_by_the_ofdma_mac_and_checked():
    with registered_for_now("schedulers"):
        @dataclass(frozen=True)
        class LowestIdFirst(simfl.Scheduler):
            """The whole band to the active upload of the lowest client id."""
            kind = "lowest_id_first"

        @simfl.register(LowestIdFirst)
        class LowestIdSplit(BandSplit):
            def fractions(self, clients, link_bps):
                out = np.zeros(clients.size)
                out[0] = 1.0  # clients come sorted by id
                return out

        assert "lowest_id_first" in kinds("schedulers")
        assert isinstance(build_band_split(OfdmaMac(scheduler="lowest_id_first"), None, 4),
                          LowestIdSplit)
        scheduler_contract("lowest_id_first")
    # the config alone names its own field; a scenario prefixes it with network.mac
    with pytest.raises(simfl.ConfigError, match="^scheduler = 'lowest_id_first'"):
        OfdmaMac(scheduler="lowest_id_first")
