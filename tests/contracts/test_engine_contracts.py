"""The device-round engines against each other, for every registered MAC and link kind.

engines   a round's device work runs on SimPy processes, as chained callbacks or in one
          loop off the clock (:mod:`simfl.sim.rounds.engines`), on the lightest engine
          that the MAC and both links claim. For every pair of a MAC kind (``macs``)
          and a link kind (``channels``), a short run on each engine the pair claims
          writes the same tables, byte for byte, as the run on processes alone, and the
          engine claimed is the one that ran. (Slotted ALOHA runs here with per-event
          contention: its ``vectorised`` model draws the same distributions in another
          order by design, and is checked against them in tests/test_aloha_cohort.py.)
"""

from __future__ import annotations

import csv
import dataclasses
import io
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

import simfl
from simfl.core.config.mac import (CALLBACKS, OFF_CLOCK, PROCESS, Mac, MacCapabilities,
                                   SlottedAlohaMac)
from simfl.core.config.server_mode import AsyncMode
from simfl.core.errors import ConfigError
from simfl.experiment import run_scenario
from simfl.sim.mac.access import MacBase
from simfl.sim.mac.protocol import LOST_ON_LINK
from simfl.sim.rounds import loops
from simfl.sim.rounds.loops import RoundLoops

from .kinds import config_of, kinds, registered_for_now
from .test_network_contracts import CHANNEL_CASES, MAC_CASES

TABLES = ("rounds.csv", "clients.csv", "events.csv", "mac.csv")
#: the MAC cases of the network contracts, and slotted ALOHA contending event by event
ENGINE_CASES = {**MAC_CASES, "slotted_aloha": lambda: SlottedAlohaMac(
    access_prob=0.2, slot_s=0.02, contention="per_event")}


def scenario(mac: str, channel: str) -> simfl.Scenario:
    """20 timing-only clients, 8 invited per round, both links of kind ``channel``."""
    link = config_of("channels", channel, CHANNEL_CASES)
    return simfl.Scenario(
        name="engines", seed=3,
        task=simfl.Task(dataset=simfl.Synthetic(), partition=simfl.Iid(), n_clients=20),
        population=simfl.Population(
            compute=simfl.Compute(median_samples_per_s=60.0, sigma=0.6),
            availability=simfl.Bernoulli(p=0.9)),
        network=simfl.Network(uplink=link, downlink=link, arq_max_attempts=2,
                              mac=config_of("macs", mac, ENGINE_CASES), model_bytes=20_000),
        server=simfl.Server(clients_per_round=8, deadline_s=4.0),
        run=simfl.Run(rounds=6, timing_only=True, events=True))


def run_on(monkeypatch, cfg: simfl.Scenario, engines: frozenset[str]
           ) -> tuple[dict[str, bytes], set[str], set[str]]:
    """The run's tables with rounds limited to ``engines``; the engines the collaborators
    claimed and those that ran."""
    claimed: set[str] = set()
    ran: set[str] = set()
    claim, choose = loops.claimed_engines, loops.choose_engine

    def claimed_engines(devices):
        found = claim(devices)
        claimed.update(found)
        return found

    def choose_engine(usable, **kwargs):
        engine = choose(usable, **kwargs)
        ran.add(engine)
        return engine

    with monkeypatch.context() as m:
        m.setattr(loops, "claimed_engines", claimed_engines)
        m.setattr(loops, "choose_engine", choose_engine)
        m.setattr(RoundLoops, "engines", engines)
        with tempfile.TemporaryDirectory() as tmp:
            run_scenario(cfg, Path(tmp) / "run")
            tables = {name: (Path(tmp) / "run" / name).read_bytes()
                      for name in TABLES if (Path(tmp) / "run" / name).exists()}
    return tables, claimed, ran


@pytest.mark.parametrize("channel", kinds("channels"))
@pytest.mark.parametrize("mac", kinds("macs"))
def test_every_engine_a_kind_claims_writes_the_tables_of_processes(monkeypatch, mac, channel):
    cfg = scenario(mac, channel)
    reference, claimed, ran = run_on(monkeypatch, cfg, frozenset({PROCESS}))
    assert ran == {PROCESS}
    assert PROCESS in claimed, "every kind runs on processes"
    for engine in sorted(claimed & {CALLBACKS, OFF_CLOCK}):
        tables, _, ran = run_on(monkeypatch, cfg, frozenset({PROCESS, engine}))
        assert engine in ran, f"{mac} over {channel} claims {engine} but never ran there"
        for name in TABLES:
            assert tables.get(name) == reference.get(name), (
                f"{mac} over {channel}: {name} on {engine} differs from processes")


def test_the_engines_claimed_follow_the_declarations(monkeypatch):
    """The ideal MAC over ideal links claims every engine; over an erasure link it loses
    the loop off the clock (per-client draws); OFDMA claims processes only."""
    _, claimed, _ = run_on(monkeypatch, scenario("ideal", "ideal"), frozenset({PROCESS}))
    assert claimed == {PROCESS, CALLBACKS, OFF_CLOCK}
    _, claimed, _ = run_on(monkeypatch, scenario("ideal", "erasure"), frozenset({PROCESS}))
    assert claimed == {PROCESS, CALLBACKS}
    _, claimed, _ = run_on(monkeypatch, scenario("ofdma", "ideal"), frozenset({PROCESS}))
    assert claimed == {PROCESS}


def test_a_mac_defined_outside_simfl_is_validated_and_run_by_what_it_declares(monkeypatch):
    """A MAC written beside simfl (config, capabilities, transmit and leave) is refused
    by validation where it claims nothing, and runs on the engines it claims."""
    with registered_for_now("macs"):
        @dataclass(frozen=True)
        class Polite(Mac):
            """Each client waits 10 ms per id before its upload, over its own link."""
            kind = "polite_for_test"
            capabilities = MacCapabilities(engines=frozenset({PROCESS, CALLBACKS}))

        class PoliteAccess(MacBase):
            def transmit(self, client, uplink):
                yield self.env.timeout(0.01 * client)
                if not (yield from uplink.send()):
                    return LOST_ON_LINK
                return None

            def leave(self, client):
                return False

        simfl.register(Polite, PoliteAccess)
        cfg = scenario("polite_for_test", "erasure")
        with pytest.raises(ConfigError, match="ideal or slotted_aloha with server.mode"):
            dataclasses.replace(cfg, server=dataclasses.replace(cfg.server, mode=AsyncMode()))
        reference, claimed, _ = run_on(monkeypatch, cfg, frozenset({PROCESS}))
        assert claimed == {PROCESS, CALLBACKS}
        tables, _, ran = run_on(monkeypatch, cfg, frozenset({PROCESS, CALLBACKS}))
        assert ran == {CALLBACKS} and tables == reference
        rows = list(csv.DictReader(io.StringIO(tables["rounds.csv"].decode())))
        assert len(rows) == 6 and sum(int(row["n_received"]) for row in rows) > 0
