"""Fading with memory and mobility wired into a run: both radio links fade, each
direction with its own process; mobility.csv is refused without a radio, in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from simfl.core.config import apply_overrides, load_scenario, parse_override
from simfl.core.config.fading import Fading
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree
from simfl.experiment.build import build_links
from simfl.sim.radio.fading import FadingProcess, build_fading
from simfl.sim.radio.mobility import RandomWaypointMover

from contracts.kinds import registered_for_now

ROOT = Path(__file__).resolve().parents[1]
RADIO = ("population.placement=disc", "network.uplink=ideal",
         'network.radio={"fading": {"kind": "rician", "k_factor": 2, "coherence_s": 0.5}}',
         'population.mobility={"kind": "random_waypoint"}')


def test_both_radio_links_fade_each_with_its_own_process():
    scenario = apply_overrides(load_scenario("quickstart"), [parse_override(o) for o in RADIO])
    links, radio_map, mover = build_links(scenario, RngTree(scenario.seed))
    assert radio_map is not None and isinstance(mover, RandomWaypointMover)
    up, down = links.uplink.fading, links.downlink.fading
    assert isinstance(up, FadingProcess) and isinstance(down, FadingProcess) and up is not down
    assert up.gain(3, 0.2) == up.gain(3, 0.4) != down.gain(3, 0.2)


def test_mobility_csv_without_a_radio_is_refused_in_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "simfl", "validate", "quickstart", "--set",
                           "run.mobility_csv=true"], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "run.mobility_csv" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_a_fading_kind_without_an_implementation_is_refused():
    with registered_for_now("fading"):
        class Unbuilt(Fading):
            kind = "unbuilt"

        with pytest.raises(ConfigError, match="network.radio.fading.kind"):
            build_fading(Unbuilt(), "uplink", RngTree(0), 3)


def test_mobility_csv_is_written_only_when_asked(tmp_path):
    from simfl.experiment import run_scenario

    overrides = RADIO + ("run.timing_only=true", "run.rounds=3")
    for asked in (False, True):
        scenario = apply_overrides(load_scenario("quickstart"), [
            parse_override(o) for o in overrides + (f"run.mobility_csv={str(asked).lower()}",)])
        out = run_scenario(scenario, tmp_path / str(asked)).out_dir
        assert (out / "mobility.csv").exists() == asked
