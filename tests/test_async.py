"""The asynchronous server modes without training: staleness functions, the server rules
on hand-made numbers, the continuous clock (hand-timed arrivals, deadlines, the end of a
run, a queueing check), configuration rules and a timing-only run of every mode."""

import csv
import math

import numpy as np
import pytest

import simfl
from simfl import apply_overrides
from simfl.algorithms.async_rules import (Buffer, FedAsyncRule, FedBuffRule, buffer_add,
                                          buffer_step, mix)
from simfl.algorithms.staleness import constant, hinge, polynomial, staleness_fn
from simfl.cli import main
from simfl.core.errors import ConfigError
from simfl.core.registry import REGISTRIES
from simfl.experiment import run_scenario
from simfl.core.records import MacSlots
from simfl.sim.continuous import STALL_DEADLINES, ContinuousServer

from conftest import make_sim


def rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


# -- staleness functions, by hand --------------------------------------------------------

def test_constant_staleness_is_one_at_every_staleness():
    assert [constant(t) for t in (0, 1, 7, 1000)] == [1.0, 1.0, 1.0, 1.0]


def test_polynomial_staleness_by_hand():
    assert polynomial(0, 0.5) == 1.0
    assert polynomial(3, 0.5) == pytest.approx(0.5)  # 4^-1/2
    assert polynomial(8, 0.5) == pytest.approx(1 / 3)  # 9^-1/2
    assert polynomial(1, 1.0) == pytest.approx(0.5)  # 2^-1
    assert polynomial(2, 2.0) == pytest.approx(1 / 9)  # 3^-2


def test_hinge_staleness_by_hand():
    # a = 10, b = 4: 1 up to tau = 4, then 1 / (10 (tau - 4) + 1)
    assert [hinge(t, 10.0, 4.0) for t in (0, 4)] == [1.0, 1.0]
    assert hinge(5, 10.0, 4.0) == pytest.approx(1 / 11)
    assert hinge(6, 10.0, 4.0) == pytest.approx(1 / 21)
    assert hinge(3, 0.5, 0.0) == pytest.approx(1 / 2.5)  # b = 0: 1 / (0.5 * 3 + 1)


def test_staleness_fn_picks_the_function_with_its_parameters():
    assert staleness_fn("constant")(9) == 1.0
    assert staleness_fn("polynomial", a=1.0)(3) == pytest.approx(0.25)
    assert staleness_fn("hinge", a=1.0, b=2.0)(5) == pytest.approx(0.25)
    with pytest.raises(ValueError, match="unknown"):
        staleness_fn("exponential")


# -- server rules on hand-made numbers --------------------------------------------------

def test_mix_by_hand():
    out = mix({"w": np.array([1.0, 2.0])}, {"w": np.array([3.0, 6.0])}, 0.25)
    assert out["w"].tolist() == [1.5, 3.0]


def test_fedasync_mixes_the_client_model_with_alpha_times_staleness():
    rule = FedAsyncRule(alpha=0.5)
    state = rule.init({"w": np.zeros(2)})
    params, state, stepped = rule.update(state, {"w": np.array([2.0, 2.0])},
                                         {"w": np.zeros(2)}, {"w": np.array([4.0, 4.0])}, 0.5)
    # a = 0.5 * 0.5: 0.75 * 2 + 0.25 * (0 + 4) = 2.5
    assert params["w"].tolist() == [2.5, 2.5] and stepped and state == 1


@pytest.mark.parametrize("eta_g, expected", [(1.0, [2.0, 3.0]), (2.0, [3.0, 4.0])])
def test_fedbuff_steps_at_the_kth_arrival_along_the_mean_of_the_buffer(eta_g, expected):
    rule = FedBuffRule(size=2, server_lr=eta_g)
    state = rule.init({"w": np.zeros(2)})
    w0 = {"w": np.array([1.0, 2.0])}
    params, state, stepped = rule.update(state, w0, {"w": np.array([2.0, 0.0])}, 1.0)
    assert params is w0 and not stepped and state.count == 1
    params, state, stepped = rule.update(state, params, {"w": np.array([0.0, 4.0])}, 0.5)
    # buffer [2, 0] + 0.5 [0, 4] = [2, 2]; mean [1, 1]; w0 + eta_g [1, 1]
    assert stepped and params["w"].tolist() == expected and state == Buffer()


def test_an_empty_buffer_has_no_step():
    with pytest.raises(ValueError, match="empty"):
        buffer_step({"w": np.zeros(1)}, Buffer(), 1.0)
    assert buffer_add(Buffer(), {"w": np.ones(1)}, 0.5).total["w"].tolist() == [0.5]


# -- the continuous clock, hand-timed ---------------------------------------------------

def first_two(view, k):
    return np.asarray(view.available[:k])


def clock(buffer_size=1, compute_s=(1.0, 2.5), deadline_s=10.0, concurrency=2, **kw):
    sim = make_sim(n_clients=len(compute_s), compute_s=compute_s, upload_s=0.0,
                   deadline_s=deadline_s, **kw)
    return sim, ContinuousServer(sim, concurrency=concurrency, buffer_size=buffer_size,
                                 pick=first_two)


def test_async_arrivals_versions_and_staleness_by_hand():
    # client 0 takes 1 s, client 1 2.5 s; both invited at 0 with version 0. t=1: client 0
    # (tau 0) -> v1, re-invited with v1; t=2: client 0 (tau 0) -> v2; t=2.5: client 1,
    # sent v0, meets v2 (tau 2) -> v3; t=3: client 0, sent v2, meets v3 (tau 1) -> v4
    _, server = clock()
    steps = [server.run_step() for _ in range(4)]
    got = [(u.client, u.base_version, u.applied_version, u.staleness, u.t_s)
           for s in steps for u in s.updates]
    assert got == [(0, 0, 0, 0, 1.0), (0, 1, 1, 0, 2.0), (1, 0, 2, 2, 2.5), (0, 2, 3, 1, 3.0)]
    assert [s.version for s in steps] == [0, 1, 2, 3]
    assert [(s.t_open_s, s.t_close_s) for s in steps] == [(0, 1), (1, 2), (2, 2.5), (2.5, 3)]
    assert steps[0].invited == (0, 1) and steps[1].invited == (0,)
    # at work now: client 1 (sent v3 at 2.5) and client 0 (sent v4 at 3)
    assert server.needed_versions() == {3, 4}


def test_buffered_steps_every_k_arrivals_by_hand():
    # K = 2: t=1 client 0 (v0); t=2 client 0 again, still sent v0 (no step yet) -> v1;
    # t=2.5 client 1 (sent v0, tau 1); t=3 client 0 (sent v1, tau 0) -> v2
    _, server = clock(buffer_size=2)
    steps = [server.run_step() for _ in range(2)]
    got = [[(u.client, u.base_version, u.applied_version, u.t_s) for u in s.updates]
           for s in steps]
    assert got == [[(0, 0, 0, 1.0), (0, 0, 0, 2.0)], [(1, 0, 1, 2.5), (0, 1, 1, 3.0)]]
    assert [u.staleness for u in steps[1].updates] == [1, 0]


def test_a_client_slower_than_the_deadline_is_dropped_late_and_its_slot_refilled():
    # client 1 needs 5 s, deadline 4 s. t=4: client 0's 4th arrival (step v3 -> v4) comes
    # first, then the deadline (after everything else of its instant): client 1 is late,
    # in the interval of v4, which also holds both re-invitations of t=4
    _, server = clock(compute_s=(1.0, 5.0), deadline_s=4.0)
    steps = [server.run_step() for _ in range(5)]
    late = [(i, m.client, m.reason, m.t_s) for i, s in enumerate(steps) for m in s.missing]
    assert late == [(4, 1, "late", 4.0)]
    assert steps[4].invited == (0, 1)
    assert [u.base_version for u in steps[4].updates] == [4]


def test_stop_interrupts_the_devices_at_work_as_late():
    _, server = clock()
    step = server.run_step()
    tail = server.stop()
    assert not tail.stepped and tail.updates == () and tail.t_open_s == step.t_close_s == 1.0
    assert sorted((m.client, m.reason) for m in tail.missing) == [(0, "late"), (1, "late")]
    assert server.jobs == {}


def test_the_horizon_ends_the_steps():
    _, server = clock()
    assert server.run_step(horizon_s=2.2).t_close_s == 1.0
    assert server.run_step(horizon_s=2.2).t_close_s == 2.0
    assert server.run_step(horizon_s=2.2) is None and server.end_reason == "horizon"
    assert server.env.now == pytest.approx(2.2)


def test_a_run_without_arrivals_stalls_after_stall_deadlines():
    sim, server = clock(compute_s=(5.0, 5.0), deadline_s=1.0)
    assert server.run_step() is None and server.end_reason == "stall"
    assert sim.now_s == pytest.approx(STALL_DEADLINES * 1.0)


class ExponentialCompute:
    """A scripted double of the devices' compute times: every job draws a fresh Exp(mu)."""

    def __init__(self, mu, seed):
        self.mu, self.rng = mu, np.random.default_rng(seed)

    def __getitem__(self, client):
        return self.rng.exponential(1.0 / self.mu)


@pytest.mark.parametrize("c, mu", [(4, 0.5), (10, 2.0)])
def test_arrivals_per_second_are_concurrency_times_service_rate(c, mu):
    """c slots, each refilled at once, exponential service at rate mu, no failures and
    instant transfers: each slot is a Poisson process of rate mu, so the arrivals in T
    seconds are Poisson(c mu T): mean and variance c mu T, standard error of the rate
    sqrt(c mu T) / T. The measured rate must lie within 4 of them of c mu."""
    horizon_s = 4000.0 / (c * mu)  # about 4000 arrivals
    sim = make_sim(n_clients=5 * c, compute_s=(1.0,), upload_s=0.0, deadline_s=1e9)
    sim.devices.compute_s = ExponentialCompute(mu, seed=c)
    rng = np.random.default_rng(1)
    server = ContinuousServer(sim, concurrency=c, buffer_size=1, pick=lambda view, k: np.sort(
        rng.choice(view.available, size=min(k, len(view.available)), replace=False)))
    n = 0
    while (step := server.run_step(horizon_s)) is not None:
        n += len(step.updates)
        assert not step.missing
    rate, se = n / horizon_s, math.sqrt(c * mu * horizon_s) / horizon_s
    assert abs(rate - c * mu) <= 4 * se, (rate, c * mu, se)


# -- slotted ALOHA under the asynchronous modes -----------------------------------------

def aloha_clock(compute_s, access_prob=1.0, slot_s=0.5, **kw):
    mac = simfl.SlottedAlohaMac(access_prob=access_prob, slot_s=slot_s, channels=1)
    return clock(compute_s=compute_s, mac=mac, **kw)


def test_async_contention_by_hand():
    # p = 1, slots of 0.5 s, instant transfers. Client 0 is ready at 1.2, transmits in
    # slot 3 = [1.5, 2) and lands at 2.0 (v0 -> v1); re-invited with v1, ready at 3.2,
    # slot 7 = [3.5, 4), lands at 4.0. Client 1 is ready at 2.1, slot 5 = [2.5, 3),
    # lands at 3.0 (sent v0, meets v1 -> v2). Each step's interval holds one busy slot
    # with one contender, who gets through.
    _, server = aloha_clock((1.2, 2.1))
    steps = [server.run_step() for _ in range(3)]
    got = [(u.client, u.base_version, u.applied_version, u.t_s) for s in steps for u in s.updates]
    assert got == [(0, 0, 0, 2.0), (1, 0, 1, 3.0), (0, 1, 2, 4.0)]
    assert [s.mac_slots for s in steps] == [(MacSlots(v, 1, 1, 1),) for v in (0, 1, 2)]


def test_async_contenders_that_always_collide_miss_their_deadline_as_collided():
    # p = 1 and both ready in slot 3: they transmit together in every slot until their
    # deadline (10 s); no step is made, and the run stalls.
    sim, server = aloha_clock((1.2, 1.3), deadline_s=10.0)
    assert server.run_step() is None and server.end_reason == "stall"
    tail = server.stop()
    first = [m for m in tail.missing if m.t_s == 10.0]
    assert [(m.client, m.reason) for m in first] == [(0, "collided"), (1, "collided")]
    assert sim.mac.tx_slots.min() > 0
    assert all(s.successes == 0 for s in tail.mac_slots)
    assert {s.contenders for s in tail.mac_slots} == {2}


def test_ideal_mac_steps_carry_no_slot_statistics():
    _, server = clock()
    assert server.run_step().mac_slots is None


@pytest.mark.parametrize("n_clients, p", [(4, 0.3), (8, 0.15)])
def test_async_slot_successes_match_slotted_aloha(n_clients, p):
    """Every client at work (concurrency = n_clients), exponential compute, instant
    transfers, one channel: in a slot with n contenders each transmits with probability
    p, so a success has probability q = n p (1 - p)^(n - 1). Over the run's slots with n
    contenders (those with at least 200), the rate of successes lies within 4 standard
    errors sqrt(q (1 - q) / slots) of q."""
    sim = make_sim(n_clients=n_clients, compute_s=(1.0,), upload_s=0.0, deadline_s=1e9,
                   mac=simfl.SlottedAlohaMac(access_prob=p, slot_s=0.01, channels=1))
    sim.devices.compute_s = ExponentialCompute(4.0, seed=n_clients)
    server = ContinuousServer(sim, concurrency=n_clients, buffer_size=1, pick=first_two)
    totals = {}
    while (step := server.run_step(600.0)) is not None:
        assert not step.missing
        for s in step.mac_slots:
            total = totals.setdefault(s.contenders, [0, 0])
            total[0] += s.slots
            total[1] += s.successes
    checked = 0
    for n, (slots, successes) in totals.items():
        if slots < 200:
            continue
        q = n * p * (1 - p) ** (n - 1)
        se = math.sqrt(q * (1 - q) / slots)
        assert abs(successes / slots - q) <= 4 * se, (n, slots, successes, q)
        checked += 1
    assert checked >= 3


def test_every_mode_runs_over_slotted_aloha_and_writes_mac_csv(tmp_path):
    for mode in ("async", "buffered"):
        scenario = apply_overrides(small(mode), [("network.mac", "slotted_aloha"),
                                                 ("network.mac.access_prob", 0.3)])
        run_scenario(scenario, tmp_path / mode)
        rounds, mac = rows(tmp_path / mode / "rounds.csv"), rows(tmp_path / mode / "mac.csv")
        assert {r["round"] for r in mac} <= {r["round"] for r in rounds}
        granted = sum(int(r["successes"]) for r in mac)
        got_through = sum(int(r["n_received"]) + int(r["n_erased"]) for r in rounds)
        assert granted >= got_through > 0  # every upload tried had won a slot first
        assert all(int(r["successes"]) <= int(r["slots"]) for r in mac)


# -- configuration -----------------------------------------------------------------------

@pytest.mark.parametrize("server, field", [
    (dict(mode={"kind": "async", "alpha": 0.0}), "mode.alpha"),
    (dict(mode={"kind": "async", "alpha": 1.5}), "mode.alpha"),
    (dict(mode={"kind": "async", "concurrency": 0}), "mode.concurrency"),
    (dict(mode={"kind": "async", "staleness": "exponential"}), "mode.staleness"),
    (dict(mode={"kind": "async", "staleness": "hinge", "staleness_a": 0.0}),
     "mode.staleness_a"),
    (dict(mode={"kind": "buffered", "staleness_b": -1.0}), "mode.staleness_b"),
    (dict(mode={"kind": "buffered", "buffer_size": 0}), "mode.buffer_size"),
    (dict(mode={"kind": "buffered", "server_lr": 0.0}), "mode.server_lr"),
    (dict(mode="turbo"), "mode.kind"),
    (dict(mode="async", algorithm="mifa"), "algorithm.kind"),
    (dict(mode="buffered", algorithm={"kind": "fedavg", "server_lr": 2.0}),
     "algorithm.server_lr"),
    (dict(mode="async", sampler="md"), "sampler.kind"),
    (dict(mode="async", overcommit=2.0), "overcommit"),
    (dict(mode="buffered", min_updates=1), "min_updates"),
])
def test_bad_server_settings_name_their_field(server, field):
    with pytest.raises(ConfigError) as err:
        simfl.Server(**server)
    assert err.value.field == field
    assert "\n" not in str(err.value)


def test_the_modes_accept_fedprox_and_longest_absent():
    server = simfl.Server(mode="async", algorithm=simfl.FedProx(mu=0.1),
                          sampler=simfl.LongestAbsent())
    assert server.mode.kind == "async" and server.mode.alpha == 0.6


def small(mode="async", timing_only=True, **server):
    return simfl.Scenario(
        name="small", seed=2,
        task=simfl.Task(dataset=simfl.Digits(), model=simfl.Logreg(), n_clients=12,
                        batch_size=16, local_epochs=1, lr=0.2),
        population=simfl.Population(compute=simfl.Compute(median_samples_per_s=40.0, sigma=0.8),
                                    availability=simfl.Bernoulli(p=0.8)),
        network=simfl.Network(uplink=simfl.ErasureChannel(p=0.3), arq_max_attempts=2),
        server=simfl.Server(clients_per_round=4, deadline_s=7.0, mode=mode, **server),
        run=simfl.Run(rounds=12, timing_only=timing_only))


@pytest.mark.parametrize("section, value, field", [
    ("network.mac", "tdma", "network.mac.kind"),
    ("population.sessions", {"groups": 2}, "population.sessions"),
])
@pytest.mark.parametrize("mode", ["async", "buffered"])
def test_modes_refuse_what_works_in_rounds_only(section, value, field, mode):
    with pytest.raises(ConfigError) as err:
        apply_overrides(small(mode), [(section, value)])
    assert err.value.field == field and "\n" not in str(err.value)
    apply_overrides(small("sync"), [(section, value)])  # fine in rounds


def test_overrides_switch_the_mode_and_set_its_fields():
    scenario = apply_overrides(small("sync"), [("server.mode", "buffered"),
                                               ("server.mode.buffer_size", 3)])
    assert scenario.server.mode == simfl.BufferedMode(buffer_size=3)


def test_a_bad_mode_field_on_the_command_line_is_one_line_and_exit_2(capsys):
    code = main(["validate", "scenarios/quickstart.py", "--set", "server.mode=async",
                 "--set", "server.mode.alpha=2"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "mode.alpha" in err and len(err.splitlines()) == 1


# -- every mode: a timing-only run -------------------------------------------------------

@pytest.mark.parametrize("kind", REGISTRIES["server_modes"].names())
def test_every_mode_runs_timing_only_and_keeps_its_invariants(tmp_path, kind):
    result = run_scenario(small(kind), tmp_path / kind)
    table = rows(result.out_dir / "rounds.csv")
    assert len(table) == 12 and [int(r["round"]) for r in table] == list(range(12))
    assert result.summary["trained_updates"] == result.summary["aggregated_updates"] == 0
    closes = [float(r["t_close_s"]) for r in table]
    assert closes == sorted(closes)
    if kind == "sync":
        assert not (result.out_dir / "updates.csv").exists()
        return
    updates = rows(result.out_dir / "updates.csv")
    assert sum(int(r["n_received"]) for r in table) == len(updates)
    size = 10 if kind == "buffered" else 1  # the buffer's default K; async steps at each
    assert {int(r["n_received"]) for r in table} == {size}
    for r in updates:
        assert int(r["staleness"]) == int(r["applied_version"]) - int(r["base_version"]) >= 0
    assert result.summary["server_versions"] == 12
    assert result.summary["mean_staleness"] == pytest.approx(
        np.mean([int(r["staleness"]) for r in updates]))


def test_longest_absent_picks_by_the_version_of_the_last_applied_update(tmp_path):
    result = run_scenario(small("async", sampler=simfl.LongestAbsent()), tmp_path / "run")
    assert len(rows(result.out_dir / "updates.csv")) == 12


def test_the_bundled_async_study_validates_in_each_mode():
    from simfl.core.config import load_scenario, parse_override
    from simfl.core.config.scripts import bundled_scenarios_dir
    from simfl.preflight import preflight

    base = load_scenario("async")
    assert base.server.mode.kind == "async"
    study = {}
    exec(compile((bundled_scenarios_dir() / "async.py").read_text(), "async.py", "exec"), study)
    for sets in study["MODES"].values():
        preflight(apply_overrides(base, [parse_override(s) for s in sets]))


@pytest.mark.slow
def test_the_bundled_async_study_runs_and_draws_its_figures(tmp_path, monkeypatch):
    from simfl.core.config.scripts import bundled_scenarios_dir

    study = {"__name__": "study"}
    exec(compile((bundled_scenarios_dir() / "async.py").read_text(), "async.py", "exec"), study)
    full = study["scenario"]
    study["scenario"] = lambda: apply_overrides(full(), [("run.horizon_s", 20.0)])
    study["main"](["--out", str(tmp_path), "--seeds", "11,12"])
    for name in ("staleness.png", "accuracy.png", "sync_seed11/summary.json",
                 "async_seed12/updates.csv", "buffered_seed11/updates.csv"):
        assert (tmp_path / name).is_file(), name


def test_nobody_is_invited_after_the_last_step():
    sim = make_sim(n_clients=2, compute_s=(1.0, 2.5), upload_s=0.0, deadline_s=10.0)
    server = ContinuousServer(sim, concurrency=2, buffer_size=1, pick=first_two, max_steps=2)
    server.run_step(), server.run_step()  # t = 1 (client 0 re-invited), t = 2 (not)
    tail = server.stop()
    assert tail.invited == () and [(m.client, m.t_s) for m in tail.missing] == [(1, 2.0)]


@pytest.mark.parametrize("mode", ["async", "buffered"])
def test_the_same_scenario_gives_byte_identical_tables(tmp_path, mode):
    first = run_scenario(small(mode), tmp_path / "a").out_dir
    second = run_scenario(small(mode), tmp_path / "b").out_dir
    for name in ("rounds.csv", "updates.csv", "clients.csv"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_a_timing_only_async_run_never_imports_torch(tmp_path):
    import subprocess
    import sys

    code = ("import sys, simfl\n"
            "from simfl.experiment import run_scenario\n"
            "s = simfl.Scenario(name='t', task=simfl.Task(dataset=simfl.Digits(), n_clients=10),"
            " server=simfl.Server(clients_per_round=3, mode='buffered'),"
            " run=simfl.Run(rounds=5, timing_only=True))\n"
            f"run_scenario(s, {str(tmp_path / 'run')!r})\n"
            "print('torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
