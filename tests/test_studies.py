"""The reproduction studies (studies/): their campaigns are valid in both modes, a study
writes its campaign folder and resumes it, and (slow) the whole quick mode with its
report."""

import itertools
import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import simfl
from studies import common, cvar, fedar, fedlaavg
from studies.run_all import STUDIES, load_report

ROOT = Path(__file__).resolve().parents[1]


def points(study):
    """Every (arm, scenario) the campaign expands to, seeds left out."""
    for arm in study.arms:
        grid = {**study.grid, **arm.grid}
        for combo in itertools.product(*grid.values()):
            yield arm, simfl.apply_overrides(study.base, [*arm.set.items(), *zip(grid, combo)])


@pytest.mark.parametrize("quick", [True, False], ids=["quick", "full"])
@pytest.mark.parametrize("name", sorted(STUDIES))
def test_every_arm_and_grid_point_resolves(name, quick):
    study = STUDIES[name].study(quick)
    assert study.name == name and study.mode == ("quick" if quick else "full")
    assert study.seeds == (common.QUICK_SEEDS if quick else common.FULL_SEEDS)
    scenarios = list(points(study))
    assert scenarios
    for arm, scenario in scenarios:
        assert scenario.run.rounds >= 1
        if not quick and name not in ("cvar", "fedgs") and not arm.name.startswith("example1"):
            assert scenario.task.dataset.kind in ("mnist5k", "idx")


def test_the_campaign_sizes():
    sizes = {name: (m.study(True).n_runs, m.study(False).n_runs) for name, m in STUDIES.items()}
    # fedar: 6 methods x 3 p_min; cvar: 2 settings x 3 alphas; warm_start: 4 initialisers;
    # fedgs: 9 arms x 7 modes; fedlaavg: Example 1 (2 methods x 2 gammas, 1 seed) + 2 methods
    assert sizes == {"fedar": (36, 90), "cvar": (12, 30), "warm_start": (8, 20),
                     "fedgs": (126, 315), "fedlaavg": (8, 14)}


def test_quick_mode_is_shorter():
    for module in STUDIES.values():
        quick, full = module.study(True), module.study(False)
        q = max(s.run.rounds for _, s in points(quick))
        f = max(s.run.rounds for _, s in points(full))
        assert q < f


def test_full_mode_reads_mnist_from_the_environment(monkeypatch):
    monkeypatch.setenv(common.MNIST_ENV, "/data/mnist")
    arm = fedar.study(False, model="cnn").arms[0]
    assert arm.set["task.dataset"] == {"kind": "idx", "path": "/data/mnist"}
    assert arm.set["task.model"] == "cnn"


def test_cvar30_relay_weights_follow_each_users_class():
    from simfl.experiment.build import build_context
    from simfl.train.probe import label_histograms

    study = cvar.study(True)
    for arm in (a for a in study.arms if a.name == "cvar30-a1"):
        (seed,) = arm.seeds
        scenario = simfl.apply_overrides(study.base, [*arm.set.items(), ("seed", seed)])
        classes = np.argmax(label_histograms(build_context(scenario).data), axis=1)
        assert len(classes) == 30
        assert scenario.network.mac.probs == tuple(cvar.WEIGHTS[k] for k in classes)


def tiny_fedar(tmp_path):
    study = fedar.study(True)
    arms = [replace(a, set={**a.set, "run.rounds": 2}, seeds=(1,)) for a in study.arms[:2]]
    return replace(study, arms=arms, grid={"population.availability.p_min": [0.1]})


def test_a_study_writes_its_campaign_and_resumes(tmp_path):
    study = tiny_fedar(tmp_path)
    out = common.run_study(study, tmp_path / "fedar", echo=lambda line: None)
    meta = json.loads((out / common.STUDY_FILE).read_text())
    assert meta["study"] == "fedar" and meta["mode"] == "quick"
    assert (meta["arms"], meta["runs"], meta["ran_now"], meta["failed_now"]) == \
        (["fedar", "mifa"], 2, 2, 0)
    runs = common.run_folders(out)
    assert [p.name for p in runs] == ["name=fedar-fedar,p_min=0.1,seed=1",
                                      "name=fedar-mifa,p_min=0.1,seed=1"]
    labels = json.loads((runs[0] / "client_labels.json").read_text())
    counts = np.array(labels["counts"])
    assert counts.shape == (100, labels["n_classes"])
    # two label shards per client; a shard may straddle two labels
    classes = (counts > 0).sum(axis=1)
    assert classes.max() <= 4 and np.median(classes) == 2
    header = (runs[0] / "evals.csv").read_text().splitlines()[0]
    assert header.endswith(",acc_class_9")
    again = common.run_study(study, out, echo=lambda line: None)
    assert json.loads((again / common.STUDY_FILE).read_text())["ran_now"] == 0


def test_example1_study_and_its_report(tmp_path):
    study = fedlaavg.study(True)
    study = replace(study, arms=[a for a in study.arms if a.name.startswith("example1")])
    out = common.run_study(study, tmp_path / "fedlaavg", echo=lambda line: None)
    assert len(common.run_folders(out)) == 4
    text = load_report().write_report([out], tmp_path / "report").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| FedLaAvg | In Example 1"))
    assert "**reproduced**" in row


@pytest.mark.slow
def test_the_whole_quick_mode_and_its_report(tmp_path):
    """``python -m studies --quick``: every study and the report in at most 10 minutes."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "studies", "--quick", "--out", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    elapsed = time.perf_counter() - started
    assert done.returncode == 0, done.stderr[-2000:]
    for name in STUDIES:
        assert (tmp_path / name / common.STUDY_FILE).is_file()
    text = (tmp_path / "report" / "report.md").read_text()
    table = text.split("## Verdicts")[1].split("## How")[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "**" in line]
    assert len(rows) == 7
    assert all(any(f"**{v}**" in row for v in ("reproduced", "contradicted", "inconclusive",
                                                "not assessed")) for row in rows)
    for figure in ("fedar", "cvar", "warm_start", "fedgs", "fedlaavg"):
        assert (tmp_path / "report" / "figures" / f"{figure}.png").is_file()
    assert elapsed <= 600, f"the quick mode took {elapsed:.0f} s"
