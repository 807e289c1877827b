"""The synchronous round: deadline, tie rule, ARQ, offline invites, overcommit, quiescence."""

import numpy as np
import pytest

from conftest import everyone, make_sim
from simfl.core.config import Bernoulli
from simfl.core.rng import RngTree
from simfl.sim.availability.rounds import BernoulliOnline


def reasons(outcome):
    return {m.client: m.reason for m in outcome.missing}


def test_upload_ending_exactly_at_the_deadline_is_on_time():
    # client 0: 1 s compute + 1 s upload = 2 s = deadline; client 1: 1.5 + 1 = 2.5 s
    sim = make_sim(n_clients=2, compute_s=(1.0, 1.5), upload_s=1.0, deadline_s=2.0)
    outcome = sim.run_round(0, everyone)
    assert [a.client for a in outcome.received] == [0]
    assert outcome.received[0].t_s == 2.0
    assert reasons(outcome) == {1: "late"}
    assert outcome.t_close_s == 2.0


def test_round_closes_early_when_every_invitee_resolved():
    sim = make_sim(n_clients=3, compute_s=(1.0, 2.0, 3.0), upload_s=0.5, deadline_s=100.0)
    outcome = sim.run_round(0, everyone)
    assert outcome.t_close_s == 3.5
    assert [a.t_s for a in outcome.received] == [1.5, 2.5, 3.5]
    second = sim.run_round(1, everyone)
    assert second.t_open_s == 3.5 and second.t_close_s == 7.0


def test_round_boundary_is_quiescent():
    sim = make_sim(n_clients=3, compute_s=(1.0, 5.0, 9.0), deadline_s=4.0)
    outcome = sim.run_round(0, everyone)
    assert sim.now_s == 4.0 and reasons(outcome) == {1: "late", 2: "late"}
    n_events = sim.n_events
    sim.env.run(until=1000.0)  # nothing of round 0 may still be running
    assert sim.n_events == n_events


def test_all_attempts_erased_counts_erased_and_retries():
    sim = make_sim(n_clients=4, compute_s=(1.0,), upload_s=1.0, p_erasure=1.0, arq=3,
                   deadline_s=100.0)
    outcome = sim.run_round(0, everyone)
    assert outcome.received == ()
    assert set(reasons(outcome).values()) == {"erased"}
    assert outcome.retries == 4 * 2
    assert outcome.t_close_s == 1.0 + 3 * 1.0


def test_arq_retry_that_runs_past_the_deadline_is_late():
    sim = make_sim(n_clients=1, compute_s=(1.0,), upload_s=1.0, p_erasure=1.0, arq=5,
                   deadline_s=3.5)
    assert reasons(sim.run_round(0, everyone)) == {0: "late"}


def test_blind_invites_of_offline_clients_are_missing_offline():
    rngs = RngTree(0)
    online = BernoulliOnline(Bernoulli(p=(1.0, 0.0, 1.0, 0.0)), 4, rngs)
    sim = make_sim(n_clients=4, online=online)
    outcome = sim.run_round(0, lambda view: np.arange(view.n_clients))
    assert reasons(outcome) == {1: "offline", 3: "offline"}
    assert outcome.n_available == 2


def test_overcommit_closes_when_enough_updates_are_in():
    sim = make_sim(n_clients=4, compute_s=(1.0, 2.0, 3.0, 4.0), upload_s=1.0,
                   clients_per_round=2, overcommit=2.0, deadline_s=100.0)
    outcome = sim.run_round(0, everyone)
    assert [a.client for a in outcome.received] == [0, 1]
    assert outcome.t_close_s == 3.0
    assert reasons(outcome) == {2: "late", 3: "late"}


def test_a_round_with_nobody_working_lasts_until_its_deadline():
    sim = make_sim(n_clients=3, deadline_s=10.0)
    nobody = sim.run_round(0, lambda view: np.array([], dtype=int))
    assert nobody.t_close_s == 10.0 and nobody.selected == ()
    rngs = RngTree(0)
    offline = make_sim(n_clients=3, deadline_s=10.0,
                       online=BernoulliOnline(Bernoulli(p=0.0), 3, rngs))
    blind = offline.run_round(0, lambda view: np.arange(3))  # everyone invited is offline
    assert blind.t_close_s == 10.0 and blind.n_missing("offline") == 3


def test_erasure_with_arq_matches_binomial():
    """P(update erased) = p^M; 4 sigma binomial tolerance over 2,000 uploads."""
    p, m, n_clients, rounds = 0.3, 2, 100, 20
    sim = make_sim(n_clients=n_clients, p_erasure=p, arq=m, deadline_s=1e6, seed=11)
    erased = sum(o.n_missing("erased") for o in (sim.run_round(r, everyone) for r in range(rounds)))
    n, q = n_clients * rounds, p ** m
    assert abs(erased / n - q) <= 4 * np.sqrt(q * (1 - q) / n)


def test_bernoulli_availability_frequency():
    """Each client's online frequency ~ p_i (p_i ~ U(0.2, 1)); 4 sigma over 400 rounds."""
    rngs = RngTree(5)
    model = BernoulliOnline(Bernoulli(p_min=0.2), 50, rngs)
    freq = np.mean([model.online(r, 0.0) for r in range(400)], axis=0)
    assert (model.p >= 0.2).all() and (model.p <= 1).all()
    assert (np.abs(freq - model.p) <= 4 * np.sqrt(model.p * (1 - model.p) / 400) + 1e-9).all()


def test_per_client_probability_list_must_match_population():
    from simfl.core.errors import ConfigError

    with pytest.raises(ConfigError, match="population.availability.p"):
        BernoulliOnline(Bernoulli(p=(0.5, 0.5)), 3, RngTree(0))


# ------------------------------------------------------------ late uploads kept (store)

def test_a_kept_late_device_lands_in_a_later_round_and_is_not_reinvited_while_busy():
    # client 1: 8.5 s compute + 1 s upload lands at 9.5 s; deadlines every 4 s
    sim = make_sim(n_clients=2, compute_s=(1.0, 8.5), deadline_s=4.0, keep_late=True)
    first = sim.run_round(0, everyone)
    assert first.t_close_s == 4.0  # the busy device does not hold the round open
    assert [a.client for a in first.received] == [0] and reasons(first) == {1: "late"}
    assert first.late_received == () and sim.late_running == {1: 0}
    second = sim.run_round(1, everyone)  # opens at 4 s, closes when client 0 is done (6 s)
    assert second.selected == (0,) and second.n_available == 1
    assert second.t_close_s == 6.0 and second.late_received == ()
    third = sim.run_round(2, everyone)  # 6 s to 8 s
    assert third.selected == (0,) and third.late_received == ()
    fourth = sim.run_round(3, everyone)  # 8 s to 10 s: client 1 lands at 9.5 s
    assert fourth.selected == (0,) and fourth.t_close_s == 10.0
    assert [(a.client, a.base_round, a.t_s) for a in fourth.late_received] == [(1, 0, 9.5)]
    assert [a.client for a in fourth.received] == [0]
    assert sim.late_running == {}
    fifth = sim.run_round(4, everyone)
    assert fifth.selected == (0, 1) and fifth.late_received == ()


def test_without_keep_late_the_same_device_is_interrupted_and_never_lands():
    sim = make_sim(n_clients=2, compute_s=(1.0, 9.0), deadline_s=4.0)
    sim.run_round(0, everyone)
    later = [sim.run_round(r, everyone) for r in range(1, 5)]
    assert all(o.late_received == () for o in later) and sim.late_running == {}
    assert later[0].selected == (0, 1)


def test_a_kept_late_device_still_goes_offline_after_the_deadline():
    class LeavesAt:  # always online when asked; client 1 leaves at 7 s
        def online(self, round, t_s):
            return np.ones(2, dtype=bool)

        def offline_at(self, clients):
            return np.where(np.asarray(clients) == 1, 7.0, np.inf)

    sim = make_sim(n_clients=2, compute_s=(1.0, 9.0), deadline_s=4.0, online=LeavesAt(),
                   keep_late=True)
    sim.run_round(0, everyone)
    later = [sim.run_round(r, lambda view: np.array([0])) for r in range(1, 6)]
    assert all(o.late_received == () for o in later) and sim.late_running == {}
    assert [(e.t_s, e.kind) for e in sim.events if e.client == 1][-1] == (7.0, "offline")


def test_keep_late_needs_the_ideal_mac():
    from simfl.core.config.network import SlottedAlohaMac
    from simfl.sim.simulation import Simulation

    with pytest.raises(ValueError, match="ideal MAC"):
        Simulation(rngs=RngTree(0), n_samples=np.ones(1), work_samples=np.ones(1),
                   samples_per_s=np.ones(1), online=None, links={}, model_bytes=1,
                   arq_max_attempts=1, clients_per_round=1, overcommit=1.0, deadline_s=1.0,
                   mac=SlottedAlohaMac(), keep_late=True)


# ---- late events (deadlines, depletion timers) through SimPy's public API

def test_a_late_event_fires_after_a_chain_of_zero_delay_events_of_its_instant():
    import simpy

    from simfl.sim.clock import LateEvents

    env = simpy.Environment()
    late = LateEvents(env)
    order = []

    def chain():
        yield env.timeout(1.0)
        for step in range(3):  # zero-delay events started at the late event's instant
            yield env.timeout(0)
            order.append(f"chain {step}")

    deadline = late.timeout(1.0)  # made before the chain's events
    deadline.callbacks.append(lambda _e: order.append("deadline"))
    env.process(chain())
    env.run(until=2.0)
    assert order == ["chain 0", "chain 1", "chain 2", "deadline"]
    assert deadline.ok and deadline.value is None


def test_late_events_of_one_instant_fire_in_creation_order_after_each_others_consequences():
    import simpy

    from simfl.sim.clock import LateEvents

    env = simpy.Environment()
    late = LateEvents(env)
    order = []

    def follow(name):
        def callback(_event):
            order.append(name)
            env.timeout(0).callbacks.append(lambda _e: order.append(f"{name} consequence"))
        return callback

    for name in ("first", "second"):
        late.timeout(0.5).callbacks.append(follow(name))
    env.run(until=1.0)
    assert order == ["first", "first consequence", "second", "second consequence"]


def test_late_events_at_different_instants_fire_at_their_own_time():
    import simpy

    from simfl.sim.clock import LateEvents

    env = simpy.Environment()
    late = LateEvents(env)
    fired = []
    for delay_s in (2.0, 0.0, 1.0):
        late.timeout(delay_s).callbacks.append(lambda _e: fired.append(env.now))
    env.run(until=5.0)
    assert fired == [0.0, 1.0, 2.0]


# ---- devices work with their collaborators, not with the simulation

def test_a_device_round_runs_on_its_collaborators_alone():
    import simpy

    from simfl.core.config import Energy, ErasureChannel, FixedRate, IdealChannel, IdealMac
    from simfl.core.records import EventKind, MissingReason
    from simfl.sim.links.channel import Links, build_link
    from simfl.sim.rounds.device import Devices, device_round
    from simfl.sim.energy.infinite import InfiniteEnergy
    from simfl.sim.event_log import EventLog
    from simfl.sim.mac.kinds import build_mac

    env, rngs, log = simpy.Environment(), RngTree(0), EventLog()
    energy = InfiniteEnergy(1, Energy(compute_w=2.0, rx_w=0.0, tx_w=1.0))
    energy.bind(env, None, log.record)
    up = ErasureChannel(p=1.0, rate=FixedRate(rate_bps=8000.0))  # every attempt lost, 1 s each
    devices = Devices(env, rngs, links=Links(build_link(IdealChannel(rate=FixedRate(rate_bps=8e9))),
                                             build_link(up)),
                      mac=build_mac(IdealMac(), env, rngs, 1), energy=energy, model_bytes=1000,
                      arq_max_attempts=3, compute_s=np.array([1.5]), samples_per_s=np.ones(1),
                      n_samples=np.array([10]), log=log.log)
    proc = env.process(device_round(devices, 0, 7))
    env.run(proc)
    missing = proc.value
    assert missing.reason is MissingReason.ERASED and missing.reason == "erased"
    assert missing.t_s == pytest.approx(1e-6 + 1.5 + 3.0)
    assert devices.retries == 2  # three attempts, two of them retries
    kinds = [e.kind for e in log.events]
    assert kinds.count(EventKind.ATTEMPT_LOST) == 3 and kinds[-1] == "erased"
    assert energy.take_round_energy_j() == pytest.approx(2.0 * 1.5 + 3 * 1.0)


def test_missing_reasons_are_str_enums_equal_to_their_table_names():
    from simfl.core.records import MISSING_REASONS, EventKind, MissingReason

    assert MISSING_REASONS == ("offline", "erased", "late", "battery", "collided", "truncated")
    assert [str(r) for r in MissingReason] == list(MISSING_REASONS)
    assert f"{MissingReason.LATE}" == "late" and f"{EventKind.ROUND_OPEN}" == "round_open"
    outcome = make_sim(n_clients=2, compute_s=(1.0, 20.0)).run_round(0, everyone)
    assert [m.reason for m in outcome.missing] == [MissingReason.LATE]


def test_built_collaborators_are_injected_and_must_share_the_clock():
    import simpy

    from simfl.core.config import Energy, SlottedAlohaMac
    from simfl.sim.links.channel import Links
    from simfl.sim.energy.infinite import InfiniteEnergy
    from simfl.sim.mac.kinds import build_mac
    from simfl.sim.simulation import Simulation

    template = make_sim(n_clients=2, compute_s=(0.0,), upload_s=1.0, deadline_s=1.0)
    env, rngs = simpy.Environment(), RngTree(4)
    energy = InfiniteEnergy(2, Energy(idle_w=0.0, compute_w=0.0, tx_w=2.0, rx_w=0.0))
    mac = build_mac(SlottedAlohaMac(access_prob=1.0, slot_s=0.1), env, rngs, 2,
                    energy.charge_transmissions)
    common = dict(rngs=rngs, n_samples=np.full(2, 10), work_samples=np.zeros(2),
                  samples_per_s=np.ones(2), online=template.online,
                  links=Links(template.links.downlink, template.links.uplink), model_bytes=1000,
                  arq_max_attempts=1, clients_per_round=2, overcommit=1.0, deadline_s=1.0,
                  battery=energy, mac=mac)
    sim = Simulation(**common, env=env)
    assert sim.env is env and sim.mac is mac and sim.energy is energy
    outcome = sim.run_round(0, everyone)  # ten collided slots of 0.1 s at 2 W, each
    assert outcome.energy_j == pytest.approx(2 * 10 * 0.1 * 2.0)
    with pytest.raises(ValueError, match="clock"):
        Simulation(**common, env=simpy.Environment())
