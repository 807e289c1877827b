"""Availability models: the worked values of the FedGS/MIFA formulas, the FedLaAvg groups,
Markov determinism, trace files (format, converters, malformed rows) and offline interrupts."""

import json

import numpy as np
import pytest

from conftest import everyone, make_sim
from simfl.core.config import (Diurnal, LessDataFirst, LogNormal, Markov, MifaAdversarial,
                               MoreDataFirst, SinLogNormal, Trace, YCycle, YMaxFirst)
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree
from simfl.sim.traces import formats as tr
from simfl.sim.availability.models import build_availability

RNGS = RngTree(0)


def holding(labels_per_client, n_labels=10):
    """Label counts: one sample of each listed label."""
    counts = np.zeros((len(labels_per_client), n_labels))
    for i, labels in enumerate(labels_per_client):
        counts[i, list(labels)] = 1
    return counts


def p_of(cfg, round=0, t_s=0.0, n_samples=None, labels=None):
    n = len(n_samples) if n_samples is not None else len(labels)
    counts = None if labels is None else holding(labels)
    return build_availability(cfg, n, RNGS, n_samples, counts).probabilities(round, t_s)


# --- worked values ---------------------------------------------------------------------

def test_y_max_first_worked_value():
    assert p_of(YMaxFirst(beta=0.1), labels=[{3, 7}]) == pytest.approx([0.9333333], abs=1e-6)


def test_mifa_adversarial_worked_value():
    assert p_of(MifaAdversarial(p_min=0.1), labels=[{3, 7}]) == pytest.approx([0.4], abs=1e-6)


def test_more_and_less_data_first_worked_values():
    n = [100, 400]
    assert p_of(MoreDataFirst(beta=0.5), n_samples=n) == pytest.approx([0.5, 1.0], abs=1e-6)
    assert p_of(LessDataFirst(beta=0.5), n_samples=n) == pytest.approx([1.0, 0.5], abs=1e-6)


def test_fedgs_and_flgo_defaults():
    assert MoreDataFirst().beta == 1e-5 and MoreDataFirst(variant="flgo").beta == 1e-4
    assert LessDataFirst().beta == 0.1 and LessDataFirst(variant="flgo").beta == 0.5
    assert YMaxFirst().beta == 0.1 and YCycle().beta == 0.5 and LogNormal().beta == 0.1


def test_log_normal_sigma_and_normalisation():
    model = build_availability(LogNormal(beta=0.1), 1000, RNGS)
    assert model.sigma == pytest.approx(0.10536163, abs=1e-6)
    p = model.probabilities(0, 0.0)
    assert p.max() == 1.0 and abs(np.log(p).std() - model.sigma) < 0.01  # 4 SE of the std


@pytest.mark.parametrize("j, factor", [(6, 0.89906751), (0, 0.5), (23, 0.5), (17, 0.10093249)])
def test_sin_log_normal_factor(j, factor):
    sln = build_availability(SinLogNormal(beta=0.1), 50, RNGS)
    ln = build_availability(LogNormal(beta=0.1), 50, RNGS)
    for t in (j, j + 24, j + 240):
        ratio = sln.probabilities(t, 0.0) / ln.probabilities(t, 0.0)
        assert ratio == pytest.approx(factor, abs=1e-6)


def test_sin_log_normal_minimum_is_at_17():
    sln = build_availability(SinLogNormal(beta=0.1), 1, RNGS)
    assert int(np.argmin([sln.probabilities(j, 0.0)[0] for j in range(24)])) == 17


def test_y_cycle_fedgs_worked_values():
    assert p_of(YCycle(beta=0.5), round=35, labels=[{3}]) == pytest.approx([1.0])
    assert p_of(YCycle(beta=0.5), round=50, labels=[{3}]) == pytest.approx([0.5])
    assert p_of(YCycle(beta=0.5), round=135, labels=[{3}]) == pytest.approx([1.0])  # T = 100


def test_y_cycle_flgo_variant_spans_min_to_max_label():
    # FLGo: its round counter c starts at 1 (simfl round r is c = r + 1), r_c = (1 + c mod
    # 24) / 24, I = 1 iff min(Y_i)/max(Y) <= r_c <= max(Y_i)/max(Y); labels {3, 6} of 0..9
    cfg = YCycle(beta=0.5, variant="flgo")
    rounds = range(60)
    on = [r for r in rounds if p_of(cfg, round=r, labels=[{3, 6}])[0] == 1.0]
    assert on == [r for r in rounds if 3 / 9 <= (1 + (r + 1) % 24) / 24 <= 6 / 9]
    assert on[:3] == [6, 7, 8] and on[8] == 14 and on[9] == 30


def _flgo_y_cycle(counter, min_label, max_label, top_label, beta):
    """FLGo's y_cycle probability at its round counter (written from its formula)."""
    r = (1 + counter % 24) / 24
    return beta * int(min_label / top_label <= r <= max_label / top_label) + 1 - beta


def _flgo_sin_factor(counter):
    """FLGo's sin_log_normal factor: 0.4 sin(x) + 0.5, x the (counter mod 24)-th of 24
    points evenly spaced over [0, 2 pi] (numpy's linspace, end point included)."""
    return 0.4 * np.sin(np.linspace(0.0, 2.0 * np.pi, 24)[counter % 24]) + 0.5


def test_flgo_variant_matches_flgo_round_counter_from_one():
    labels = [{0, 2}, {3, 6}, {5}, {8, 9}]
    cfg = YCycle(beta=0.3, variant="flgo")
    for r in range(50):
        expected = [_flgo_y_cycle(r + 1, min(y), max(y), 9, 0.3) for y in labels]
        assert p_of(cfg, round=r, labels=labels) == pytest.approx(expected, abs=1e-12)
    sln = build_availability(SinLogNormal(beta=0.2, variant="flgo"), 5, RNGS)
    q = build_availability(LogNormal(beta=0.2, variant="flgo"), 5, RNGS).probabilities(0, 0.0)
    for r in range(50):
        assert sln.probabilities(r, 0.0) == pytest.approx(q * _flgo_sin_factor(r + 1), abs=1e-12)
    # simfl round 0 is FLGo counter 1: the second point of the wave, not its start
    assert sln.probabilities(0, 0.0) / q == pytest.approx(0.4 * np.sin(2 * np.pi / 23) + 0.5)


def test_redraw_until_nonempty():
    # SLN at rounds 17 mod 24: p_i <= 0.101, so three clients are often all offline
    plain = build_availability(SinLogNormal(), 3, RNGS)
    redraw = build_availability(SinLogNormal(redraw_until_nonempty=True), 3, RNGS)
    rounds = range(17, 17 + 24 * 100, 24)
    assert sum(not plain.online(r, 0.0).any() for r in rounds) > 50
    assert all(redraw.online(r, 0.0).any() for r in rounds)


# --- diurnal -------------------------------------------------------------------------------

def diurnal(cfg, classes):
    counts = np.eye(10)[classes]
    return build_availability(cfg, len(classes), RNGS, None, counts)


def test_diurnal_number_strategy_alternates_day_and_night_groups():
    model = diurnal(Diurnal(strategy="number", period_rounds=2, alpha=0.3), [0, 2, 3, 9])
    masks = [model.online(t, 0.0).tolist() for t in range(5)]
    day, night = [True, True, False, False], [False, False, True, True]
    assert masks == [day, day, night, night, day]


def test_diurnal_time_strategy_has_a_shorter_night():
    model = diurnal(Diurnal(strategy="time", period_rounds=4, alpha=0.5), [1, 7])
    assert [model.online(t, 0.0).tolist() for t in range(7)] == \
        [[True, False]] * 4 + [[False, True]] * 2 + [[True, False]]


def test_diurnal_block_strategy_one_block_at_a_time():
    model = build_availability(Diurnal(strategy="block", period_rounds=10, num_blocks=5), 50, RNGS)
    masks = np.array([model.online(t, 0.0) for t in range(10)])
    assert (masks.sum(axis=1) == 10).all()          # 50 clients in 5 blocks
    assert (masks.sum(axis=0) == 2).all()           # each client in exactly one 2-round block
    assert (masks[0] == masks[1]).all() and not (masks[1] & masks[2]).any()


def test_diurnal_mix_swaps_a_fraction_of_each_group():
    classes = [k % 10 for k in range(100)]
    model = diurnal(Diurnal(strategy="mix", period_rounds=3, alpha=0.2), classes)
    day = model.online(0, 0.0)
    lower = np.array([k % 10 < 5 for k in range(100)])
    assert day.sum() == 50 and (day & ~lower).sum() == 10 and (~day & lower).sum() == 10
    assert (model.online(3, 0.0) == ~day).all()


def test_diurnal_sine_amplitude_from_ratio_and_validation():
    assert Diurnal(strategy="sine", peak_trough_ratio=4.0).amplitude == pytest.approx(0.6)
    with pytest.raises(ConfigError, match="mean_p"):
        Diurnal(strategy="sine", mean_p=0.7, peak_trough_ratio=4.0)


# --- markov ------------------------------------------------------------------------------

def test_markov_path_does_not_depend_on_when_rounds_open():
    cfg = Markov(on_rate_per_s=1 / 50, off_rate_per_s=1 / 20)
    direct = build_availability(cfg, 300, RNGS)
    stepped = build_availability(cfg, 300, RNGS)
    for t in np.linspace(0.0, 1000.0, 37):
        stepped.online(0, t)
    assert (direct.online(0, 1000.0) == stepped.online(1, 1000.0)).all()
    assert (direct.next_change_s == stepped.next_change_s).all()
    assert (direct.next_change_s > 1000.0).all()


# --- traces ------------------------------------------------------------------------------

CSV = "# two phones\nclient,start_s,end_s\n7,0,10\n7,20,30\n7,10,15\n\n3,5,100\n"


def write(tmp_path, text, name="t.csv"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_trace_csv_is_sorted_merged_and_renumbered(tmp_path):
    trace = tr.read_csv(write(tmp_path, CSV))
    assert trace.ids.tolist() == [3, 7]
    assert trace.intervals(0) == [(5.0, 100.0)]
    assert trace.intervals(1) == [(0.0, 15.0), (20.0, 30.0)]  # 0-10 and 10-15 touch: merged
    assert trace.period_s.tolist() == [100.0, 100.0]


def test_trace_csv_round_trip(tmp_path):
    trace = tr.read_csv(write(tmp_path, CSV))
    tr.write_csv(trace, tmp_path / "back.csv")
    again = tr.read_csv(tmp_path / "back.csv")
    for a, b in zip((trace.ids, trace.starts, trace.ends, trace.offsets),
                    (again.ids, again.starts, again.ends, again.offsets)):
        assert (a == b).all()


@pytest.mark.parametrize("text, line", [
    ("client,start_s,end_s\n0,0,10\n0,5\n", 3),
    ("client,start_s,end_s\n0,0,10\nx,1,2\n", 3),
    ("client,start_s,end_s\n\n0,10,10\n", 3),
    ("client,start_s,end_s\n0,-1,10\n", 2),
    ("client,start_s,end_s\n0,0,10\n1,0,4\n0,5,20\n", 4),     # overlaps line 2
    ("# header missing\nclient,start,end\n0,0,1\n", 2),
])
def test_malformed_trace_rows_name_their_line(tmp_path, text, line):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        tr.read_csv(path)
    assert err.value.field == "population.availability.path"
    assert f"line {line}" in str(err.value.value)


def test_binary_trace_file_is_refused(tmp_path):
    path = tmp_path / "trace.pkl"
    path.write_bytes(b"\x80\x04\x95\xff\xfe")
    with pytest.raises(ConfigError, match="never read"):
        tr.load_trace(path, "fedscale_json")


FEDSCALE = {"12": {"active": [0.0, 50.0], "inactive": [20.0, 60.0], "finish_time": 100.0},
            "4": {"active": [10.0], "inactive": [90.0], "finish_time": 200.0}}


def test_fedscale_json_round_trip(tmp_path):
    trace = tr.load_trace(write(tmp_path, json.dumps(FEDSCALE), "f.json"), "fedscale_json")
    assert trace.ids.tolist() == [4, 12] and trace.period_s.tolist() == [200.0, 100.0]
    assert tr.to_fedscale(trace) == FEDSCALE


def test_fedscale_csv_round_trip(tmp_path):
    trace = tr.from_fedscale(FEDSCALE)
    tr.write_fedscale_csv(trace, tmp_path / "f.csv")
    assert tr.to_fedscale(tr.load_trace(tmp_path / "f.csv", "fedscale_csv")) == FEDSCALE


def test_fedscale_csv_bad_line(tmp_path):
    path = write(tmp_path, "client,active,inactive,finish_time\n1,0 5,3,10\n", "f.csv")
    with pytest.raises(ConfigError) as err:
        tr.load_trace(path, "fedscale_csv")
    assert "line 2" in str(err.value.value)


def test_flash_ready_means_locked_wifi_and_charging(tmp_path):
    messages = "\n".join([
        "2020-01-02 00:00:10\twifi", "2020-01-02 00:00:20\tbattery_charged_on",
        "2020-01-02 00:00:30\tscreen_lock",       # ready from 30 s
        "2020-01-02 00:01:00\t4g",                # not ready at 60 s
        "2020-01-02 00:01:30\twifi",              # ready again at 90 s
        "2020-01-02 00:01:40\tbattery_low",       # ignored
        "2020-01-02 00:02:00\tscreen_unlock"])    # off at 120 s
    data = {"a": {"guid": "a", "messages": messages},
            "b": {"guid": "b", "messages": ["2020-01-02 00:00:05\tscreen_lock",
                                            "2020-01-02 00:00:06\twifi",
                                            "2020-01-02 00:00:07\tbattery_charged_on",
                                            "2020-01-02 00:00:09\tscreen_on"]}}
    trace = tr.load_trace(write(tmp_path, json.dumps(data), "flash.json"), "flash")
    assert trace.intervals(0) == [(30.0, 60.0), (90.0, 120.0)]
    assert trace.intervals(1) == [(7.0, 9.0)]  # still ready at its last message


def test_flash_bad_timestamp_names_the_message(tmp_path):
    data = [{"messages": "2020-01-02 00:00:10\twifi\nyesterday\twifi"}]
    with pytest.raises(ConfigError, match="message 2"):
        tr.load_trace(write(tmp_path, json.dumps(data), "flash.json"), "flash")


def test_trace_replay_periodic_and_joined_boundary(tmp_path):
    path = write(tmp_path, "client,start_s,end_s\n0,0,10\n0,20,30\n1,0,40\n1,60,100\n2,0,100\n")
    model = build_availability(Trace(path=path, periodic=True), 6, RNGS)
    at = {t: model.online(0, t).tolist() for t in (0, 15, 25, 50, 105, 125, 150)}
    assert at[0] == [True, True, True] * 2
    assert at[15] == [False, True, True] * 2
    assert at[50] == [False, False, True] * 2
    assert at[105] == [True, True, True] * 2 and at[125] == [True, True, True] * 2
    assert at[150] == [False, False, True] * 2
    model = build_availability(Trace(path=path, periodic=True), 3, RNGS)
    model.online(0, 95.0)
    # client 1 is on across 100 s (60-100 joins 0-40); client 2 never leaves
    assert model.offline_at(np.array([1, 2])).tolist() == [140.0, np.inf]
    once = build_availability(Trace(path=path), 3, RNGS)
    assert once.online(0, 150.0).tolist() == [False, False, False]


# --- offline interrupts in the simulation -------------------------------------------------

def test_device_going_offline_mid_round_fails_offline(tmp_path):
    path = write(tmp_path, "client,start_s,end_s\n0,0,1.5\n1,0,100\n2,0,2\n")
    online = build_availability(Trace(path=path), 3, RNGS)
    sim = make_sim(n_clients=3, compute_s=(1.0,), upload_s=1.0, deadline_s=10.0, online=online)
    outcome = sim.run_round(0, everyone)
    assert [a.client for a in outcome.received] == [1]
    offline = {m.client: m.t_s for m in outcome.missing if m.reason == "offline"}
    assert offline == {0: 1.5, 2: 2.0}  # leaving at the instant the upload ends loses it


# --- registry and wiring -------------------------------------------------------------------

def test_every_model_is_listed_with_a_description():
    from simfl.core.registry import REGISTRIES

    entries = {e.name: e.summary for e in REGISTRIES["availability"]}
    assert set(entries) == {"always", "bernoulli", "ideal", "more_data_first", "less_data_first",
                            "y_max_first", "y_cycle", "log_normal", "sin_log_normal",
                            "mifa_adversarial", "diurnal", "markov", "trace", "scripted"}
    assert all(summary.endswith(")") or summary.endswith(".") for summary in entries.values())


def test_label_based_model_gets_labels_in_a_timing_only_run(tiny_scenario, tmp_path):
    import dataclasses

    import simfl

    population = dataclasses.replace(tiny_scenario.population,
                                     availability=MifaAdversarial(p_min=0.0))
    task = dataclasses.replace(tiny_scenario.task, partition=simfl.Shards(per_client=1))
    run = dataclasses.replace(tiny_scenario.run, timing_only=True, rounds=30)
    result = simfl.run(dataclasses.replace(tiny_scenario, task=task, population=population,
                                           run=run), tmp_path / "run")
    available = [o.n_available for o in result.outcomes]
    # one label-sorted shard each: p_i = min(Y_i) / 9 spreads over [0, 1]; the client
    # holding the 0s is never online, so all 12 never are
    assert 2 < np.mean(available) < 10 and max(available) < 12
