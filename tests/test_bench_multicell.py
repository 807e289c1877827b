"""The benchmark's multi-cell arm at a toy size: its scenario is the 57-sector UMa layout
with interference and power control, a run of it counts events and rounds, and its table
prints one row per variant (the benchmark's figures themselves are measured, not tested)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from comparison.multicell import (MULTICELL_VARIANTS, arm_multicell,  # noqa: E402
                                  multicell_scenario, multicell_table)


def test_the_arm_runs_57_interfering_sectors_and_tabulates_its_rates():
    scenario = multicell_scenario(600, 57, 2, "average")
    assert len(scenario.network.cells.access_points) == 57
    assert scenario.network.radio.path_loss.kind == "uma"
    assert scenario.network.radio.power_control.kind == "fractional"
    runs = {variant: [arm_multicell(600, 57, 2, variant)] for variant in MULTICELL_VARIANTS}
    for variant, (r,) in runs.items():
        assert r["interference"] == variant and r["rounds"] == 2 and r["cells"] == 57
        assert r["events"] > 57 and r["cpu_s"] > 0
    lines = multicell_table(runs, 600, 57, 0)
    assert [line.split()[0] for line in lines[2:]] == list(MULTICELL_VARIANTS)
    # name, repetitions, events, rounds, then min / median / max of three columns
    assert all(len(line.split()) == 4 + 3 * 5 for line in lines[2:])
