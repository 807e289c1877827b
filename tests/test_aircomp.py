"""Over-the-air aggregation in a run: one analog slot per round, its record in aircomp.csv,
truncated clients recorded as missing, the deadline rule, resume, and bad input."""

import csv
import math

import pytest

from simfl import apply_overrides, run
from simfl.cli import main
from simfl.core.config import load_scenario, parse_override
from simfl.experiment import checkpoint, resume_run, run_scenario
from simfl.metrics.side_tables import AIR_COLUMNS
from stopped_runs import stopped_copy

AIR = ("server.algorithm.kind=aircomp", "network.uplink.kind=ideal")


def rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


def with_(scenario, *pairs):
    return apply_overrides(scenario, [parse_override(p) for p in pairs])


def test_every_round_is_one_slot_that_ends_the_round(tiny_scenario, tmp_path):
    result = run(with_(tiny_scenario, *AIR, "run.events=true", "server.deadline_s=60",
                       "server.algorithm.gain_threshold=0.5"), tmp_path / "r")
    folder = result.out_dir
    assert tuple(rows(folder / "aircomp.csv")[0]) == AIR_COLUMNS
    slots, rounds = rows(folder / "aircomp.csv"), rows(folder / "rounds.csv")
    events = rows(folder / "events.csv")
    model_bytes = 4 * (64 * 10 + 10)  # logreg on 8x8 digits: d = 650 parameters
    assert len(slots) == len(rounds) == 6
    for slot, row, outcome in zip(slots, rounds, result.outcomes):
        assert float(slot["slot_s"]) == math.ceil(model_bytes / 4) / 1e6
        participants = [int(c) for c in slot["participants"].split()]
        truncated = [int(c) for c in slot["truncated"].split()]
        assert participants == sorted(a.client for a in outcome.received)
        assert truncated == sorted(m.client for m in outcome.missing if m.reason == "truncated")
        assert int(row["n_received"]) == int(slot["n_participants"]) == len(participants)
        # the slot begins when the last invitee has computed, and the round ends with it
        computed = [float(e["t_s"]) for e in events
                    if e["kind"] == "computed" and int(e["round"]) == outcome.round]
        assert float(slot["t_start_s"]) == max(computed)
        assert float(row["t_close_s"]) == pytest.approx(
            float(slot["t_start_s"]) + float(slot["slot_s"]), abs=1e-12)
        if participants:
            assert float(slot["mse"]) == pytest.approx(1e-4 / float(slot["eta"]))
            assert float(slot["eta"]) >= 0.5  # power 1 times a gain above the threshold
    assert sum(len(s["truncated"].split()) for s in slots) > 0
    assert any(e["kind"] == "truncated" for e in events)


def test_a_slow_invitee_moves_the_slot_to_end_at_the_deadline(tiny_scenario, tmp_path):
    # lognormal speeds: some invitees cannot finish computing within 7 s
    result = run(with_(tiny_scenario, *AIR, "server.algorithm.gain_threshold=0"),
                 tmp_path / "r")
    late_rounds = [o for o in result.outcomes if o.n_missing("late")]
    assert late_rounds
    for outcome in late_rounds:
        assert outcome.air.t_start_s == pytest.approx(outcome.t_deadline_s - outcome.air.slot_s)
        assert all(a.t_s == outcome.t_deadline_s for a in outcome.received)  # on time
        assert len(outcome.received) == len(outcome.air.participants)


def test_a_slot_longer_than_the_deadline_delivers_nothing(tiny_scenario, tmp_path):
    result = run(with_(tiny_scenario, *AIR, "server.algorithm.symbol_rate_hz=10"),
                 tmp_path / "r")  # 650 symbols at 10 per second: 65 s against a 7 s deadline
    assert result.summary["aggregated_updates"] == 0
    assert all(not o.received for o in result.outcomes)


def test_a_resumed_run_writes_the_same_aircomp_table(tmp_path):
    scenario = with_(load_scenario("quickstart"), *AIR, "run.rounds=5", "task.model=logreg")
    plain = run_scenario(scenario, tmp_path / "plain").out_dir
    kept = run_scenario(with_(scenario, "run.checkpoint_every_rounds=2"),
                        tmp_path / "kept").out_dir
    assert checkpoint.latest(kept).name == "round_000004"
    stopped = stopped_copy(kept, tmp_path / "stopped")  # after round 5's rows
    resume_run(stopped)
    for name in ("rounds.csv", "evals.csv", "aircomp.csv"):
        assert (plain / name).read_bytes() == (stopped / name).read_bytes(), name


@pytest.mark.parametrize("setting, words", [
    ("server.algorithm.noise_var=-1", "server.algorithm.noise_var = -1.0"),
    ("server.algorithm.gain_threshold=-0.1", "server.algorithm.gain_threshold = -0.1"),
    ("server.algorithm.power=0", "server.algorithm.power = 0.0"),
    ("network.mac.kind=tdma", "network.mac.kind = 'tdma'"),
    ("server.compression.kind=qsgd", "server.compression.kind = 'qsgd'"),
])
def test_bad_input_is_one_line_and_exit_2(setting, words, capsys):
    code = main(["validate", "quickstart", "--set", "server.algorithm.kind=aircomp",
                 "--set", setting])
    err = capsys.readouterr().err
    assert code == 2 and words in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_the_slot_is_decided_without_training(tiny_scenario, tmp_path):
    scenario = with_(tiny_scenario, *AIR)
    trained = run(scenario, tmp_path / "trained").out_dir
    timed = run(with_(scenario, "run.timing_only=true"), tmp_path / "timed").out_dir
    assert (trained / "aircomp.csv").read_bytes() == (timed / "aircomp.csv").read_bytes()


def test_the_noise_is_the_slot_seed_s_and_leaves_the_inputs_alone():
    import torch

    from simfl.algorithms import build_aggregator
    from simfl.core.air_slot import AirSlot
    from simfl.core.config import AirComp
    from simfl.core.records import Arrival, ClientUpdate, RoundOutcome

    agg = build_aggregator(AirComp(), 0.1)
    params = {"w": torch.zeros(50, dtype=torch.float64)}
    updates = [ClientUpdate(c, 0, 10, {"w": torch.full((50,), float(c), dtype=torch.float64)},
                            train_loss=0.0) for c in (1, 2)]

    def step(seed):
        slot = AirSlot(0, 1.0, 0.1, (1, 2), (), 0.5, 1e-2, seed)
        outcome = RoundOutcome(0, 0.0, 5.0, 1.1, 2, (1, 2),
                               tuple(Arrival(c, 0, 1.1, 10) for c in (1, 2)), (), air=slot)
        return agg.aggregate(None, params, outcome, updates)[0]["w"]

    assert torch.equal(step(7), step(7)) and not torch.equal(step(7), step(8))
    assert torch.equal(params["w"], torch.zeros(50, dtype=torch.float64))
    assert torch.equal(updates[1].delta["w"], torch.full((50,), 2.0, dtype=torch.float64))
    assert abs(float(step(7).mean()) - 1.5) < 0.1  # the average (1 + 2) / 2, plus noise
