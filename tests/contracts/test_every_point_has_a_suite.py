"""Every extension point has a contract suite that reads its kinds from the registry, so a
kind added to any registry (built in, plug-in or scenario script) is checked on arrival."""

from pathlib import Path

import pytest

from simfl.core.registry import REGISTRIES

import simfl.sim  # noqa: F401  (the scripted kinds are part of every registry they join)

TESTS = Path(__file__).resolve().parents[1]
#: each registry, the file whose suite covers it and the marker of the registry-driven loop
SUITES = {
    "aggregators": ("test_aggregators_conformance.py", 'REGISTRIES["aggregators"]'),
    "samplers": ("test_samplers.py", 'REGISTRIES["samplers"]'),
    "channels": ("contracts/test_network_contracts.py", 'kinds("channels")'),
    "rates": ("contracts/test_network_contracts.py", 'kinds("rates")'),
    "macs": ("contracts/test_network_contracts.py", 'kinds("macs")'),
    "availability": ("contracts/test_availability_contracts.py", 'kinds("availability")'),
    "datasets": ("contracts/test_training_contracts.py", 'kinds("datasets")'),
    "partitions": ("contracts/test_training_contracts.py", 'kinds("partitions")'),
    "models": ("contracts/test_training_contracts.py", 'kinds("models")'),
    "local_rules": ("contracts/test_training_contracts.py", 'kinds("local_rules")'),
    "lr_schedules": ("contracts/test_training_contracts.py", 'kinds("lr_schedules")'),
    "initialisers": ("contracts/test_training_contracts.py", 'kinds("initialisers")'),
    "server_modes": ("test_async.py", 'REGISTRIES["server_modes"]'),
    "placements": ("contracts/test_radio_contracts.py", 'kinds("placements")'),
    "path_loss": ("contracts/test_radio_contracts.py", 'kinds("path_loss")'),
    "power_control": ("contracts/test_radio_contracts.py", 'kinds("power_control")'),
    "radio_links": ("contracts/test_radio_contracts.py", 'kinds("radio_links")'),
    "fading": ("contracts/test_radio_memory_contracts.py", 'kinds("fading")'),
    "mobility": ("contracts/test_radio_memory_contracts.py", 'kinds("mobility")'),
    "server_optimizers": ("contracts/test_server_optimizer_contracts.py",
                          'kinds("server_optimizers")'),
    "local_optimizers": ("contracts/test_local_optimizer_contracts.py",
                         'kinds("local_optimizers")'),
    "step_schedules": ("contracts/test_local_optimizer_contracts.py", 'kinds("step_schedules")'),
    "compressions": ("contracts/test_compression_contracts.py", 'kinds("compressions")'),
    "schedulers": ("contracts/test_scheduler_contracts.py", 'kinds("schedulers")'),
    "policies": ("contracts/test_policy_contracts.py", 'kinds("policies")'),
}


def test_every_registry_has_a_contract_suite():
    assert set(REGISTRIES) <= set(SUITES), (
        f"no contract suite for {sorted(set(REGISTRIES) - set(SUITES))}: add one")


@pytest.mark.parametrize("point", sorted(SUITES))
def test_each_suite_reads_its_kinds_from_the_registry(point):
    path, marker = SUITES[point]
    assert marker in (TESTS / path).read_text(), f"{path} does not loop over {point}"
