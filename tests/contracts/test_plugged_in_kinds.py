"""Kinds plugged in from outside simfl go through the same contract suites as the
built-ins: the toy MAC of ``scenarios/own_mac.py`` (p-persistent slotted ALOHA, a MAC
written as a script) and an OFDMA scheduler registered here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from simfl.core.config import load_scenario
from simfl.core.registry import REGISTRIES

from .kinds import config_of, kinds, registered_for_now
from .test_network_contracts import MAC_CASES, mac_contract, mac_round

ROOT = Path(__file__).resolve().parents[2]
OWN_MAC = ROOT / "scenarios" / "own_mac.py"


def test_the_script_mac_joins_the_registry_and_passes_the_mac_contract():
    with registered_for_now("macs"):
        scenario = load_scenario(str(OWN_MAC))
        assert scenario.network.mac.kind == "persistent_aloha"
        assert "persistent_aloha" in kinds("macs")
        assert REGISTRIES["macs"].get("persistent_aloha")().p == 0.5
        mac_contract(config_of("macs", "persistent_aloha", MAC_CASES))
    assert "persistent_aloha" not in kinds("macs")


@pytest.mark.parametrize("max_collisions", [0, 3])
def test_the_script_mac_backs_off_as_written(max_collisions):
    """Six contenders that always send (p = p_min = 1) collide in every slot: each gives
    up after max_collisions + 1 collisions, at the end of that slot (10 ms slots from
    t = 0; the round opens at t = 1 s)."""
    with registered_for_now("macs"):
        load_scenario(str(OWN_MAC))
        always = REGISTRIES["macs"].get("persistent_aloha")(
            p=1.0, p_min=1.0, max_collisions=max_collisions)
        seen, waiting = mac_round(always)
    assert waiting == []
    assert [(c, ok) for c, _, ok, *_ in seen] == [(c, False) for c in range(6)]
    assert [t for _, t, *_ in seen] == pytest.approx([1.0 + 0.01 * (max_collisions + 1)] * 6)


def test_a_plugin_mac_is_a_case_of_the_installed_contract_suite(tmp_path):
    """Installed as a plug-in package (an entry point), the script's MAC is one more
    parameter of the registry-driven MAC contract, run by pytest as the built-ins are."""
    (tmp_path / "own_mac_plugin.py").write_text(OWN_MAC.read_text())
    info = tmp_path / "own_mac_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: own_mac_plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[simfl.plugins]\nown_mac = own_mac_plugin\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA",
         str(ROOT / "tests" / "contracts" / "test_network_contracts.py"), "-k", "mac_contract"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "PASSED tests/contracts/test_network_contracts.py::test_mac_contract[persistent_aloha]" \
        in done.stdout, done.stdout[-2000:]
