"""Uplink access models: TDMA timing, slotted ALOHA contention, the relay, config errors."""

import csv

import numpy as np
import pytest

from conftest import everyone, make_sim
from simfl import apply_overrides, run
from simfl.cli import main as cli_main
from simfl.core.config import RelayMac, SlottedAlohaMac, TdmaMac, parse_override
from simfl.core.errors import ConfigError
from simfl.sim.mac.aloha import contention as aloha_module
from simfl.sim.mac.aloha import queue as aloha_queue_module
from simfl.sim.mac import relay as relay_module
from simfl.sim.mac.kinds import build_mac
from simfl.sim.mac.tdma import tdma_finish_s


def with_mac(sim, cfg):
    """``sim`` (before its first round) with the uplink MAC of ``cfg``, charging its
    contention transmissions to the simulation's energy source."""
    sim.devices.mac = sim.mac = build_mac(cfg, sim.env, sim.rngs, len(sim.n_samples),
                                          sim.energy.charge_transmissions)
    return sim


def reasons(outcome):
    return {m.client: m.reason for m in outcome.missing}


def arrivals(outcome):
    return {a.client: a.t_s for a in outcome.received}


# ---- TDMA

@pytest.mark.parametrize("ready, airtime, rank, expected", [
    (0.0, 0.25, 0, 0.65),   # slots [0, .1), [.3, .4), then .05 of [.6, .7)
    (0.0, 0.25, 2, 0.85),   # slots [.2, .3), [.5, .6), [.8, .85)
    (0.05, 0.05, 0, 0.10),  # fits in the rest of the current slot
    (0.05, 0.10, 0, 0.35),  # .05 now, .05 in the next frame's slot
    (0.15, 0.10, 0, 0.40),  # ready after its slot: waits for the next frame
    (0.0, 0.0, 1, 0.0),
])
def test_tdma_finish_worked_examples(ready, airtime, rank, expected):
    assert tdma_finish_s(ready, airtime, rank, 3, 0.1) == pytest.approx(expected, abs=1e-12)


def test_tdma_slots_give_deterministic_upload_times():
    sim = with_mac(make_sim(n_clients=3, compute_s=(0.0,), upload_s=0.25, deadline_s=10.0),
                   TdmaMac(mode="slots", slot_s=0.1))
    sim.run_round(0, everyone)  # round 1 opens at 0.85: slots are relative to the opening
    outcome = sim.run_round(1, everyone)
    assert arrivals(outcome) == pytest.approx({0: 0.85 + 0.65, 1: 0.85 + 0.75, 2: 0.85 + 0.85})


def test_tdma_shared_bandwidth_divides_the_rate():
    sim = with_mac(make_sim(n_clients=4, compute_s=(1.0,), upload_s=0.5, deadline_s=10.0),
                   TdmaMac(mode="shared"))
    outcome = sim.run_round(0, everyone)
    assert arrivals(outcome) == pytest.approx({c: 1.0 + 4 * 0.5 for c in range(4)})


# ---- slotted ALOHA

def test_aloha_lone_client_with_p1_gets_the_next_slot():
    sim = with_mac(make_sim(n_clients=1, compute_s=(1.0,), upload_s=1.0),
                   SlottedAlohaMac(access_prob=1.0, slot_s=0.1))
    outcome = sim.run_round(0, everyone)
    assert arrivals(outcome) == pytest.approx({0: 1.1 + 1.0})  # slot [1.0, 1.1), then upload
    assert sim.mac.tx_slots.tolist() == [1]


def test_aloha_permanent_collision_is_collided_at_the_deadline_with_slot_counts():
    sim = with_mac(make_sim(n_clients=2, compute_s=(0.0,), upload_s=1.0, deadline_s=1.0,
                            seed=4), SlottedAlohaMac(access_prob=1.0, slot_s=0.1))
    sim.keep_events = True
    outcome = sim.run_round(0, everyone)
    assert reasons(outcome) == {0: "collided", 1: "collided"}
    assert outcome.n_missing("collided") == 2
    assert sim.mac.tx_slots.tolist() == [10, 10]
    stats = [e.detail for e in sim.events if e.kind == "mac_slots"]
    assert stats == ["2:10:0"]  # ten slots with two contenders, no success
    n_events = sim.n_events
    sim.env.run(until=100.0)  # quiescent: nobody contends after the round closed
    assert sim.n_events == n_events and sim.mac.tx_slots.tolist() == [10, 10]
    second = sim.run_round(1, everyone)
    assert reasons(second) == {0: "collided", 1: "collided"}


def test_aloha_retry_limit_gives_up_before_the_deadline():
    sim = with_mac(make_sim(n_clients=3, compute_s=(0.0,), upload_s=1.0, deadline_s=50.0),
                   SlottedAlohaMac(access_prob=1.0, slot_s=0.1, max_attempts=3))
    outcome = sim.run_round(0, everyone)
    assert set(reasons(outcome).values()) == {"collided"}
    assert outcome.t_close_s == pytest.approx(0.3)
    assert sim.mac.tx_slots.tolist() == [3, 3, 3]


def test_aloha_contenders_all_get_through_eventually_and_stats_add_up():
    sim = with_mac(make_sim(n_clients=6, compute_s=(0.0, 0.05, 0.13), upload_s=0.2,
                            deadline_s=1e4, seed=2),
                   SlottedAlohaMac(access_prob=0.3, slot_s=0.1, channels=2))
    sim.keep_events = True
    outcome = sim.run_round(0, everyone)
    assert len(outcome.received) == 6
    detail = next(e.detail for e in sim.events if e.kind == "mac_slots")
    wins = sum(int(item.split(":")[2]) for item in detail.split())
    assert wins == 6  # every grant happened in a counted slot


def test_binary_exponential_backoff_resolves_two_clients():
    sim = with_mac(make_sim(n_clients=2, compute_s=(0.0,), upload_s=0.1, deadline_s=1e4),
                   SlottedAlohaMac(backoff="binary_exponential", cw_min=1, slot_s=0.1))
    outcome = sim.run_round(0, everyone)
    assert len(outcome.received) == 2
    assert sim.mac.tx_slots.min() >= 2  # window 1: both collide in the first slot


@pytest.mark.parametrize("mac", [
    SlottedAlohaMac(access_prob=0.3, slot_s=0.05, channels=3, max_attempts=6,
                    contention="per_event"),
    SlottedAlohaMac(backoff="binary_exponential", cw_min=4, slot_s=0.05, contention="per_event"),
])
def test_aloha_dense_scan_and_sparse_heap_decide_the_same(monkeypatch, mac):
    def outcomes(dense_tx, scan_all_ratio=4):
        monkeypatch.setattr(aloha_module, "DENSE_TX", dense_tx)
        monkeypatch.setattr(aloha_queue_module, "SCAN_ALL_RATIO", scan_all_ratio)
        sim = with_mac(make_sim(n_clients=60, compute_s=(0.0, 0.02, 0.3, 0.7), upload_s=0.01,
                                deadline_s=3.0, seed=6), mac)
        rounds = [sim.run_round(r, everyone) for r in range(3)]
        return ([(arrivals(o), reasons(o)) for o in rounds],
                sim.mac.tx_slots.tolist(), sim.mac.collisions.tolist())
    sparse = outcomes(10**9)
    # from the first collision on: scanning every client, or only the contenders
    assert outcomes(2, scan_all_ratio=10**9) == sparse
    assert outcomes(2, scan_all_ratio=0) == sparse
    assert len(sparse[0][0][0]) > 10 and sum(sparse[2]) > 0


def test_aloha_stream_makes_rounds_reproducible():
    def once():
        sim = with_mac(make_sim(n_clients=8, compute_s=(0.0, 0.3), upload_s=0.2, seed=9),
                       SlottedAlohaMac(access_prob=0.2, slot_s=0.05))
        return [arrivals(sim.run_round(r, everyone)) for r in range(3)]
    assert once() == once()


# ---- relay

@pytest.mark.parametrize("policy", ["bernoulli", "capacity", "aloha"])
def test_relay_with_zero_probabilities_forwards_nobody(policy):
    sim = with_mac(make_sim(n_clients=4), RelayMac(policy=policy, probs=0.0))
    outcome = sim.run_round(0, everyone)
    assert outcome.received == () and set(reasons(outcome).values()) == {"collided"}


def test_relay_capacity_forwards_exactly_k():
    sim = with_mac(make_sim(n_clients=6, deadline_s=100.0),
                   RelayMac(policy="capacity", probs=(0.1, 0.2, 0.3, 0.1, 0.2, 0.3), capacity=2))
    for r in range(5):
        outcome = sim.run_round(r, everyone)
        assert len(outcome.received) == 2 and outcome.n_missing("collided") == 4


def test_relay_probability_list_must_match_the_population():
    sim = make_sim(n_clients=3)
    with pytest.raises(ConfigError, match="network.mac.probs"):
        with_mac(sim, RelayMac(probs=(0.5, 0.5)))


def test_bad_mac_settings_exit_2_with_the_field(capsys):
    code = cli_main(["validate", "quickstart", "--set", "network.mac.kind=slotted_aloha",
                     "--set", "network.mac.access_prob=1.5"])
    err = capsys.readouterr().err
    assert code == 2 and "access_prob" in err and "1.5" in err and "probability" in err
    with pytest.raises(ConfigError, match="cw_max"):
        SlottedAlohaMac(cw_min=8, cw_max=4)
    with pytest.raises(ConfigError, match="mode"):
        TdmaMac(mode="round_robin")


def _rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


def test_server_side_never_reads_the_relay_probabilities(tiny_scenario, tmp_path, monkeypatch):
    """Two runs whose relays have different probabilities but (scripted) identical
    decisions: samplers, aggregators and the round loop see only outcomes, so every
    table and the trained model agree. Any server-side read of the probabilities
    would make them differ."""
    calls = []

    def scripted(cfg, probs, started, rng):
        calls.append(len(started))
        return started[started % 3 != 0]

    monkeypatch.setattr(relay_module, "relay_draw", scripted)
    results = []
    for probs in ("0.05", "[" + ",".join(["0.95"] * 12) + "]"):
        scenario = apply_overrides(tiny_scenario, [
            parse_override("network.mac.kind=relay"), parse_override(f"network.mac.probs={probs}"),
            parse_override("server.algorithm.kind=fedavg"), parse_override("run.rounds=4")])
        results.append(run(scenario, tmp_path / probs[:4]))
    assert calls and len(calls) == 8
    first, second = results
    for name in ("rounds.csv", "evals.csv"):
        assert _rows(first.out_dir / name) == _rows(second.out_dir / name)
    assert first.outcomes == second.outcomes
    dropped = [m for o in first.outcomes for m in o.missing if m.reason == "collided"]
    assert dropped and all(m.client % 3 == 0 for m in dropped)
    assert first.summary["final_accuracy"] == second.summary["final_accuracy"]


# ---- TDMA energy: waiting for the slot costs idle power, transmitting costs the airtime

def _tdma_energy_sim(energy, mode):
    from simfl.sim.energy.infinite import InfiniteEnergy

    # three clients, 0.25 s of airtime each, frames of 3 x 0.1 s slots from t = 0
    return with_mac(make_sim(n_clients=3, compute_s=(0.0,), upload_s=0.25, deadline_s=10.0,
                             battery=InfiniteEnergy(3, energy)),
                    TdmaMac(mode=mode, slot_s=0.1))


@pytest.mark.parametrize("per_bit", [False, True])
def test_tdma_slots_charge_airtime_at_tx_power_and_the_wait_at_idle(per_bit):
    from simfl.core.config import Energy

    tx = dict(tx_j_per_bit=2.0 / 8000) if per_bit else dict(tx_w=8.0)  # 2 J per upload
    sim = _tdma_energy_sim(Energy(idle_w=0.5, compute_w=0.0, rx_w=0.0, **tx), "slots")
    outcome = sim.run_round(0, everyone)
    finish = {0: 0.65, 1: 0.75, 2: 0.85}
    assert arrivals(outcome) == pytest.approx(finish)
    airtime_j = 0.25 * 8.0 if not per_bit else 8000 * 2.0 / 8000
    expected = {c: airtime_j + 0.5 * (t - 0.25) for c, t in finish.items()}
    assert sim.battery.used_j.tolist() == pytest.approx([expected[c] for c in range(3)],
                                                        abs=1e-12)
    assert outcome.energy_j == pytest.approx(sum(expected.values()), abs=1e-12)


@pytest.mark.parametrize("tx", [dict(tx_w=8.0), dict(tx_j_per_bit=8.0 / 32000)])
def test_tdma_shared_transmits_the_whole_longer_attempt(tx):
    from simfl.core.config import Energy

    # a third of the rate each: 0.75 s on air. The radio draws 8 W, given as such or as
    # 2.5e-4 J/bit at the link's full 32 kb/s (8000 bits in 0.25 s): 6 J per upload
    # either way, n x airtime x tx_w = n x bits x J/bit
    sim = _tdma_energy_sim(Energy(idle_w=0.5, compute_w=0.0, rx_w=0.0, **tx), "shared")
    sim.run_round(0, everyone)
    assert sim.battery.used_j.tolist() == pytest.approx([3 * 0.25 * 8.0] * 3, abs=1e-12)
    assert sim.battery.used_j.tolist() == pytest.approx([3 * 8000 * 8.0 / 32000] * 3,
                                                        abs=1e-12)


def test_relay_aloha_with_a_billion_slots_is_instant():
    import time

    import numpy as np

    from simfl.core.rng import RngTree
    from simfl.sim.mac.relay import aloha_heard

    rng = RngTree(0).stream("relay")
    started = time.perf_counter()
    heard = aloha_heard(np.full(200, 0.05), 10**9, rng)
    assert heard.all()  # everyone is heard long before a billion slots
    # two clients that always transmit collide forever; p = 0 never transmits
    assert not aloha_heard(np.array([1.0, 1.0, 0.5]), 10**9, rng).any()
    assert aloha_heard(np.array([1.0, 0.0, 0.5]), 10**9, rng).tolist() == [True, False, True]
    assert not aloha_heard(np.array([1e-300, 1e-300]), 10**9, rng).any()
    assert time.perf_counter() - started < 1.0
    sim = with_mac(make_sim(n_clients=4), RelayMac(policy="aloha", probs=0.2, slots=10**9))
    assert len(sim.run_round(0, everyone).received) == 4


@pytest.mark.parametrize("override, field", [
    ("network.mac.slot_s=1e-300", "slot_s"), ("network.mac.slot_s=1e9", "slot_s"),
    ("network.mac.access_prob=1e-300", "access_prob"), ("network.mac.cw_max=1e18", "cw_max"),
])
def test_aloha_absurd_slots_and_probabilities_are_refused(override, field, capsys):
    code = cli_main(["validate", "quickstart", "--set", "network.mac.kind=slotted_aloha",
                     "--set", override])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and f"network.mac.{field}" in err[0]


def test_aloha_smallest_access_probability_runs_without_overflow():
    sim = with_mac(make_sim(n_clients=3, compute_s=(0.0,), deadline_s=5.0),
                   SlottedAlohaMac(access_prob=1e-9, slot_s=1e-6))
    outcome = sim.run_round(0, everyone)
    assert reasons(outcome) == {0: "collided", 1: "collided", 2: "collided"}
    sim = with_mac(make_sim(n_clients=3, compute_s=(0.0,), deadline_s=5.0),
                   SlottedAlohaMac(access_prob=(1.0, 1.0, 1e-9), slot_s=1e-6, max_attempts=2))
    assert set(reasons(sim.run_round(0, everyone))) == {0, 1, 2}


# ---- slotted ALOHA data phase: parallel uploads or one per data channel at a time

def _granted_in_turn(data_phase, channels=1, energy=None, deadline_s=10.0):
    """Clients ready at 0, 0.05 and 0.25 s transmit alone in slots 0, 1 and 3 (0.1 s
    slots, access prob 1), so they are granted at 0.1, 0.2 and 0.4 s; uploads take 1 s."""
    from simfl.sim.energy.infinite import InfiniteEnergy

    battery = None if energy is None else InfiniteEnergy(3, energy)
    sim = make_sim(n_clients=3, compute_s=(0.0, 0.05, 0.25), upload_s=1.0,
                   deadline_s=deadline_s, battery=battery)
    return with_mac(sim, SlottedAlohaMac(access_prob=1.0, slot_s=0.1, channels=channels,
                                         data_phase=data_phase))


def test_aloha_parallel_data_phase_uploads_at_once_after_access():
    outcome = _granted_in_turn("parallel").run_round(0, everyone)
    assert arrivals(outcome) == pytest.approx({0: 1.1, 1: 1.2, 2: 1.4})
    assert SlottedAlohaMac().data_phase == "parallel"


def test_aloha_serialised_data_phase_one_upload_per_channel():
    outcome = _granted_in_turn("serialised").run_round(0, everyone)
    assert arrivals(outcome) == pytest.approx({0: 1.1, 1: 2.1, 2: 3.1})
    outcome = _granted_in_turn("serialised", channels=2).run_round(0, everyone)
    assert arrivals(outcome) == pytest.approx({0: 1.1, 1: 1.2, 2: 2.1})


def test_aloha_serialised_wait_for_the_channel_costs_idle_power():
    from simfl.core.config import Energy

    energy = Energy(idle_w=0.5, compute_w=0.0, tx_w=2.0, rx_w=0.0)
    parallel = _granted_in_turn("parallel", energy=energy)
    parallel.run_round(0, everyone)
    serial = _granted_in_turn("serialised", energy=energy)
    serial.run_round(0, everyone)
    waits = np.array([0.0, 0.9, 1.7])  # 1.1 - 0.2 and 2.1 - 0.4
    assert serial.battery.used_j - parallel.battery.used_j == pytest.approx(0.5 * waits)


def test_aloha_serialised_queue_is_freed_by_clients_that_leave():
    # the round closes at 1.5 s: client 1 (on air since 1.1) and client 2 (queued for
    # 2.1) leave; the next round's first upload must not wait for their reservations
    sim = _granted_in_turn("serialised", deadline_s=1.5)
    first = sim.run_round(0, everyone)
    assert arrivals(first) == pytest.approx({0: 1.1}) and len(first.missing) == 2
    second = sim.run_round(1, lambda view: np.array([0]))
    assert second.t_open_s == pytest.approx(1.5)
    # slot grid from t = 0: ready at 1.5, transmits in slot 15, granted at 1.6
    assert arrivals(second) == pytest.approx({0: 2.6})


def test_aloha_data_phase_is_checked():
    with pytest.raises(ConfigError, match="data_phase"):
        SlottedAlohaMac(data_phase="queued")


# ---- slot statistics as records, and mac.csv

def test_aloha_round_outcome_carries_slot_records():
    from simfl.core.records import MacSlots

    sim = with_mac(make_sim(n_clients=2, compute_s=(0.0,), upload_s=1.0, deadline_s=1.0,
                            seed=4), SlottedAlohaMac(access_prob=1.0, slot_s=0.1))
    assert sim.run_round(0, everyone).mac_slots == (MacSlots(0, 2, 10, 0),)
    assert sim.run_round(1, everyone).mac_slots == (MacSlots(1, 2, 10, 0),)


def test_slot_records_match_the_mac_slots_event_text():
    sim = with_mac(make_sim(n_clients=6, compute_s=(0.0, 0.05, 0.13), upload_s=0.2,
                            deadline_s=1e4, seed=2),
                   SlottedAlohaMac(access_prob=0.3, slot_s=0.1, channels=2))
    outcome = sim.run_round(0, everyone)
    detail = next(e.detail for e in sim.events if e.kind == "mac_slots")
    assert detail == " ".join(f"{s.contenders}:{s.slots}:{s.successes}"
                              for s in outcome.mac_slots)
    assert [s.contenders for s in outcome.mac_slots] == sorted({s.contenders
                                                                for s in outcome.mac_slots})
    assert sum(s.successes for s in outcome.mac_slots) == 6


@pytest.mark.parametrize("mac", [None, TdmaMac(slot_s=0.1)])
def test_macs_without_contention_have_no_slot_records(mac):
    sim = make_sim(n_clients=2, compute_s=(0.0,), upload_s=0.25)
    if mac is not None:
        sim = with_mac(sim, mac)
    assert sim.run_round(0, everyone).mac_slots is None


def test_run_writes_mac_csv_with_contention_even_without_events(tiny_scenario, tmp_path):
    import simfl
    from simfl.core.config import apply_overrides
    from simfl.metrics.rundir import read_csv

    s = apply_overrides(tiny_scenario, [
        ("run.timing_only", True), ("run.rounds", 4), ("run.events", False),
        ("network.mac", {"kind": "slotted_aloha", "access_prob": 0.3, "slot_s": 0.05})])
    result = simfl.run(s, tmp_path / "aloha")
    assert not (result.out_dir / "events.csv").exists()
    text = (result.out_dir / "mac.csv").read_text()
    assert text.splitlines()[0] == "round,contenders,slots,successes"
    rows = [tuple(int(v) for v in row.values()) for row in read_csv(result.out_dir / "mac.csv")]
    expected = [(r.round, r.contenders, r.slots, r.successes)
                for o in result.outcomes for r in o.mac_slots]
    assert rows == expected and rows
    rounds = read_csv(result.out_dir / "rounds.csv")
    for outcome, row in zip(result.outcomes, rounds):  # every grant is a counted success
        assert sum(r.successes for r in outcome.mac_slots) >= int(row["n_received"])


def test_run_with_ideal_mac_writes_no_mac_csv(tiny_scenario, tmp_path):
    import simfl
    from simfl.core.config import apply_overrides

    s = apply_overrides(tiny_scenario, [("run.timing_only", True), ("run.rounds", 2)])
    assert not (simfl.run(s, tmp_path / "ideal").out_dir / "mac.csv").exists()
