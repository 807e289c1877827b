"""FedCS (server.policy = fedcs) against rounds computed by hand."""

import numpy as np
import pytest

from band_helpers import band_sim, everyone
from simfl.algorithms.fedcs import FedCSPolicy, fedcs_order
from simfl.core.config import IdealMac
from simfl.core.config.policy import FedCS
from simfl.core.round_policy import RoundState
from simfl.sim.rounds.resources import RoundResources


def state(download_s, compute_s, upload_s, deadline_s, bits=24e6):
    n = len(compute_s)
    return RoundState(round=0, t_s=0.0, deadline_s=deadline_s, clients=np.arange(n),
                      n_samples=np.full(n, 10), compute_s=np.asarray(compute_s, float),
                      download_s=np.asarray(download_s, float),
                      uplink_bps=bits / np.asarray(upload_s, float), upload_bits=bits,
                      tx_w=4.0, battery_j=np.full(n, np.inf), energy_used_j=np.zeros(n),
                      last_round=np.full(n, -1))


# Five candidates, deadline 10 s, every download 1 s.
#   compute  2   5   1   8   3    -> ready = download + compute = 3, 6, 2, 9, 4
#   upload   2   1   3   0.5 2
# Uploads go one at a time; adding k ends the schedule at max(theta, ready_k) + upload_k.
#   theta 0:   ends 5, 7, 5, 9.5, 6      -> 0 (ties with 2: lower id), theta 5
#   theta 5:   ends 7, 8, 9.5, 7 (1,2,3,4) -> 1 (ties with 4), theta 7
#   theta 7:   ends 10, 9.5, 9 (2,3,4)   -> 4, theta 9
#   theta 9:   ends 12, 9.5 (2,3)        -> 3, theta 9.5 (<= 10: kept)
#   theta 9.5: ends 12.5 (2)             -> over 10: dropped
# Selected {0, 1, 3, 4}, uploading in the order 0, 1, 4, 3; the round ends at 9.5 s.
HAND = dict(download_s=[1.0] * 5, compute_s=[2.0, 5.0, 1.0, 8.0, 3.0],
            upload_s=[2.0, 1.0, 3.0, 0.5, 2.0], deadline_s=10.0)


def test_fedcs_greedy_matches_the_hand_computed_round():
    s = state(**HAND)
    order, end_s = fedcs_order(s.download_s + s.compute_s, s.upload_s, 10.0)
    assert order == [0, 1, 4, 3] and end_s == 9.5
    allocation = FedCSPolicy(FedCS()).decide(s)
    assert list(allocation.selected) == [0, 1, 3, 4]
    assert not (allocation.share or allocation.tx_power_dbm or allocation.cpu_hz)


def test_a_fraction_of_the_deadline_drops_the_last_upload():
    # with 0.9 x 10 = 9 s: after theta = 9 client 3 would end at 9.5 > 9, client 2 at 12
    allocation = FedCSPolicy(FedCS(deadline_fraction=0.9)).decide(state(**HAND))
    assert list(allocation.selected) == [0, 1, 4]


def test_fedcs_in_a_simulation_invites_only_the_clients_that_fit():
    # band_helpers: instant download, uploads of 1 s each; compute 0, 0.5, 3, 9.5, deadline 4:
    # ends 1, 1.5, 4, 10.5 -> 0 (theta 1); then 2, 4, 10.5 -> 1 (theta 2);
    # then max(2, 3) + 1 = 4 <= 4 -> 2 (theta 4); 10.5 > 4 -> client 3 dropped
    sim = band_sim([0.0, 0.5, 3.0, 9.5], IdealMac(), deadline_s=4.0)
    sim.resources = RoundResources(FedCSPolicy(FedCS()), sim.devices, 4)
    outcome = sim.run_round(0, everyone)
    assert outcome.selected == (0, 1, 2)
    assert sorted(a.client for a in outcome.received) == [0, 1, 2] and not outcome.missing
    # the next round knows who took part last
    later = sim.resources.state(1, sim.now_s, 4.0, np.arange(4))
    assert later.last_round.tolist() == [0, 0, 0, -1]
    assert later.upload_s == pytest.approx([1.0] * 4)
