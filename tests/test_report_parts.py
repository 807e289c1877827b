"""The report's per-study parts: regenerating one study from its campaign folder keeps the
other studies' parts, its raw claim metrics are committed beside its runs, and the check
recomputes every comparison from those raw metrics, independently of the report's code."""

import csv
import json
import sys
from pathlib import Path

import pytest

from test_report import fedlaavg_campaign, report

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
try:
    from analysis.reproduction import check
finally:
    sys.path.remove(str(ROOT))
from reproduction.comparisons_csv import COLUMNS  # noqa: E402  (report put analysis/ on the path)
from reproduction.parts import write_part  # noqa: E402


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _foreign_part(out):
    """A part of another study already in the report folder (as committed)."""
    (out / "sections").mkdir(parents=True)
    (out / "sections" / "fedar.md").write_text("## FedAR: kept\n\nThe kept section.\n")
    row = ["FedAR", "kept claim", "-", "+0.2", "**inconclusive**", "r", "3", "9", "-", "-"]
    (out / "sections" / "fedar.json").write_text(json.dumps({
        "key": "fedar", "study": "fedar", "title": "FedAR: kept", "mode": "full",
        "campaign": "gone", "generated": "then", "rows": [row]}))
    with open(out / "comparisons.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        # differences 0.1, 0.2, 0.3: mean 0.2, s = 0.1, t(0.975, 2) = 4.302653, so the
        # interval is 0.2 ± 0.248414, p = 0.0741799 and D = (4.302653 + 1.060660) s / sqrt(3)
        w.writerow(["fedar", "FedAR", "kept claim", "a > b", "3", "0.2", "-0.0484138",
                    "0.448414", "0.95", "0.0741799", "", "0.309651", "inconclusive",
                    "1:0.1;2:0.2;3:0.3"])


def test_one_study_is_regenerated_and_the_others_parts_are_kept(tmp_path):
    out = tmp_path / "report"
    _foreign_part(out)
    folder = fedlaavg_campaign(tmp_path, swing_fedlaavg=0.02)
    report.write_report([folder], out)
    first = _rows(out / "comparisons.csv")
    assert [r["study"] for r in first] == ["fedar"] + ["fedlaavg"] * 2  # the report's order
    text = (out / "report.md").read_text()
    assert "The kept section." in text and "| FedAR | kept claim |" in text
    assert text.index("## FedAR: kept") < text.index("## FedLaAvg")
    # the same study again, now failing its swing claim: its rows are replaced, not added
    (tmp_path / "again").mkdir()
    again = fedlaavg_campaign(tmp_path / "again", swing_fedlaavg=0.5)
    report.write_report([again], out)
    rows = _rows(out / "comparisons.csv")
    assert len(rows) == 3 and rows[0] == first[0]
    swing = next(r for r in rows if "swings" in r["claim"])
    assert swing["verdict"] == "contradicted"
    text = (out / "report.md").read_text()
    assert "The kept section." in text and text.count("## FedLaAvg") == 1
    assert "**contradicted**" in next(line for line in text.splitlines()
                                      if line.startswith("| FedLaAvg") and "swings" in line)
    # no campaign: the report is only reassembled from the parts
    assert report.main(["--out", str(out)]) == 0
    assert (out / "report.md").read_text().count("## FedLaAvg") == 1
    for name in ("sections/fedlaavg.md", "sections/fedlaavg.json",
                 "results/fedlaavg_claims.csv", "figures/fedlaavg.png"):
        assert (out / name).is_file(), name
    runs = _rows(out / "results" / "fedlaavg.csv")  # the 10 finished runs, not the unfinished
    assert len(runs) == 10 and {r["arm"] for r in runs} >= {"diurnal-fedavg", "example1-fedavg"}


def test_raw_claim_metrics_are_the_runs_values_by_seed(tmp_path):
    folder = fedlaavg_campaign(tmp_path, swing_fedlaavg=0.02)
    report.write_report([folder], tmp_path / "out")
    raw = _rows(tmp_path / "out" / "results" / "fedlaavg_claims.csv")
    swing = [r for r in raw if r["comparison"] == "fedlaavg swing < fedavg swing"]
    assert [r["seed"] for r in swing] == ["1", "2", "3"]
    assert {r["metric"] for r in swing} == {"swing"} and swing[0]["higher_is_better"] == "false"
    assert [float(r["better"]) for r in swing] == pytest.approx([0.02] * 3)
    assert [float(r["other"]) for r in swing] == pytest.approx([0.3] * 3)


def test_the_check_recomputes_from_the_raw_metrics_and_finds_a_changed_value(tmp_path):
    folder = fedlaavg_campaign(tmp_path, swing_fedlaavg=0.02)
    out = tmp_path / "out"
    _foreign_part(out)
    report.write_report([folder], out)
    n, found, sources = check.check(out / "comparisons.csv")
    assert (n, found) == (3, [])
    assert sources["fedlaavg"].startswith("recomputed from its raw claim metrics")
    assert sources["fedar"].startswith("no raw claim metrics")  # checked the old way
    claims = out / "results" / "fedlaavg_claims.csv"
    text = claims.read_text()
    claims.write_text(text.replace("0.3", "0.4", 1))  # one run's swing changed
    n, found, _ = check.check(out / "comparisons.csv")
    assert any("per_seed_differences" in line for line in found)
    assert any(": effect " in line for line in found)
    assert check.main([str(out / "comparisons.csv")]) == 1


def test_the_checks_own_rule_agrees_with_the_reports_on_every_verdict(tmp_path):
    """Hand-made comparisons, one per verdict (as in test_verdict_rule), written as a
    study's parts; the check's independent rule must give each the same verdict."""
    def around(mean, spread, n=10):
        return {s: mean + (spread if s % 2 else -spread) for s in range(1, n + 1)}

    cases = [(0.0004, 0.0001, 10), (0.028, 0.004, 10), (0.001, 0.004, 10),
             (0.01, 0.3, 3), (-0.02, 0.001, 10)]
    claims, body = [], []
    for i, (mean, spread, n) in enumerate(cases):
        d = around(mean, spread, n)
        report.verdict_block(f"claim {i}", [report.compare(f"c{i}", d, {s: 0.0 for s in d},
                                                           paper_effect=0.03)],
                             "accuracy", claims, body)
    section = report.Section("Hand: made", claims, body, key="hand")
    campaign = report.Campaign(tmp_path, {"study": "hand", "mode": "quick"}, [])
    write_part(section, campaign, tmp_path / "out")
    rows = _rows(tmp_path / "out" / "comparisons.csv")
    assert {r["verdict"] for r in rows} == {"smaller than the paper's", "reproduced",
                                            "inconclusive", "contradicted"}
    n, found, sources = check.check(tmp_path / "out" / "comparisons.csv")
    assert (n, found) == (5, []) and sources["hand"].startswith("recomputed")
    for (mean, spread, n_seeds), row in zip(cases, rows):
        assert check.rule(int(row["paired_seeds"]), float(row["lo"]), float(row["hi"]), 0.03,
                          float(row["min_detectable"]) if row["min_detectable"] != "nan"
                          else float("nan")) == row["verdict"]
