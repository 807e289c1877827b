"""The tie rule of slotted ALOHA: a slot counts iff its end, (k + 1) slot_s, is at or before
the round's deadline (its opening time plus deadline_s), the two floats compared exactly;
the per-event and the vectorised models follow it alike."""

import math

import numpy as np
import pytest

from conftest import everyone, make_sim
from simfl.core.config import SlottedAlohaMac
from simfl.sim.mac.access import last_slot_by, slot_end_s
from simfl.sim.mac.kinds import build_mac

MODELS = ("per_event", "vectorised")


def outcomes(contention, n_clients, compute_s, upload_s, deadline_s, slot_s, rounds):
    """Per round, per client: ("arrived", time) or (reason, time), and the close time."""
    sim = make_sim(n_clients=n_clients, compute_s=compute_s, upload_s=upload_s,
                   deadline_s=deadline_s)
    sim.devices.mac = sim.mac = build_mac(
        SlottedAlohaMac(access_prob=1.0, slot_s=slot_s, contention=contention), sim.env,
        sim.rngs, n_clients, sim.energy.charge_transmissions)
    rows = []
    for r in range(rounds):
        o = sim.run_round(r, everyone)
        got = {a.client: ("arrived", a.t_s) for a in o.received}
        got.update({m.client: (m.reason.value, m.t_s) for m in o.missing})
        rows.append((sorted(got.items()), o.t_close_s))
    return rows


def test_the_reproducer_gives_the_same_outcomes_in_both_models():
    """One client, p = 1, 1.185 s of compute, 10 ms slots, 1.2 s deadline. Round 2 opens at
    2.4 and its deadline is 2.4 + 1.2 = 3.5999999999999996, while the client's slot ends at
    360 * 0.01 = 3.6: after the deadline, so the client is still contending (collided).
    In the other rounds the slot ends by the deadline and the upload lands after it."""
    assert 2.4 + 1.2 < slot_end_s(359, 0.01) == 3.6
    per_event, vectorised = (outcomes(m, 1, (1.185,), 0.001, 1.2, 0.01, 4) for m in MODELS)
    assert per_event == vectorised
    assert [row[0][0][1][0] for row in per_event] == ["late", "late", "collided", "late"]


def test_an_upload_at_the_deadline_is_on_time_in_both_models():
    # ready at 0.9, slot [0.9, 1.0) ends at the deadline; an instantaneous upload lands there
    per_event, vectorised = (outcomes(m, 1, (0.9,), 0.0, 1.0, 0.1, 3) for m in MODELS)
    assert per_event == vectorised
    assert per_event[0][0][0][1] == ("arrived", 1.0)


@pytest.mark.parametrize("slot_s", [0.01, 0.05, 0.1])
def test_deadlines_swept_over_the_slot_grid_give_the_same_outcome_per_client(slot_s):
    """Deadlines of k slots and a float's width either side, for many k; clients ready
    half a slot, a slot and a half and a whole slot before the deadline (a lone client
    with p = 1: no chance, so both models must agree client by client, round by round,
    while the rounds' opening times drift off the grid)."""
    for k in range(2, 42, 3):
        grid_s = k * slot_s
        for deadline_s in (float(np.nextafter(grid_s, -math.inf)), grid_s,
                           float(np.nextafter(grid_s, math.inf))):
            compute_s = (deadline_s - 0.5 * slot_s, deadline_s - 1.5 * slot_s,
                         deadline_s - slot_s)
            for clients in ((0,), (1,), (2,)):
                runs = [outcomes(m, 1, tuple(compute_s[c] for c in clients), 0.0, deadline_s,
                                 slot_s, 3) for m in MODELS]
                assert runs[0] == runs[1], (slot_s, k, deadline_s, clients)


@pytest.mark.parametrize("t_s, slot_s", [(3.5999999999999996, 0.01), (3.6, 0.01), (0.3, 0.1),
                                         (0.30000000000000004, 0.1), (0.0, 0.5), (1e-12, 0.5)])
def test_the_last_slot_by_a_time_ends_by_it_and_the_next_one_after_it(t_s, slot_s):
    last = last_slot_by(t_s, slot_s)
    assert last == -1 or slot_end_s(last, slot_s) <= t_s
    assert slot_end_s(last + 1, slot_s) > t_s
