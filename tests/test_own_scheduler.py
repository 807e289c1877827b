"""scenarios/own_scheduler.py: a scheduler and a policy plugged in by a script, and the
one-line errors for decisions the simulation cannot run."""

import csv
import math
import textwrap

import numpy as np
import pytest

from band_helpers import band_sim, everyone, with_radio
from simfl.cli import main
from simfl.core.config import OfdmaMac, load_scenario
from simfl.core.errors import ConfigError
from simfl.core.registry import registry
from simfl.core.round_policy import Allocation
from simfl.sim.rounds.resources import RoundResources


def test_the_script_runs_its_own_scheduler_and_policy(tmp_path):
    out = tmp_path / "run"
    assert main(["run", "own_scheduler", "--timing-only", "--quiet", "--out", str(out),
                 "--set", "run.rounds=4", "--set", "run.events=true"]) == 0
    rows = list(csv.DictReader(open(out / "rounds.csv")))
    assert [int(r["n_selected"]) for r in rows] == [8] * 4
    invited: dict[int, set[int]] = {}
    for e in csv.DictReader(open(out / "events.csv")):
        if e["kind"] == "invited":
            invited.setdefault(int(e["round"]), set()).add(int(e["client"]))
    for r in range(1, 4):  # nobody who took part in a round is invited to the next
        took_part = {int(e) for e in invited[r - 1]}
        assert not invited[r] & took_part
    assert "equal_time" in registry("schedulers")
    assert next(e for e in registry("policies") if e.name == "strongest_fresh").plugin


def test_equal_time_gives_the_weak_upload_the_larger_share():
    load_scenario("own_scheduler")  # registers equal_time
    a_hz = np.array([1e6, 15e6])  # full-band rates 1e6 log2(2) = 1 and 1e6 log2(16) = 4 Mb/s
    sim = band_sim([0.0, 0.0], OfdmaMac(scheduler="equal_time"), air=with_radio(a_hz * 1e-18))
    got = {a.client: a.t_s for a in sim.run_round(0, everyone).received}
    # shares 1/R: 4/5 and 1/5 of 1 MHz; rates b log2(1 + a/b): client 1 at
    # 0.2e6 log2(1 + 15/0.2) = 0.2e6 log2(76) ends its 10 Mb first (8.0027 s); client 0 sent
    # 0.8e6 log2(1 + 1/0.8) = 0.8e6 log2(2.25) b/s until then, the rest alone at 1 Mb/s
    t1 = 10e6 / (0.2e6 * math.log2(76.0))
    assert got[1] == pytest.approx(t1, rel=1e-9)
    assert got[0] == pytest.approx(t1 + (10e6 - t1 * 0.8e6 * math.log2(2.25)) / 1e6, rel=1e-9)


def test_a_scheduler_that_overbooks_the_band_is_one_clear_error(tmp_path):
    script = tmp_path / "greedy.py"
    script.write_text(textwrap.dedent('''
        from dataclasses import dataclass
        import numpy as np
        import simfl

        @dataclass(frozen=True)
        class Everything(simfl.Scheduler):
            """The whole band to every upload."""
            kind = "everything"

        @simfl.register(Everything)
        class Split(simfl.BandSplit):
            def fractions(self, clients, link_bps):
                return np.ones(clients.size)

        def scenario():
            import simfl
            return simfl.load_scenario("quickstart")
    '''))
    load_scenario(str(script))
    sim = band_sim([0.0, 0.0], OfdmaMac(scheduler="everything"))
    with pytest.raises(ConfigError, match="summing to at most 1"):
        sim.run_round(0, everyone)


class Fixed:
    def __init__(self, allocation):
        self.allocation = allocation

    def decide(self, state):
        return self.allocation


@pytest.mark.parametrize("allocation, field, allowed", [
    (Allocation([0, 1], share={0: 0.7, 1: 0.6}), "share", "summing to at most 1"),
    (Allocation([0, 7]), "selected", "candidates of round 0"),
    (Allocation([0], share={0: 0.5}, tx_power_dbm={0: 3.0}), "tx_power_dbm[0]", "at most 0 dBm"),
    (Allocation([0], cpu_hz={0: 1e9}), "cpu_hz", "population.compute.cpu_hz"),
    (Allocation([0, 1], share={0: 0.5}), "share[1]", "a share for every selected client"),
])
def test_decisions_the_round_cannot_run_are_one_line(allocation, field, allowed):
    air = with_radio(np.array([1e-12, 1e-12]))
    sim = band_sim([0.0, 0.0], OfdmaMac(), air=air)
    sim.resources = RoundResources(Fixed(allocation), sim.devices, 2, radio_map=air.radio_map,
                                   max_tx_power_dbm=np.zeros(2))
    with pytest.raises(ConfigError) as err:
        sim.run_round(0, everyone)
    assert err.value.field == f"server.policy: {field}" and allowed in str(err.value)
    assert "\n" not in str(err.value)


def test_shares_under_a_mac_without_a_band_fail_at_run_time_with_exit_2(tmp_path, capsys):
    script = tmp_path / "shares.py"
    script.write_text(textwrap.dedent('''
        from dataclasses import dataclass
        import simfl
        from simfl.core.config.policy import Policy
        from simfl.core.registry import implements
        from simfl.core.round_policy import Allocation

        @dataclass(frozen=True)
        class HalfEach(Policy):
            """Half the band to every candidate."""
            kind = "half_each"

        @implements(HalfEach)
        class Half:
            def __init__(self, cfg):
                pass
            def decide(self, state):
                return Allocation(state.clients.tolist(),
                                  share={int(c): 0.5 for c in state.clients})

        def scenario():
            from simfl.core.config.scenario import apply_overrides
            return apply_overrides(simfl.load_scenario("quickstart"),
                                   [("server.policy", {"kind": "half_each"}), ("run.rounds", 2)])
    '''))
    code = main(["run", str(script), "--timing-only", "--quiet", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "server.policy: share" in err and "network.mac.kind = ofdma" in err
