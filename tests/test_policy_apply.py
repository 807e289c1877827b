"""How a round runs a policy's decisions (resource blocks), and where policies are refused."""

import numpy as np
import pytest

from band_helpers import band_sim, everyone
from simfl.cli import main
from simfl.core.config import OfdmaMac, load_scenario
from simfl.core.config.scenario import apply_overrides
from simfl.core.errors import ConfigError
from simfl.core.round_policy import Allocation
from simfl.sim.rounds.resources import RoundResources


class Fixed:
    def __init__(self, allocation):
        self.allocation = allocation

    def decide(self, state):
        return self.allocation


def test_whole_blocks_replace_round_robin_for_the_round():
    # 4 blocks, 10 Mb uploads on a 10 Mb/s band: 3 blocks = 7.5 Mb/s (1.333 s) and
    # 1 block = 2.5 Mb/s (4 s); the blocks stay fixed when client 0 is done
    sim = band_sim([0.0, 0.0], OfdmaMac(scheduler="round_robin", resource_blocks=4))
    sim.resources = RoundResources(Fixed(Allocation([0, 1], resource_blocks={0: 3, 1: 1})),
                                   sim.devices, 2)
    got = {a.client: a.t_s for a in sim.run_round(0, everyone).received}
    assert got == pytest.approx({0: 10 / 7.5, 1: 4.0}, rel=1e-12)


@pytest.mark.parametrize("mac, blocks, allowed", [
    (OfdmaMac(), {0: 1}, "with a continuous band"),
    (OfdmaMac(resource_blocks=4), {0: 1.5}, "a whole number of blocks in [0, 4]"),
    (OfdmaMac(resource_blocks=4), {0: 3, 1: 2}, "summing to at most 1"),
])
def test_blocks_the_band_does_not_have_are_refused(mac, blocks, allowed):
    sim = band_sim([0.0, 0.0], mac)
    sim.resources = RoundResources(Fixed(Allocation([0, 1], resource_blocks=blocks)),
                                   sim.devices, 2)
    with pytest.raises(ConfigError, match="server.policy") as err:
        sim.run_round(0, everyone)
    assert allowed in str(err.value)


@pytest.mark.parametrize("setting, field", [
    ("server.mode=async", "server.policy.kind"),
    ("network.mac.kind=tdma", "server.policy.kind"),
])
def test_policies_are_refused_where_they_cannot_decide(setting, field):
    policy = "min_energy" if "mac" in setting else "fedcs"
    with pytest.raises(ConfigError) as err:
        apply_overrides(load_scenario("quickstart"), [("server.policy", policy),
                                                       tuple(setting.split("="))])
    assert err.value.field == field


def test_validate_names_the_missing_band_in_one_line(capsys):
    assert main(["validate", "quickstart", "--set", "server.policy=min_energy"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "network.mac.kind = ofdma" in err


def test_no_policy_builds_nothing_and_a_policy_sees_the_radio_and_clock():
    from simfl.experiment.build import build_context, build_online, build_simulation

    base = load_scenario("cell_edge")
    assert build_simulation(build_context(base), None).resources is None
    scenario = apply_overrides(base, [("server.policy", "min_energy"),
                                      ("population.compute.median_samples_per_s", None),
                                      ("population.compute.cpu_hz", 1e9)])
    ctx = build_context(scenario)
    sim = build_simulation(ctx, build_online(ctx))
    state = sim.resources.state(0, 0.0, 10.0, np.arange(3))
    assert state.radio.max_tx_power_dbm.tolist() == [23.0] * 3
    assert state.radio.mean_snr_db == pytest.approx(sim.radio_map.mean_snr_db(np.arange(3)))
    # each client's own clock: its speed times the cycles per sample
    assert state.dvfs.max_cpu_hz == pytest.approx(sim.devices.samples_per_s[:3] * 1e4)
    assert state.compute_s == pytest.approx(state.dvfs.cycles / state.dvfs.max_cpu_hz)
