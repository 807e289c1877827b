"""The fast forms of a round give the per-event model's numbers, and large populations stay small.

Three forms run a round's device work: SimPy processes (the reference), chained event
callbacks and the one-loop fast round. The simulation picks the lightest that covers a
round; every form must write the same tables, byte for byte.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import numpy as np
import pytest

import simfl
from simfl.core.config import apply_overrides, parse_override
from simfl.experiment import run_scenario
from simfl.sim.rounds import engines as round_engines
from simfl.sim.rounds import fast as fast_round
from simfl.sim.rounds.loops import RoundLoops
from simfl.sim import clock
from simfl.sim.mac.access import per_client

TABLES = ("rounds.csv", "clients.csv", "events.csv", "mac.csv")
#: per-event contention: the fast loop and the clock must make the same draws
ALOHA = ("network.mac.kind=slotted_aloha", "network.mac.access_prob=0.05",
         "network.mac.slot_s=0.02", "network.mac.contention=per_event")


def small_scenario(*overrides: str) -> simfl.Scenario:
    """50 timing-only clients, 10 invited per round, ideal links, 12 rounds, events kept."""
    scenario = simfl.Scenario(
        name="small", seed=4,
        task=simfl.Task(dataset=simfl.Synthetic(), partition=simfl.Iid(), n_clients=50),
        population=simfl.Population(compute=simfl.Compute(median_samples_per_s=60.0, sigma=0.6),
                                    availability=simfl.Bernoulli(p=0.9)),
        network=simfl.Network(uplink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=1e6))),
        server=simfl.Server(clients_per_round=10, deadline_s=6.0),
        run=simfl.Run(rounds=12, timing_only=True, events=True))
    return apply_overrides(scenario, [parse_override(s) for s in overrides])


def tables(scenario: simfl.Scenario) -> dict[str, bytes]:
    """The run's tables (and its event count) as bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        result = run_scenario(scenario, Path(tmp) / "run")
        out = {name: (Path(tmp) / "run" / name).read_bytes()
               for name in TABLES if (Path(tmp) / "run" / name).exists()}
    out["events"] = str(result.summary["events"]).encode()
    return out


def forms(monkeypatch: pytest.MonkeyPatch, scenario: simfl.Scenario) -> list[dict[str, bytes]]:
    """The tables with the fast round, with chained devices, and with processes only."""
    runs = [tables(scenario)]
    with monkeypatch.context() as m:
        m.setattr(RoundLoops, "engines", frozenset({"process", "callbacks"}))
        runs.append(tables(scenario))
        m.setattr(RoundLoops, "engines", frozenset({"process"}))
        runs.append(tables(scenario))
    return runs


@pytest.mark.parametrize("overrides", [
    (),
    ALOHA + ("network.mac.channels=3",),
    ALOHA + ("network.mac.backoff=binary_exponential", "network.mac.max_attempts=2",
             "network.mac.access_prob=0.3"),
    ALOHA + ("network.mac.access_prob=0.9", "population.compute.sigma=0.0",
             "server.clients_per_round=40"),  # dense contention: every one in the same slot
    ALOHA + ("server.deadline_s=1.0", "population.energy.tx_j_per_bit=1e-7",
             "population.energy.idle_w=0.1"),
    # slot ends and upload ends fall on the same instants (1 s uploads, 0.125 s slots)
    ("network.mac.kind=slotted_aloha", "network.mac.slot_s=0.125", "network.mac.access_prob=0.25",
     "network.mac.contention=per_event", "population.compute.sigma=0.0", "network.uplink.rate.rate_bps=100000",
     "network.model_bytes=12500"),
    ("server.deadline_s=0.01",),  # downloads cut by the deadline
], ids=["ideal", "aloha", "aloha_backoff", "aloha_dense", "aloha_short_per_bit", "aloha_ties",
        "cut_downloads"])
def test_fast_round_and_chained_devices_write_the_tables_of_processes(monkeypatch, overrides):
    fast, chained, processes = forms(monkeypatch, small_scenario(*overrides))
    assert fast["events"] != b"0" and fast.keys() == processes.keys()
    assert fast == processes
    assert chained == processes


@pytest.mark.parametrize("overrides", [
    ("network.uplink.kind=erasure", "network.uplink.p=0.3", "network.arq_max_attempts=2") + ALOHA,
    ("network.uplink.kind=rayleigh", "server.overcommit=1.5"),
    ("network.mac.kind=tdma", "network.mac.slot_s=0.05"),
    # uploads spread over several slots, idle power between them, some per-bit retries
    ("network.mac.kind=tdma", "network.mac.slot_s=0.01", "population.energy.idle_w=0.3",
     "population.energy.tx_j_per_bit=1e-6", "network.uplink.kind=erasure",
     "network.uplink.p=0.3", "network.arq_max_attempts=2"),
    ("network.mac.kind=relay",) + ("network.uplink.kind=gilbert_elliott",),
], ids=["erasure_aloha", "rayleigh_overcommit", "tdma", "tdma_idle_per_bit",
        "relay_gilbert_elliott"])
def test_chained_devices_write_the_tables_of_processes(monkeypatch, overrides):
    fast, chained, processes = forms(monkeypatch, small_scenario(*overrides))
    assert fast == chained == processes


def test_slot_ends_pass_between_the_loop_and_the_clock(monkeypatch):
    """Markov availability: rounds in which a client leaves run on the clock, the others in
    the loop; ALOHA's slot ends still due move between them with the same numbers."""
    scenario = small_scenario(*ALOHA, "population.availability.kind=markov",
                              "population.availability.off_rate_per_s=0.02",
                              "population.availability.on_rate_per_s=0.05", "run.rounds=30")
    ran = {"fast": 0}
    choose = round_engines.choose_engine

    def counted(*args, **kwargs):
        engine = choose(*args, **kwargs)
        ran["fast"] += engine == "off_clock"
        return engine

    monkeypatch.setattr("simfl.sim.rounds.loops.choose_engine", counted)
    mixed = tables(scenario)
    assert 0 < ran["fast"] < 30  # both forms ran
    monkeypatch.setattr(RoundLoops, "engines", frozenset({"process", "callbacks"}))
    assert mixed == tables(scenario)


def test_the_fast_round_runs_the_common_round_only(monkeypatch):
    ran = []
    run = fast_round.FastRound.run
    monkeypatch.setattr(fast_round.FastRound, "run",
                        lambda self, *a: ran.append(1) or run(self, *a))
    tables(small_scenario(*ALOHA, "run.rounds=3", "population.availability.kind=always"))
    assert len(ran) == 3
    for overrides in [("population.battery.capacity_j=500",), ("server.overcommit=1.5",),
                      ("network.mac.kind=tdma",), ("network.uplink.kind=erasure",),
                      ALOHA + ("network.mac.data_phase=serialised",)]:
        ran.clear()
        tables(small_scenario(*overrides, "run.rounds=3"))
        assert not ran, overrides


def test_the_fast_round_keeps_slotted_aloha_throughput(monkeypatch):
    """Ten clients join together each round and contend until each is heard: a slot with
    n contenders carries a success with probability n p (1-p)^(n-1) (one channel), within
    4 standard errors, with every round run in the loop."""
    from conftest import everyone, make_sim

    from simfl.core.config import SlottedAlohaMac
    from simfl.sim.mac.kinds import build_mac

    ran = []
    run = fast_round.FastRound.run
    monkeypatch.setattr(fast_round.FastRound, "run",
                        lambda self, *a: ran.append(1) or run(self, *a))
    n_clients, p = 10, 0.05
    sim = make_sim(n_clients=n_clients, compute_s=(1.0,), upload_s=0.001, deadline_s=100.0)
    sim.mac = build_mac(SlottedAlohaMac(access_prob=p, slot_s=0.01), sim.env, sim.rngs,
                        n_clients, sim.energy.charge_transmissions)
    slots = np.zeros(n_clients + 1, dtype=np.int64)
    wins = np.zeros(n_clients + 1, dtype=np.int64)
    for r in range(300):
        outcome = sim.run_round(r, everyone)
        assert len(outcome.received) == n_clients
        for record in outcome.mac_slots:
            slots[record.contenders] += record.slots
            wins[record.contenders] += record.successes
    assert len(ran) == 300
    for n in range(2, n_clients + 1):
        q = n * p * (1 - p) ** (n - 1)
        assert abs(wins[n] / slots[n] - q) <= 4 * np.sqrt(q * (1 - q) / slots[n]), n


def test_a_scalar_per_client_value_is_one_number():
    p = per_client(0.25, 10**7, "network.mac.access_prob")
    assert p.shape == (10**7,) and p.nbytes == 8 * 10**7 and p.base is not None
    assert p[123] == 0.25 and not p.flags.writeable
    assert per_client((0.1, 0.2), 2, "x").tolist() == [0.1, 0.2]


def test_everyone_available_shares_one_id_array():
    scenario = small_scenario("population.availability.kind=always", "run.rounds=2",
                              "run.events=false")
    from simfl.experiment.build import build_context, build_online, build_simulation

    ctx = build_context(scenario)
    sim = build_simulation(ctx, build_online(ctx))
    views = []
    for r in range(2):
        sim.run_round(r, lambda view: views.append(view) or view.available[:10])
    assert views[0].available is views[1].available
    assert views[0].available.tolist() == list(range(50))
    assert not views[0].available.flags.writeable
    assert dataclasses.is_dataclass(views[0])


def test_the_clock_reaches_a_fast_round_close_exactly():
    """Not every float time is now + d for some float d (the pair below is one): the
    clock then moves in two steps, each exact."""
    rng = np.random.default_rng(0)
    pairs = [(1.4864059314631655, 3.926881291831965), (0.0, 0.0), (0.0, 1e-300)]
    for _ in range(3000):
        now = float(rng.uniform(0, 10.0 ** rng.integers(-3, 7)))
        pairs.append((now, float(np.nextafter(now + rng.uniform(0, 100.0), np.inf))))
    for now, t in pairs:
        time_s = now
        for delay in clock.delays_to(now, t):
            assert delay >= 0
            time_s = time_s + delay
        assert time_s == t, (now, t)
    assert len(clock.delays_to(1.4864059314631655, 3.926881291831965)) == 2


def test_call_at_fires_at_exactly_the_time_asked():
    import simpy

    env = simpy.Environment()
    fired = []
    env.timeout(1.4864059314631655).callbacks.append(
        lambda _: clock.call_at(env, 3.926881291831965, lambda _: fired.append(env.now)))
    env.run()
    assert fired == [3.926881291831965]
