"""Query exchanges before a round: timing, lost answers, the deadline, the round after."""

import numpy as np
import pytest

from conftest import everyone, make_sim


def test_query_answers_arrive_after_down_work_up():
    sim = make_sim(n_clients=4, compute_s=(2.0,), upload_s=1.0, download_s=0.5)
    answered = sim.run_query(0, np.array([2, 0]), np.array([1.0, 1.0, 3.0, 1.0]), 1000, "q")
    # 0.5 s down + work / (1 sample/s) + 1 s up for the 1000-byte answer; slowest: 4.5 s
    assert list(answered) == [0, 2] and sim.now_s == pytest.approx(4.5)


def test_query_deadline_and_erasures_lose_answers():
    sim = make_sim(n_clients=3, upload_s=1.0, deadline_s=3.0)
    answered = sim.run_query(0, np.arange(3), np.array([1.0, 2.0, 5.0]), 1000, "q")
    assert list(answered) == [0, 1] and sim.now_s == pytest.approx(3.0)
    lossy = make_sim(n_clients=3, upload_s=1.0, p_erasure=1.0)
    assert list(lossy.run_query(0, np.arange(3), np.ones(3), 1000, "q")) == []


def test_round_opens_before_its_query_and_invites_after():
    sim = make_sim(n_clients=2, compute_s=(1.0,), upload_s=1.0, deadline_s=5.0)

    def select(view):
        sim.run_query(view.round, view.available, np.ones(2), 1000, "q")  # 2 s
        return everyone(view)

    outcome = sim.run_round(0, select)
    assert outcome.t_open_s == 0.0 and outcome.t_deadline_s == pytest.approx(7.0)
    assert [a.t_s for a in outcome.received] == pytest.approx([4.0, 4.0])
