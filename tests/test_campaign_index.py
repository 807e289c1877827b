"""A campaign index that was damaged or edited: every problem is one line (exit 2), and
no folder inside or outside the campaign is removed or written."""

import shutil
import sqlite3

import pytest

from simfl.campaign import sweep
from simfl.campaign.index import CampaignIndex
from simfl.cli import main

#: timing-only runs of ten clients: a fraction of a second each
TIMING = ["run.rounds=2", "task.n_clients=10", "run.timing_only=true"]
SWEEP = ["sweep", "quickstart", "--seeds", "1-2", "--quiet",
         *[a for s in TIMING for a in ("--set", s)]]


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    """A finished campaign of two runs (seed=1, seed=2), copied by each test."""
    out = tmp_path_factory.mktemp("base") / "c"
    assert sweep("quickstart", seeds="1-2", set=TIMING, out=out).ran == 2
    return out


@pytest.fixture
def campaign(tmp_path, done):
    """A copy of ``done`` at tmp_path/c, next to a folder tmp_path/victim with a file."""
    shutil.copytree(done, tmp_path / "c")
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / "keep.txt").write_text("keep")
    return tmp_path / "c"


def snapshot(root):
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None
            for p in sorted(root.rglob("*")) if p.name != "index.lock"}


def one_line(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def edit(campaign, sql, *args):
    with sqlite3.connect(campaign / "index.sqlite") as db:
        db.execute(sql, args)
    db.close()


@pytest.mark.parametrize("folder", ["..", "../victim", "VICTIM", ".", ""])
def test_a_pending_run_whose_folder_leads_elsewhere_is_refused_and_nothing_moves(
        campaign, capsys, folder):
    root = campaign.parent
    stored = str(root / "victim") if folder == "VICTIM" else folder
    edit(campaign, "UPDATE runs SET status = 'pending', folder = ? WHERE folder = 'seed=2'",
         stored)
    before = snapshot(root)
    err = one_line(capsys, [*SWEEP, "--out", str(campaign)])
    assert f"folder = {stored!r}" in err and "'seed=2'" in err
    assert snapshot(root) == before
    err = one_line(capsys, ["results", str(campaign)])
    assert f"folder = {stored!r}" in err


def test_a_folder_of_another_run_is_refused(campaign, capsys):
    edit(campaign, "UPDATE runs SET status = 'pending', folder = 'seed=3' WHERE folder = "
         "'seed=2'")
    (campaign / "seed=3").mkdir()
    (campaign / "seed=3" / "keep.txt").write_text("keep")
    before = snapshot(campaign.parent)
    one_line(capsys, [*SWEEP, "--out", str(campaign)])
    assert snapshot(campaign.parent) == before


def garbage_page(campaign):
    path = campaign / "index.sqlite"
    data = bytearray(path.read_bytes())
    assert len(data) >= 3 * 4096
    data[4096:8192] = bytes(range(256)) * 16
    path.write_bytes(bytes(data))


def lock_folder(campaign):
    lock = campaign / "index.lock"
    if lock.exists():
        lock.unlink()
    lock.mkdir()


def sql(text):
    return lambda campaign: edit(campaign, text)


DAMAGE = {
    "garbage page": garbage_page,
    "not sqlite": lambda c: (c / "index.sqlite").write_bytes(b"not a database\n" * 500),
    "dropped column": sql("ALTER TABLE runs DROP COLUMN summary"),
    "renamed column": sql("ALTER TABLE runs RENAME COLUMN params TO grid"),
    "dropped grid keys column": sql("ALTER TABLE grid_keys RENAME COLUMN key TO name"),
    "params not JSON": sql("UPDATE runs SET params = '{oops'"),
    "params a list": sql("UPDATE runs SET params = '[1, 2]'"),
    "params without a seed": sql("""UPDATE runs SET params = '{"seed": "one"}'"""),
    "summary not JSON": sql("UPDATE runs SET summary = 'NaN!'"),
    "summary a list": sql("UPDATE runs SET summary = '[]'"),
    "scenario not JSON": sql("UPDATE runs SET scenario = ''"),
    "scenario a number": sql("UPDATE runs SET scenario = '7'"),
    "wall time text": sql("UPDATE runs SET wall_time_s = 'slow'"),
    "attempts text": sql("UPDATE runs SET attempts = 'many'"),
    "summary with a 5,000-digit number": sql(
        "UPDATE runs SET summary = '{\"rounds\": " + "9" * 5000 + "}'"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_index_is_one_line_for_results_and_sweep(campaign, capsys, damage):
    DAMAGE[damage](campaign)
    before = snapshot(campaign.parent)
    err = one_line(capsys, ["results", str(campaign)])
    assert "index.sqlite" in err
    one_line(capsys, [*SWEEP, "--out", str(campaign)])
    assert snapshot(campaign.parent) == before


def test_a_lock_that_is_a_folder_is_one_line(campaign, capsys):
    lock_folder(campaign)
    before = snapshot(campaign.parent)
    err = one_line(capsys, [*SWEEP, "--out", str(campaign)])
    assert "index.lock" in err and "plain file" in err
    assert snapshot(campaign.parent) == before


def test_a_grid_value_of_5000_digits_is_one_line_and_makes_nothing(tmp_path, capsys):
    err = one_line(capsys, [*SWEEP, "--out", str(tmp_path / "c"),
                            "--grid", "server.deadline_s=1," + "1" * 5000])
    assert "server.deadline_s" in err and len(err) < 500
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("jobs", ["0", "-3"])
def test_jobs_out_of_range_is_refused_before_the_campaign_folder_is_made(tmp_path, capsys, jobs):
    err = one_line(capsys, [*SWEEP, "--out", str(tmp_path / "c"), "--jobs", jobs])
    assert "error: --jobs = " in err
    assert not (tmp_path / "c").exists()


def test_runs_indexed_under_another_grid_keep_their_folders(tmp_path):
    out = tmp_path / "c"
    sweep("quickstart", seeds="1", grid=["server.deadline_s=5"], set=TIMING, out=out)
    # the same run, now one point of a larger grid (0.2 is the scenario's own value)
    grown = sweep("quickstart", seeds="1", grid=["server.deadline_s=5", "network.uplink.p=0.2,0.3"],
                  set=TIMING, out=out)
    assert (grown.total, grown.ran, grown.skipped) == (2, 1, 1)
    index = CampaignIndex(out)
    folders = sorted(row.folder for row in index.rows())
    index.close()
    assert folders == ["deadline_s=5,p=0.3,seed=1", "deadline_s=5,seed=1"]


def test_a_run_left_running_twice_gets_a_fresh_built_name_each_time(tmp_path):
    out = tmp_path / "c"
    sweep("quickstart", seeds="1", set=TIMING, out=out)
    seen = ["seed=1"]
    for _ in range(3):
        index = CampaignIndex(out)
        index.set_running(index.rows()[0].id)  # as a sweep killed with SIGKILL leaves it
        index.close()
        assert sweep("quickstart", seeds="1", set=TIMING, out=out).ran == 1
        index = CampaignIndex(out)
        seen.append(index.rows()[0].folder)
        index.close()
        assert seen[-1] != seen[-2] and seen[-1] in ("seed=1", "seed=1_2")
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == [seen[-1]]


def test_a_run_folder_that_is_a_link_is_refused_and_its_target_kept(campaign, capsys):
    edit(campaign, "UPDATE runs SET status = 'pending' WHERE folder = 'seed=2'")
    shutil.rmtree(campaign / "seed=2")
    (campaign / "seed=2").symlink_to(campaign.parent / "victim")
    before = snapshot(campaign.parent)
    err = one_line(capsys, [*SWEEP, "--out", str(campaign)])
    assert "is a link" in err
    assert snapshot(campaign.parent) == before


def test_a_sweep_never_empties_a_run_folder_that_another_process_holds(tmp_path, monkeypatch):
    import json

    import simfl.experiment as experiment
    import simfl.experiment.checkpoint as checkpoint
    from simfl.campaign.worker import _resumed
    from simfl.core.config import load_scenario
    from simfl.metrics.run_lock import RunInUse

    scenario = load_scenario("quickstart")
    folder = tmp_path / "seed=1"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"scenario": scenario.to_dict()}))

    def held(_folder, **_options):
        raise RunInUse(f"{_folder} is in use by another simfl run or resume")

    monkeypatch.setattr(checkpoint, "latest", lambda _folder: "round_000001")
    monkeypatch.setattr(experiment, "resume_run", held)
    with pytest.raises(RunInUse):
        _resumed(folder, scenario)
    assert (folder / "config.json").is_file()
