"""Input that used to be taken silently: a script that exits, a mistyped path, booleans
written as words, and values so large that training or the energy meter overflows."""

import os

import pytest

from simfl.cli import main
from simfl.core.config import Run
from simfl.core.errors import ConfigError


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize("body", [
    "import sys\nsys.exit(0)\n",
    "import sys\ndef scenario():\n    sys.exit(0)\n",
    "def scenario():\n    raise SystemExit('bye')\n",
])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_script_that_exits_is_one_line_naming_it_and_exit_2(tmp_path, capsys, body, command):
    script = tmp_path / "leaves.py"
    script.write_text(body)
    assert main([command, str(script), "--out", str(tmp_path / "out")]
                if command == "run" else [command, str(script)]) == 2
    assert str(script) in _one_line(capsys) and not (tmp_path / "out").exists()


@pytest.mark.parametrize("path", ["../quickstart", "elsewhere/quickstart", "quickstart.py",
                                  "./quickstart", "scenarios/quickstart/"])
def test_a_path_that_does_not_exist_is_not_taken_for_a_bundled_name(tmp_path, capsys,
                                                                    monkeypatch, path):
    monkeypatch.chdir(tmp_path)
    assert main(["validate", path]) == 2
    assert repr(path) in _one_line(capsys)


def test_a_bare_name_and_an_existing_path_still_resolve(tmp_path, capsys, monkeypatch):
    assert main(["validate", "quickstart"]) == 0
    script = tmp_path / "mine.py"
    script.write_text("import simfl\ndef scenario():\n    return simfl.Scenario(name='mine')\n")
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "mine.py"]) == 0
    assert main(["validate", f".{os.sep}mine.py"]) == 0
    assert '"name": "mine"' in capsys.readouterr().out


@pytest.mark.parametrize("raw", ["yes", "1", "0", '"true"', "True", "on", "null"])
def test_booleans_are_true_or_false_only(capsys, raw):
    assert main(["validate", "quickstart", "--set", f"run.timing_only={raw}"]) == 2
    assert "run.timing_only" in _one_line(capsys)


def test_booleans_from_python_must_be_bools():
    for value in (1, 0, "yes", 1.0):
        with pytest.raises(ConfigError, match="timing_only"):
            Run(timing_only=value)
    assert Run(timing_only=True).timing_only is True
