"""Every round policy (``server.policy``) with an implementation, built in or plugged in,
decides from a round's state an allocation the simulation accepts (its own checker):
invitees among the candidates, band shares of each cell summing to at most 1, powers
under the cap; the same state gives the same decision, and the state is not changed."""

from __future__ import annotations

import numpy as np
import pytest

import simfl.algorithms.policies  # noqa: F401  (names the built-in policies' implementations)
from simfl.core.registry import REGISTRIES, has_implementation, implementation_of
from simfl.core.round_policy import Allocation, RoundState, check_allocation

from .kinds import config_of, kinds


def _state() -> RoundState:
    """Six candidates of an OFDMA cell without a radio: varied compute and link rates."""
    n = 6
    return RoundState(round=3, t_s=30.0, deadline_s=10.0, clients=np.array([1, 2, 4, 5, 7, 9]),
                      n_samples=np.full(n, 40), compute_s=np.array([1.0, 2.0, 3.0, 4.0, 6.0, 9.0]),
                      download_s=np.full(n, 0.5), uplink_bps=np.array([8e6, 4e6, 2e6, 1e6, 8e6, 1e6]),
                      upload_bits=8e6, tx_w=0.2, battery_j=np.full(n, np.inf),
                      energy_used_j=np.zeros(n), last_round=np.array([-1, 2, 1, -1, 0, 2]),
                      ofdma=True)


@pytest.mark.parametrize("name", kinds("policies"))
def test_every_policy_decides_an_allocation_the_simulation_accepts(name):
    cfg = config_of("policies", name, {})
    if not has_implementation(cfg):
        pytest.skip(f"{name}: no implementation (the sampler's choice stands)")
    policy = implementation_of(cfg, "server.policy.kind")(cfg)
    state = _state()
    clients = state.clients.copy()
    first = policy.decide(state)
    assert isinstance(first, Allocation)
    assert set(first.selected) <= set(int(c) for c in clients)
    check_allocation(state, first)
    assert np.array_equal(state.clients, clients), "the state is the policy's to read only"
    again = implementation_of(cfg, "server.policy.kind")(cfg).decide(_state())
    assert list(again.selected) == list(first.selected) and dict(again.share) == dict(first.share)


def test_the_suite_covers_the_registry():
    assert {"fedcs", "min_energy"} <= set(REGISTRIES["policies"].names())
