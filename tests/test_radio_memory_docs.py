"""docs/network-models.md's section on fading with memory and mobility: its example runs
as printed, and docs/run-directory.md describes the mobility.csv it writes."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## 8. Fading with memory and mobility"


def test_the_fading_and_mobility_example_runs(tmp_path, monkeypatch, capsys):
    text = (ROOT / "docs" / "network-models.md").read_text(encoding="utf-8")
    assert SECTION in text
    blocks = re.findall(r"```python\n(.*?)```", text.split(SECTION, 1)[1], re.S)
    assert blocks, "the section has a python example"
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], "network-models.md", "exec"), {})
    assert capsys.readouterr().out.split() == ["5", "True"]
    (moved,) = tmp_path.glob("runs/*/mobility.csv")
    lines = moved.read_text().splitlines()
    assert lines[0] == "t_s,client,x_m,y_m,ap" and len(lines) == 1 + 20 * 5
    documented = (ROOT / "docs" / "run-directory.md").read_text(encoding="utf-8")
    assert "`mobility.csv`" in documented and "## `mobility.csv`" in documented
