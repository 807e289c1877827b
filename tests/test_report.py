"""The reproduction report (analysis/report.py): its statistics and verdict rule on
hand-made numbers, and the whole report on small campaign folders written by hand (no
training)."""

import importlib.util
import csv
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from simfl.core.errors import SimflError

ROOT = Path(__file__).resolve().parents[1]


def load_report():
    spec = importlib.util.spec_from_file_location("report_under_test",
                                                  ROOT / "analysis" / "report.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


report = load_report()


# ---------------------------------------------------------------------------------
# statistics and the verdict rule


def test_mean_ci_by_hand():
    # 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.302653 -> half-width 4.302653 / sqrt(3)
    ci = report.mean_ci([1.0, 2.0, 3.0])
    assert (ci.mean, ci.n) == (2.0, 3)
    assert ci.half == pytest.approx(2.4841377, abs=1e-6)
    assert ci.lo == pytest.approx(2.0 - 2.4841377, abs=1e-6)
    # two values: t(0.975, 1) = 12.706205, s = |a - b| / sqrt(2)
    ci = report.mean_ci([0.5, 0.7])
    assert ci.half == pytest.approx(12.706205 * (0.2 / math.sqrt(2)) / math.sqrt(2), rel=1e-6)


def test_mean_ci_of_one_value_none_and_nan():
    one = report.mean_ci([0.25, math.nan, None])
    assert (one.mean, one.lo, one.hi, one.n) == (0.25, 0.25, 0.25, 1)
    assert one.text() == "0.250 (1 seed)"
    assert report.mean_ci([]).n == 0 and report.mean_ci([]).text() == "-"


def test_paired_interval_above_zero_is_reproduced():
    # differences 0.1, 0.12, 0.11 (steady): the paired interval excludes 0
    a = {1: 0.9, 2: 0.92, 3: 0.91}
    b = {1: 0.8, 2: 0.8, 3: 0.8}
    c = report.compare("a > b", a, b)
    assert c.diff.mean == pytest.approx(0.11)
    assert c.diff.lo > 0
    assert c.verdict == report.REPRODUCED


def test_pairing_by_seed_finds_what_unpaired_intervals_miss():
    # the arms' own intervals overlap (seed effects), the paired differences do not
    a = {1: 0.5, 2: 0.7, 3: 0.9}
    b = {1: 0.45, 2: 0.66, 3: 0.84}
    c = report.compare("a > b", a, b)
    assert c.better.lo < c.other.hi  # overlapping
    assert c.verdict == report.REPRODUCED


def test_mean_only_is_inconclusive_and_clearly_worse_is_contradicted():
    noisy = report.compare("a > b", {1: 0.9, 2: 0.6}, {1: 0.7, 2: 0.7})
    assert noisy.diff.mean > 0 and noisy.diff.lo < 0
    assert noisy.verdict == report.INCONCLUSIVE
    worse = report.compare("a > b", {1: 0.6, 2: 0.6}, {1: 0.7, 2: 0.71})
    assert worse.diff.hi < 0 and worse.verdict == report.CONTRADICTED
    tie = report.compare("a > b", {1: 0.6, 2: 0.6}, {1: 0.6, 2: 0.6})
    assert tie.verdict == report.INCONCLUSIVE


def test_clearly_on_the_other_side_is_contradicted_after_the_correction():
    # a is 0.1 worse than b in each of 5 seeds, give or take 0.01, in both of two settings
    rng = np.random.default_rng(3)
    b = {s: 0.8 + 0.05 * s for s in range(5)}
    worse = [report.compare(f"a > b ({k})", {s: v - 0.1 + 0.01 * rng.standard_normal()
                                             for s, v in b.items()}, b) for k in range(2)]
    corrected = report.holm(worse)
    assert [c.verdict for c in corrected] == [report.CONTRADICTED] * 2
    assert all(c.diff.hi < 0 for c in corrected)
    assert sorted(c.alpha for c in corrected) == pytest.approx([0.025, 0.05])
    assert report.overall(worse)[0] == report.CONTRADICTED


def test_one_paired_seed_is_inconclusive():
    one = report.compare("a > b", {1: 0.9}, {1: 0.1})
    assert one.verdict == report.INCONCLUSIVE and math.isnan(one.p_value)


def test_lower_is_better_flips_the_direction():
    lower = report.compare("a < b", {1: 0.1, 2: 0.11, 3: 0.12}, {1: 0.5, 2: 0.52, 3: 0.5},
                           higher_is_better=False)
    assert lower.diff.mean > 0 and lower.verdict == report.REPRODUCED
    assert report.compare("a < b", {1: 0.5, 2: 0.5}, {1: 0.1, 2: 0.1},
                          higher_is_better=False).verdict == report.CONTRADICTED


def test_unpaired_seeds_are_not_assessed():
    c = report.compare("a > b", {1: 0.9, 2: 0.9}, {3: 0.1, 4: 0.1})
    assert c.verdict == report.NOT_ASSESSED and c.diff.n == 0


def test_holm_levels_by_hand():
    a = 0.05
    # sorted 0.01 <= a/3 rejected; 0.03 > a/2: stop, 0.03 and 0.04 keep a/2 (not rejected)
    assert report.holm_levels([0.01, 0.04, 0.03]) == pytest.approx([a / 3, a / 2, a / 2])
    # all three rejected: 0.001 <= a/3, 0.02 <= a/2, 0.04 <= a
    assert report.holm_levels([0.04, 0.001, 0.02]) == pytest.approx([a, a / 3, a / 2])
    # the smallest fails a/3: the later ones, though under their own a/2 and a, keep a/3
    assert report.holm_levels([0.02, 0.024, 0.045]) == pytest.approx([a / 3] * 3)
    # a comparison that cannot be tested (NaN) is outside the family of the others
    assert report.holm_levels([0.03, math.nan]) == pytest.approx([a, a])


def test_paired_p_value_and_corrected_interval_against_scipy():
    from scipy import stats

    a = {1: 0.91, 2: 0.88, 3: 0.95, 4: 0.90}
    b = {1: 0.89, 2: 0.87, 3: 0.90, 4: 0.90}
    c = report.compare("a > b", a, b)
    d = np.array([a[s] - b[s] for s in a])
    assert c.p_value == pytest.approx(stats.ttest_rel(list(a.values()),
                                                      list(b.values())).pvalue, rel=1e-9)
    level = 0.05 / 3
    lo, hi = stats.t.interval(1 - level, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    at = report.holm([c, c, c])[0]
    assert at.alpha == pytest.approx(level)  # three equal p-values: the first at a/3, stop
    assert (at.diff.lo, at.diff.hi) == pytest.approx((lo, hi), rel=1e-9)
    assert at.diff.level == pytest.approx(1 - level)


def test_a_p_of_003_reproduces_alone_but_not_among_fifteen():
    # differences with a paired p-value just under 0.05
    base = {s: 0.8 for s in range(5)}
    better = {0: 0.81, 1: 0.804, 2: 0.809, 3: 0.8, 4: 0.812}  # p = 0.033
    alone = report.compare("a > b", better, base)
    assert 0.01 < alone.p_value < 0.05 and alone.verdict == report.REPRODUCED
    flat = [report.compare(f"a > c{k}", base, {s: 0.8 + 0.01 * ((s + k) % 3 - 1)
                                               for s in range(5)}) for k in range(14)]
    family = report.holm([alone, *flat])
    assert family[0].alpha == pytest.approx(0.05 / 15)
    assert family[0].verdict == report.INCONCLUSIVE and family[0].diff.lo < 0
    assert report.overall([alone, *flat])[0] == report.INCONCLUSIVE


def test_minimum_detectable_effect_by_hand():
    # d = 1, 2, 3: s = 1, n = 3; for 2 degrees of freedom t(q) = (2q - 1) / sqrt(2q(1 - q))
    t975, t80 = 0.95 / math.sqrt(2 * 0.975 * 0.025), 0.6 / math.sqrt(2 * 0.8 * 0.2)
    assert report.min_detectable([1.0, 2.0, 3.0]) == pytest.approx((t975 + t80) / math.sqrt(3))
    c = report.compare("a > b", {1: 2.0, 2: 3.0, 3: 4.0}, {1: 1.0, 2: 1.0, 3: 1.0},
                       paper_effect=0.5)
    assert c.min_detectable == pytest.approx((t975 + t80) / math.sqrt(3))
    assert c.paper_effect == 0.5
    assert math.isnan(report.min_detectable([1.0]))


def verdicts(*names):
    made = {report.REPRODUCED: ({1: 1.0, 2: 1.1, 3: 1.2}, {1: 0.0, 2: 0.1, 3: 0.2}),
            report.INCONCLUSIVE: ({1: 0.9, 2: 0.6}, {1: 0.7, 2: 0.7}),
            report.CONTRADICTED: ({1: 0.0, 2: 0.1, 3: 0.2}, {1: 1.0, 2: 1.1, 3: 1.2})}
    out = [report.compare(f"c{i}", *made[v]) for i, v in enumerate(names)]
    assert [c.verdict for c in report.holm(out)] == list(names)
    return out


def test_a_claim_of_several_comparisons():
    R, I, C = report.REPRODUCED, report.INCONCLUSIVE, report.CONTRADICTED
    assert report.overall(verdicts(R, R))[0] == R
    assert report.overall(verdicts(C, C))[0] == C
    verdict, reason = report.overall(verdicts(R, I, C))
    assert verdict == C  # a claim of "better in each comparison" fails on one contradiction
    assert reason.startswith("1 of 3 comparisons reproduced, 1 contradicted, 1 inconclusive")
    assert "contradicted: c2" in reason
    assert report.overall(verdicts(R, I))[0] == I
    assert report.overall(verdicts(I, I))[0] == I
    assert report.overall([])[0] == report.NOT_ASSESSED


# ---------------------------------------------------------------------------------
# per-paper measures on hand-made tables


def test_example1_closed_form():
    # the values of tests/analytic/test_fedlaavg_example1.py
    assert report.example1_limit(0.1, 1, 3) == pytest.approx(0.82655827, abs=1e-8)
    assert report.example1_limit(0.05, 1, 3) == pytest.approx(0.271 / 0.3439, abs=1e-10)
    assert report.example1_objective(0.5) == 0.25


def write_run(folder, scenario, evals, summary=None, events=None, labels=None):
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"scenario": scenario,
                                                    "seed": scenario["seed"]}))
    header = list(evals)
    lines = [",".join(header)] + [",".join(repr(float(v)) for v in row)
                                  for row in zip(*evals.values())]
    (folder / "evals.csv").write_text("\n".join(lines) + "\n")
    (folder / "summary.json").write_text(json.dumps(summary or {"wall_time_s": 1.0}))
    if events is not None:
        rows = ["t_s,kind,round,client,detail"] + [f"0.0,{k},{r},{c}," for k, r, c in events]
        (folder / "events.csv").write_text("\n".join(rows) + "\n")
    if labels is not None:
        (folder / "client_labels.json").write_text(json.dumps(
            {"n_classes": len(labels[0]), "counts": labels}))
    return report.RunInfo(folder, scenario["name"], scenario["seed"], scenario)


def test_diurnal_swing_by_hand(tmp_path):
    # period 4 rounds (period_rounds 2); 8 rounds; the second half is the period (4, 8]
    acc = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.9, 0.6, 0.7]
    run = write_run(tmp_path / "r", {"name": "x", "seed": 1, "population": {
        "availability": {"period_rounds": 2}}}, {"round": range(9), "accuracy": acc})
    swing, mean = report.diurnal_swing(run)
    assert swing == pytest.approx(0.9 - 0.5)
    assert mean == pytest.approx((0.5 + 0.9 + 0.6 + 0.7) / 4)


def test_switch_scores_by_hand(tmp_path):
    # sessions of 3 rounds, pilot session 0: session 1 restarts, session 2 starts from
    # session 1's model under every initialiser, 3 and 4 are the scored switches
    session = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]
    acc = [0.0, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 0.2, 0.4, 0.9, 0.3, 0.6, 0.6]
    run = write_run(tmp_path / "r", {"name": "x", "seed": 1, "population": {
        "sessions": {"pilot_sessions": 1}}},
        {"round": range(16), "accuracy": acc, "session": session})
    scores = report.switch_scores(run)
    assert list(scores) == [3, 4]
    assert scores[3] == pytest.approx((0.2, 0.5, 0.9))
    assert scores[4] == pytest.approx((0.3, 0.5, 0.6))


def test_invite_variance_and_rare_class_by_hand(tmp_path):
    events = [("invited", 0, 0), ("invited", 0, 1), ("arrived", 0, 1), ("invited", 1, 0)]
    scenario = {"name": "x", "seed": 1, "task": {"n_clients": 3},
                "network": {"mac": {"probs": [0.5, 0.4, 0.1]}}}
    run = write_run(tmp_path / "r", scenario, {"round": [0], "accuracy": [0.1]},
                    events=events, labels=[[0, 5, 1], [0, 0, 7], [6, 0, 0]])
    assert report.invite_variance(run) == pytest.approx(np.var([2, 1, 0]))
    # class weights: class 1 <- client 0 (0.5), class 2 <- client 1 (0.4), class 0 <- 0.1
    assert report.rare_class(run) == 0


def test_client_accuracies_weigh_the_class_accuracies(tmp_path):
    run = write_run(tmp_path / "r", {"name": "x", "seed": 1},
                    {"round": [0, 1], "accuracy": [0.0, 0.5], "acc_class_0": [0.0, 1.0],
                     "acc_class_1": [0.0, 0.0]}, labels=[[3, 1], [0, 2]])
    assert report.client_accuracies(run) == pytest.approx([0.75, 0.0])


# ---------------------------------------------------------------------------------
# the whole report on a campaign folder made by hand


def fedlaavg_campaign(tmp_path, swing_fedlaavg):
    folder = tmp_path / "fedlaavg"
    folder.mkdir()
    (folder / "study.json").write_text(json.dumps({
        "study": "fedlaavg", "mode": "quick", "seeds": [1, 2, 3], "wall_time_s": 12.0,
        "jobs": 1, "notes": {"t1": 1, "t2": 3}}))
    for gamma in (0.1, 0.05):
        for method, x in (("fedavg", report.example1_limit(gamma, 1, 3)), ("fedlaavg", 0.5)):
            scenario = {"name": f"fedlaavg-example1-{method}", "seed": 1, "task": {"lr": gamma}}
            write_run(folder / f"ex1-{method}-{gamma}", scenario,
                      {"round": [0, 4], "accuracy": [math.nan, math.nan],
                       "loss": [0.5, report.example1_objective(x)]})
    rounds = np.arange(41)
    for seed in (1, 2, 3):
        for method, amplitude in (("fedavg", 0.3), ("fedlaavg", swing_fedlaavg)):
            # a square wave of the day/night period (20 rounds) around 0.6, plus a seed offset
            acc = 0.6 + 0.01 * seed + amplitude / 2 * np.where((rounds // 10) % 2 == 0, 1, -1)
            scenario = {"name": f"fedlaavg-diurnal-{method}", "seed": seed,
                        "population": {"availability": {"period_rounds": 10}}}
            write_run(folder / f"d-{method}-{seed}", scenario,
                      {"round": rounds, "accuracy": acc, "loss": 1 - acc})
    (folder / "unfinished").mkdir()
    (folder / "unfinished" / "config.json").write_text(json.dumps({"scenario": {}}))
    return folder


def test_report_of_a_hand_made_campaign(tmp_path):
    folder = fedlaavg_campaign(tmp_path, swing_fedlaavg=0.02)
    path = report.write_report([folder], tmp_path / "out")
    text = path.read_text()
    assert (tmp_path / "out" / "figures" / "fedlaavg.png").is_file()
    assert "(figures/fedlaavg.png)" in text
    assert "10 finished runs (1 unfinished)" in text
    table = text.split("## Verdicts")[1].split("## How")[0]
    rows = [line for line in table.splitlines() if line.startswith("| FedLaAvg")]
    assert len(rows) == 3  # Example 1, the swing, the best accuracy (day/night)
    assert "**reproduced**" in rows[0]  # Example 1: the losses are the closed form's
    assert "**reproduced**" in rows[1]  # swing 0.02 < 0.3 in every seed
    # the swing of a square wave of amplitude A is A; its interval is exact (no spread)
    assert "| fedavg | 0.300 ± 0.000 |" in text


def test_a_claim_that_fails_is_reported_as_such(tmp_path):
    folder = fedlaavg_campaign(tmp_path, swing_fedlaavg=0.5)
    text = report.write_report([folder], tmp_path / "out").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| FedLaAvg")]
    assert "**contradicted**" in rows[1]
    assert "0 of 1 comparisons reproduced, 1 contradicted, 0 inconclusive" in rows[1]


def test_the_report_needs_a_study_folder(tmp_path, capsys):
    with pytest.raises(SimflError, match="study.json is missing"):
        report.write_report([tmp_path], tmp_path / "out")
    assert report.main([str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "study.json is missing" in capsys.readouterr().err
    (tmp_path / "study.json").write_text(json.dumps({"study": "nope"}))
    with pytest.raises(SimflError, match="unknown study 'nope'"):
        report.write_report([tmp_path], tmp_path / "out")


def test_the_verdict_table_states_effects_seeds_and_what_still_differs(tmp_path):
    folder = fedlaavg_campaign(tmp_path, swing_fedlaavg=0.02)
    meta = json.loads((folder / "study.json").read_text())
    meta["notes"].update(rounds=40, differs=["logistic regression, not the CNN",
                                             "50 clients, not 1,000"])
    (folder / "study.json").write_text(json.dumps(meta))
    text = report.write_report([folder], tmp_path / "out").read_text()
    table = text.split("## Verdicts")[1].split("## How")[0]
    header = table.strip().splitlines()[0]
    assert header.startswith("| paper | claim | paper's effect | simfl's effect ± interval | "
                             "verdict |") and "| settings that still differ |" in header
    swing = next(line for line in table.splitlines() if "swings less" in line)
    cells = [c.strip() for c in swing.strip("|").split("|")]
    assert cells[3] == "+0.280 ± 0.000"  # 0.3 - 0.02 in each seed, lower is better
    assert cells[6:9] == ["3 paired", "40", "logistic regression, not the CNN; 50 clients, "
                                           "not 1,000"]
    assert "Where the study still differs from the paper: logistic regression" in text
    # a section's claim may state its own seeds and rounds (one run per setting, say)
    section = report.Section("X: y", [report.Claim("c", report.REPRODUCED, "r",
                                                   seeds="1 per gamma", rounds="400"),
                                      ("d", report.INCONCLUSIVE, "s")],
                             seeds="5", rounds="200")
    rows = section.rows()
    assert rows[0][6:8] == ["1 per gamma", "400"] and rows[1][6:8] == ["5", "200"]


def test_a_claims_paper_effect_and_the_comparison_table(tmp_path):
    body, claims = [], []
    comparisons = [report.compare(f"a > b ({k})", {1: 0.9, 2: 0.92, 3: 0.91},
                                  {1: 0.8, 2: 0.8, 3: 0.8 + k / 100}, paper_effect=0.03)
                   for k in range(2)]
    report.verdict_block("a beats b", comparisons, "accuracy", claims, body)
    claim = claims[0]
    assert claim.verdict == report.REPRODUCED and claim.paper_effect == "+0.030"
    # the smallest and the largest effect: 0.1, 0.12, 0.1 and 0.1, 0.12, 0.11
    assert claim.simfl_effect.startswith("+0.107 ± ") and claim.simfl_effect.endswith("(a > b (0))")
    table = body[2]
    assert "| level | paper's effect | smallest detectable |" in table
    # the first of two at 0.05 / 2, the second (larger p) at 0.05
    assert "| 97.50% | +0.030 |" in table and "| 95.00% | +0.030 |" in table


def test_comparisons_csv_holds_each_comparison_and_its_seeds(tmp_path):
    folder = fedlaavg_campaign(tmp_path, swing_fedlaavg=0.02)
    report.write_report([folder], tmp_path / "out")
    with open(tmp_path / "out" / "comparisons.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    swing = [r for r in rows if "swing" in r["claim"].lower() or "swings" in r["claim"]]
    assert len(swing) == 1
    row = swing[0]
    # fedavg's swing 0.3 minus fedlaavg's 0.02, the same in each of the three seeds
    labelled = [d.split(":") for d in row["per_seed_differences"].split(";")]
    assert [seed for seed, _ in labelled] == ["1", "2", "3"]  # labelled, in seed order
    assert [float(d) for _, d in labelled] == pytest.approx([0.28] * 3)
    assert int(row["paired_seeds"]) == 3 and float(row["effect"]) == pytest.approx(0.28)
    assert row["verdict"] == "reproduced"


def test_a_diverged_run_is_left_out_of_the_comparisons_and_counted(tmp_path):
    folder = fedlaavg_campaign(tmp_path, swing_fedlaavg=0.02)
    summary = json.loads((folder / "d-fedavg-2" / "summary.json").read_text())
    summary["warnings"] = ["the global model diverged: at the evaluation after round 3"]
    (folder / "d-fedavg-2" / "summary.json").write_text(json.dumps(summary))
    text = report.write_report([folder], tmp_path / "out").read_text()
    assert "Runs whose model diverged (left out of the comparisons): diurnal-fedavg 1 of 3" in text
    with open(tmp_path / "out" / "comparisons.csv", newline="") as f:
        swing = [r for r in csv.DictReader(f) if "swings" in r["claim"]]
    assert int(swing[0]["paired_seeds"]) == 2  # seed 2's fedavg run is out
