"""A run folder or campaign never makes simfl import its code: a factory or loss read
back from config.json or a campaign index runs only when the user names it again, and a
module inside the folder only with --trust-code."""

import json
import sqlite3
import uuid

import pytest

from simfl.cli import main
from simfl.core.config.code_refs import code_references

TIMING = ["--set", "run.timing_only=true", "--set", "run.rounds=2", "--set",
          "task.n_clients=10", "--quiet"]


def plant(folder, marker):
    """A module in ``folder`` that writes ``marker`` when imported; its factory's and
    loss's import paths."""
    name = f"planted_{uuid.uuid4().hex[:10]}"
    (folder / f"{name}.py").write_text(
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).write_text('ran')\n"
        "def make(input_shape, n_classes):\n"
        "    raise ValueError('planted')\n"
        "def loss(logits, targets):\n"
        "    return logits.sum()\n")
    return f"{name}:make", f"{name}:loss"


def name_code(tree, factory, loss):
    if factory:
        tree["task"]["model"] = {"kind": "torch_module", "factory": factory}
    if loss:
        tree["task"]["loss"] = loss
    return tree


@pytest.fixture
def stopped_run(tmp_path, monkeypatch):
    """A run folder stopped after its checkpoint (the working folder is its parent)."""
    monkeypatch.chdir(tmp_path)
    assert main(["run", "quickstart", *TIMING, "--set", "run.checkpoint_every_rounds=1",
                 "--out", "r"]) == 0
    run = tmp_path / "r"
    for name in ("summary.json", "clients.csv"):
        (run / name).unlink()
    return run


@pytest.mark.parametrize("field", ["factory", "loss"])
def test_resume_never_imports_code_named_only_in_the_run_folder(stopped_run, tmp_path,
                                                                 monkeypatch, capsys, field):
    marker = tmp_path / "MARKER"
    factory, loss = plant(stopped_run, marker)
    path = factory if field == "factory" else loss
    config = json.loads((stopped_run / "config.json").read_text())
    name_code(config["scenario"], *((factory, None) if field == "factory" else (None, loss)))
    (stopped_run / "config.json").write_text(json.dumps(config))
    monkeypatch.chdir(stopped_run)  # the planted module would import from here
    capsys.readouterr()

    assert main(["resume", "."]) == 2
    err = capsys.readouterr().err
    assert path in err and "--trust-code" in err and len(err.strip().splitlines()) == 1
    # named again, but its module lies inside the folder: still refused
    key = "task.model.factory" if field == "factory" else "task.loss"
    assert main(["resume", ".", "--set", f"{key}={path}"]) == 2
    assert "inside" in capsys.readouterr().err
    assert main(["resume", ".", "--set", "task.loss=5"]) == 2  # resume changes nothing else
    assert not marker.exists()

    main(["resume", ".", "--trust-code", "--quiet"])  # trusted: the module is imported
    assert field == "loss" or marker.exists()  # (a timing-only run never builds its loss)


def test_resume_of_an_untouched_folder_needs_no_flag(stopped_run, capsys):
    assert main(["resume", str(stopped_run), "--quiet"]) == 0
    assert (stopped_run / "summary.json").is_file()


@pytest.fixture
def campaign(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "quickstart", *TIMING, "--set", "run.checkpoint_every_rounds=1",
                 "--out", "camp"]) == 0
    return tmp_path / "camp"


def sweep_again(*extra):
    return main(["sweep", "quickstart", *TIMING, "--set", "run.checkpoint_every_rounds=1",
                 "--out", ".", *extra])


def test_sweep_never_imports_code_named_only_in_the_campaign_index(campaign, tmp_path,
                                                                    monkeypatch, capsys):
    marker = tmp_path / "MARKER"
    factory, _ = plant(campaign, marker)
    db = sqlite3.connect(campaign / "index.sqlite")
    (id, folder, scenario), = db.execute("SELECT id, folder, scenario FROM runs").fetchall()
    db.execute("UPDATE runs SET scenario = ?, status = 'pending' WHERE id = ?",
               (json.dumps(name_code(json.loads(scenario), factory, None)), id))
    db.commit()
    db.close()
    (campaign / folder / "summary.json").unlink()
    monkeypatch.chdir(campaign)
    capsys.readouterr()

    assert sweep_again() == 2
    err = capsys.readouterr().err
    assert factory in err and "index.sqlite" in err and len(err.strip().splitlines()) == 1
    assert not marker.exists()
    sweep_again("--trust-code")  # the run fails in its factory, after the import
    assert marker.exists()


def test_sweep_never_imports_code_named_only_in_a_run_folders_config(campaign, tmp_path,
                                                                      monkeypatch, capsys):
    marker = tmp_path / "MARKER"
    _, loss = plant(campaign, marker)
    db = sqlite3.connect(campaign / "index.sqlite")
    (id, folder), = db.execute("SELECT id, folder FROM runs").fetchall()
    db.execute("UPDATE runs SET status = 'pending' WHERE id = ?", (id,))
    db.commit()
    db.close()
    run = campaign / folder
    (run / "summary.json").unlink()
    config = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps(
        {**config, "scenario": name_code(config["scenario"], None, loss)}))
    monkeypatch.chdir(campaign)
    capsys.readouterr()

    assert sweep_again() == 2
    err = capsys.readouterr().err
    assert loss in err and "config.json" in err
    assert not marker.exists() and (run / "config.json").is_file()  # nothing was touched


def test_code_references_are_found_wherever_they_are():
    tree = {"task": {"loss": "a.b:c", "model": {"kind": "mlp"}, "x": ["m:f.g", "no colon"]},
            "name": "quickstart"}
    assert sorted(code_references(tree)) == [("task.loss", "a.b:c"), ("task.x[0]", "m:f.g")]
