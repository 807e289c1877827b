"""The per-paper measures of the reproduction report on runs written by hand: the CVaR
study's rare classes, the warm starts' window after a switch and their alignment on it,
FedLaAvg's best accuracy."""

import importlib
import json

import numpy as np
import pytest

from test_report import load_report, write_run

load_report()  # puts analysis/ on the path, as python -m studies does
cvar = importlib.import_module("reproduction.papers.cvar")
warm = importlib.import_module("reproduction.papers.warm_start")
fedlaavg = importlib.import_module("reproduction.papers.fedlaavg")


def test_the_rare_classes_are_those_of_the_least_relayed_users(tmp_path):
    # users 1 and 3 have the smallest weight and hold classes 2 and 0
    scenario = {"name": "x", "seed": 1, "network": {"mac": {"probs": [1, 0.05, 1, 0.05]}}}
    run = write_run(tmp_path / "r", scenario,
                    {"round": [0, 5], "accuracy": [0.1, 0.5], "acc_class_0": [0.0, 0.2],
                     "acc_class_1": [0.0, 0.9], "acc_class_2": [0.0, 0.6]},
                    labels=[[0, 9, 0], [1, 0, 8], [0, 7, 2], [6, 0, 0]])
    assert cvar.rare_classes(run) == [0, 2]
    s = cvar.rare_series(run)
    assert s.x.tolist() == [0.0, 5.0] and s.y == pytest.approx([0.0, 0.4])


def sessions_run(folder, rounds_per_session=4, name="x", seed=1, acc=None, pilot=1):
    # 5 sessions of 4 rounds: pilot session 0, restart 1, session 2 (every initialiser
    # starts from session 1's model), then the scored switches 3 and 4
    sessions = 5
    rounds = np.arange(sessions * rounds_per_session + 1)
    session = np.concatenate([[0], np.repeat(np.arange(sessions), rounds_per_session)])
    if acc is None:
        acc = np.concatenate([[0.0], np.tile([0.1, 0.2, 0.3, 0.4], 2), [0.9, 0.9, 0.9, 0.9],
                              [0.5, 0.6, 0.7, 0.8], [0.2, 0.4, 0.6, 0.8]])
    scenario = {"name": name, "seed": seed, "task": {"partition": {"alpha": 0.3}},
                "population": {"sessions": {"pilot_sessions": pilot, "label_overlap": 0,
                                            "rounds_per_session": rounds_per_session}}}
    return write_run(folder, scenario, {"round": rounds, "accuracy": acc, "session": session})


def test_the_window_after_each_scored_switch_and_the_switch_rounds(tmp_path):
    run = sessions_run(tmp_path / "r")
    scores = warm.switch_scores(run, window=2)
    assert list(scores) == [3, 4]  # neither the restart nor session 2 is scored
    assert scores[3] == pytest.approx((0.5, 0.55, 0.8))
    assert scores[4] == pytest.approx((0.2, 0.3, 0.8))
    assert warm.switch_rounds(run) == {3: 12.0, 4: 16.0}
    assert warm.cell(run) == "overlap 0, dir 0.3"
    pieces = [warm.after(p) for p in warm.since_each(warm.series(run, "accuracy"),
                                                     [warm.switch_rounds(run)[4]], 4)]
    assert warm.mean_series(pieces).y == pytest.approx([0.2, 0.4, 0.6, 0.8])


def test_two_pilot_sessions_move_the_first_scored_switch(tmp_path):
    run = sessions_run(tmp_path / "r", pilot=2)
    assert warm.first_scored_session(run) == 4
    assert list(warm.switch_scores(run, window=2)) == [4]


def warm_campaign(tmp_path, gains):
    """fedavg-similarity and fedavg-previous on seeds 1-3; the similarity arm adds
    ``gains[s]`` times (1 + seed / 10) to every accuracy of session s."""
    folder = tmp_path / "warm_start"
    base = np.concatenate([[0.0], np.tile([0.1, 0.2, 0.3, 0.4], 5)])
    session = np.concatenate([[0], np.repeat(np.arange(5), 4)])
    runs = []
    for seed in (1, 2, 3):
        for arm, add in (("previous", 0.0), ("similarity", 1.0 + 0.1 * seed)):
            acc = base + 0.01 * seed + add * np.array([gains.get(int(s), 0.0) for s in session])
            runs.append(sessions_run(folder / f"{arm}-{seed}", name=f"fedavg-{arm}",
                                     seed=seed, acc=acc))
    meta = {"study": "warm_start", "mode": "full", "notes": {"switch_window": 2}}
    return warm.Campaign(folder, meta, runs)


def test_each_scored_switch_is_compared_on_its_own(tmp_path):
    # a large gain in session 2 (not scored), a gain in 3 and a loss in 4
    c = warm_campaign(tmp_path, {2: 0.5, 3: 0.05, 4: -0.02})
    scores = warm.Scores(c, window=2)
    assert scores.sessions == [3, 4]
    comparisons = warm.switch_comparisons(scores, "fedavg", "overlap 0, dir 0.3", 2,
                                          paper=True)
    by_label = {x.label: x for x in comparisons}
    assert sorted(by_label) == ["similarity > previous (session 3, first 2 rounds)",
                                "similarity > previous (session 4, first 2 rounds)"]
    three = by_label["similarity > previous (session 3, first 2 rounds)"]
    four = by_label["similarity > previous (session 4, first 2 rounds)"]
    assert three.paired == pytest.approx((0.055, 0.06, 0.065))
    assert four.paired == pytest.approx((-0.022, -0.024, -0.026))
    assert three.paper_effect == pytest.approx(0.8816 - 0.7952)


def test_the_section_decides_on_the_scored_switches_only(tmp_path):
    c = warm_campaign(tmp_path, {2: 0.5, 3: 0.05, 4: -0.02})
    section = warm.warm_start_section(c, tmp_path)
    assert len(section.claims) == 1
    claim = section.claims[0]
    assert claim.verdict == "contradicted"  # session 4's loss, whatever session 2 says
    assert "session 4" in claim.reason
    assert {x.label.split("(")[1].split(",")[0] for x in claim.comparisons} == \
        {"session 3", "session 4"}
    assert (tmp_path / "warm_start.png").is_file()


def test_paper_gains_of_the_warm_starts():
    # the paper's Fashion-MNIST row at overlap 0, Dirichlet 0.3
    assert warm.paper_gain("previous") == pytest.approx(0.0864)
    assert warm.paper_gain("average") == pytest.approx(0.0021)
    assert warm.paper_gain("continuous") == pytest.approx(0.0421)
    assert warm.split_arm("scaffold-similarity") == ("scaffold", "similarity")
    assert warm.split_arm("average") == ("fedavg", "average")


def test_fedlaavg_best_accuracy_and_the_last_rounds(tmp_path):
    run = write_run(tmp_path / "r", {"name": "x", "seed": 1},
                    {"round": [0, 10, 20, 30], "accuracy": [0.1, 0.7, float("nan"), 0.6]})
    assert fedlaavg.best_accuracy(run) == pytest.approx(0.7)
    tail = fedlaavg.last(fedlaavg.series(run, "accuracy"), 15)
    assert tail.x.tolist() == [30.0]
    assert fedlaavg.PAPER_BEST_GAIN["diurnal"] == pytest.approx(0.0423)


def test_a_campaign_without_fedavg_is_a_part_of_its_own(tmp_path):
    assert warm.part_key(["fedavg", "fedprox"]) is None
    assert warm.part_key(["fedprox", "scaffold"]) == "warm_start_fedprox_scaffold"


def test_the_time_strategy_has_unequal_days_and_nights(tmp_path):
    """The authors' default pattern: classes 0-4 online for E rounds, 5-9 for alpha E; the
    swing is taken over periods of E + alpha E rounds, not 2 E."""
    rounds = np.arange(91)
    acc = 0.5 + 0.001 * rounds  # a steady rise: a window of P rounds spans (P - 1) / 1000
    timed = {"period_rounds": 10, "strategy": "time", "alpha": 0.5}
    run = write_run(tmp_path / "t", {"name": "x", "seed": 1,
                                     "population": {"availability": timed}},
                    {"round": rounds, "accuracy": acc})
    assert fedlaavg.day_night(run) == (10, 5)
    swing, _ = fedlaavg.diurnal_swing(run)
    assert swing == pytest.approx(0.014)
    equal = write_run(tmp_path / "n", {"name": "x", "seed": 1, "population": {
        "availability": {"period_rounds": 10, "strategy": "number"}}},
        {"round": rounds, "accuracy": acc})
    assert fedlaavg.day_night(equal) == (10, 10)
    assert fedlaavg.diurnal_swing(equal)[0] == pytest.approx(0.019)


fedar = importlib.import_module("reproduction.papers.fedar")
campaigns = importlib.import_module("reproduction.campaigns")


def fedar_lenet5_campaign(folder):
    """Two clients holding one class each, so a run's client variance is ((a0 - a1) / 2)^2
    for its class accuracies a0, a1: FedVARP's spread 0.3, FedAR's 0.2, MIFA's 0.1."""
    folder.mkdir()
    (folder / "study.json").write_text(json.dumps({
        "study": "fedar", "mode": "full", "seeds": [1, 2, 3], "wall_time_s": 1.0, "jobs": 1,
        "notes": {"model": "lenet5"}}))
    spread = {"fedar": 0.2, "mifa": 0.1, "fedvarp": 0.3}
    for arm, gap in spread.items():
        for seed in (1, 2, 3):
            a0 = 0.8 + 0.01 * seed
            a1 = a0 - gap - 0.002 * seed
            scenario = {"name": f"fedar-{arm}", "seed": seed,
                        "population": {"availability": {"p_min": 0.1}}}
            write_run(folder / f"{arm}-{seed}", scenario,
                      {"round": [1, 2], "accuracy": [0.5, (a0 + a1) / 2],
                       "acc_class_0": [0.5, a0], "acc_class_1": [0.5, a1]},
                      labels=[[1, 0], [0, 1]])
    for lr, diverged in ((0.05, True), (0.02, False)):
        scenario = {"name": "fedar-scaffold_lr", "seed": 1, "task": {"lr": lr},
                    "population": {"availability": {"p_min": 0.1}}}
        write_run(folder / f"tune-{lr}", scenario, {"round": [1, 40], "accuracy": [0.1, 0.7]},
                  summary={"wall_time_s": 1.0,
                           "warnings": ["model diverged"] if diverged else []})
    return campaigns.read_campaign(folder)


def test_fedar_on_lenet5_judges_table_3_and_reports_the_scaffold_sweep(tmp_path):
    section = fedar.fedar_section(fedar_lenet5_campaign(tmp_path / "c"), tmp_path)
    claims = {c.metric: c for c in section.claims}
    # the narrowed campaign compares FedAR with the two baselines it ran, no others
    accuracy = claims["last-10 accuracy"]
    assert [c.label for c in accuracy.comparisons] == ["fedar > mifa (p_min 0.1)",
                                                      "fedar > fedvarp (p_min 0.1)"]
    variance = [c for c in section.claims if c.metric == "log client variance"]
    assert [c.comparisons[0].label for c in variance] == [
        "fedar variance < fedvarp variance (p_min 0.1)",
        "mifa variance < fedar variance (p_min 0.1)"]
    fedar_vs_fedvarp, mifa_vs_fedar = (c.comparisons[0] for c in variance)
    assert fedar_vs_fedvarp.paper_effect == pytest.approx(np.log(432.5 / 325))
    # seed 1: FedVARP's gap 0.302, FedAR's 0.202: log((0.151^2) / (0.101^2))
    assert fedar_vs_fedvarp.paired[0] == pytest.approx(2 * np.log(0.151 / 0.101))
    assert {c.verdict for c in variance} == {"reproduced"}
    text = "\n".join(section.body)
    assert "| 0.05 | 40 | yes | 0.700 |" in text and "| 0.02 | 40 | no | 0.700 |" in text
