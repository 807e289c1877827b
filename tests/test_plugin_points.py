"""simfl.register reaches every network-side extension point: one run whose placement,
path loss, power control, fading, mobility, uplink channel, availability, partition,
MAC and OFDMA scheduler are all plug-ins (each delegating to a built-in kind and
counting its calls) uses every one of them, and gives the tables of those built-ins."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, fields, replace

import pytest

import simfl
from simfl.core import registry as registry_module
from simfl.core.registry import REGISTRIES, implementation_of
from simfl.train.partition import Splitter

CALLS: Counter = Counter()

#: each point's base, the built-in kind a plug-in of it delegates to, and the scenario
#: field it is set at
BUILT_IN = {
    "placements": (simfl.Placement, simfl.GridPlacement(spacing_m=40.0)),
    "path_loss": (simfl.PathLoss, simfl.LogDistance()),
    "power_control": (simfl.PowerControl, simfl.ChannelInversion()),
    "fading": (simfl.Fading, simfl.RayleighFading(coherence_s=0.5)),
    "mobility": (simfl.Mobility, simfl.ConstantVelocity()),
    "channels": (simfl.Channel, simfl.ErasureChannel(p=0.2, rate=simfl.FixedRate(rate_bps=1e6))),  # quickstart's
    "availability": (simfl.Availability, simfl.Bernoulli(p=0.8)),
    "partitions": (simfl.Partition, simfl.Shards()),
    "macs": (simfl.Mac, simfl.OfdmaMac(scheduler="proportional_fair")),
}


@pytest.fixture
def forget_kinds(monkeypatch):
    for point in (*BUILT_IN, "schedulers"):
        monkeypatch.setattr(REGISTRIES[point], "_entries", dict(REGISTRIES[point]._entries))
    monkeypatch.setattr(registry_module, "_IMPLEMENTATIONS",
                        dict(registry_module._IMPLEMENTATIONS))
    monkeypatch.setattr(registry_module, "_PLUGGED", set())
    CALLS.clear()


def plugged(point: str):
    """A kind of ``point`` whose config copies the built-in's fields and whose
    implementation counts a call and builds the built-in's."""
    base, built_in = BUILT_IN[point]
    config = dataclass(frozen=True)(type(f"Counted_{point}", (type(built_in),), {
        "kind": f"counted_{point}", "__doc__": f"Counts its calls ({point})."}))

    def implementation(cfg, *args):
        CALLS[point] += 1
        twin = type(built_in)(**{f.name: getattr(cfg, f.name) for f in fields(cfg)})
        found = implementation_of(twin)
        return (found.split if isinstance(found, Splitter) else found)(twin, *args)

    # a partition given as a plain function is its split (it then has no size model)
    simfl.register(config, implementation)
    assert config.__mro__[1] is type(built_in) and issubclass(config, base)
    return config(**{f.name: getattr(built_in, f.name) for f in fields(built_in)})


def scenario(kinds: dict) -> simfl.Scenario:
    """cell_edge's shape, small and timing-only, with ``kinds`` at every point (the
    uplink's channel only in a run without the radio: with one, its kind must be ideal)."""
    radio = simfl.Radio(shadowing_db=8.0, bandwidth_hz=1e6, path_loss=kinds["path_loss"],
                        power_control=kinds["power_control"], fading=kinds["fading"])
    return simfl.Scenario(
        name="points", seed=4,
        task=simfl.Task(dataset=simfl.Digits(), partition=kinds["partitions"], n_clients=16),
        population=simfl.Population(placement=kinds["placements"], mobility=kinds["mobility"],
                                    availability=kinds["availability"]),
        network=simfl.Network(mac=kinds["macs"], radio=radio, cells=simfl.Cells()),
        server=simfl.Server(clients_per_round=6, deadline_s=20.0),
        run=simfl.Run(rounds=3, timing_only=True))


def test_every_network_point_takes_a_plugged_in_kind(forget_kinds, tmp_path):
    built_ins = {point: built_in for point, (_, built_in) in BUILT_IN.items()}
    simfl.run(scenario(built_ins), tmp_path / "built_in")
    lossy = simfl.apply_overrides(simfl.load_scenario("quickstart"), [
        simfl.parse_override(p) for p in ("run.rounds=3", "run.timing_only=true")])
    simfl.run(lossy, tmp_path / "lossy")
    kinds = {point: plugged(point) for point in BUILT_IN}

    @dataclass(frozen=True)
    class CountedScheduler(simfl.Scheduler):
        """Proportional fair, counted."""
        kind = "counted_pf"

    from simfl.sim.mac.band_split import BandSplit

    @simfl.register(CountedScheduler)
    class CountedSplit(BandSplit):
        def __init__(self, cfg, radio, n_clients):
            CALLS["schedulers"] += 1
            super().__init__(replace(cfg, scheduler="proportional_fair"), radio, n_clients)

    kinds["macs"] = replace(kinds["macs"], scheduler="counted_pf")
    simfl.run(scenario(kinds), tmp_path / "plugged")
    simfl.run(replace(lossy, network=replace(lossy.network, uplink=kinds["channels"])),
              tmp_path / "lossy_plugged")
    assert set(CALLS) == {*BUILT_IN, "schedulers"}, CALLS
    for run in ("", "lossy_"):
        for table in ("rounds.csv", "clients.csv"):
            assert (tmp_path / f"{run}plugged" / table).read_bytes() == \
                (tmp_path / (f"{run}built_in" if run == "" else "lossy") / table).read_bytes()
