"""Rounds of placed clients on the shared radio: the loop off the clock against processes.

placed    over the shared radio's links each client has its own airtimes (its mean SNR
          from placement, path loss, shadowing and power control, times its fading
          gain). Where the MAC claims it (``placed_engines``) and no attempt can be lost,
          those rounds run off the clock (:mod:`simfl.sim.rounds.placed`) and write the
          same tables, byte for byte, as on processes: for each MAC that claims it, with
          no fading, block fading, fading per attempt and Gauss-Markov fading, a
          log-distance path loss with shadowing and a TR 38.901 one, several seeds, and
          deadlines that some clients miss. Settings that make attempts fail (an SINR
          threshold, clients that power control silences) keep the processes.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

import simfl
from simfl.core.config import apply_overrides, parse_override
from simfl.core.config.mac import OFF_CLOCK, PROCESS, Mac
from simfl.experiment import build as build_module
from simfl.sim.radio.link import RadioLink

from . import test_engine_contracts
from .test_engine_contracts import run_on

TABLES = ("rounds.csv", "clients.csv", "events.csv", "mac.csv", "evals.csv")

FADINGS = {
    "none": '{"kind": "none"}',
    "block": '{"kind": "rayleigh", "coherence_s": 0.5}',
    "per_attempt": '{"kind": "rician", "k_factor": 3.0}',
    "doppler": '{"kind": "rayleigh", "doppler_hz": 5.0}',
}
PATH_LOSSES = {
    "shadowed": '"shadowing_db": 8.0',
    "uma": '"path_loss": {"kind": "uma"}',
}
#: the MAC kinds whose placed rounds run off the clock
PLACED_MACS = [entry.name for entry in Mac._registry
               if OFF_CLOCK in entry.obj.capabilities.placed_engines]


@pytest.fixture(autouse=True)
def every_table(monkeypatch):
    """The runs compared keep evals.csv too."""
    monkeypatch.setattr(test_engine_contracts, "TABLES", TABLES)


def placed(mac: str, fading: str, path_loss: str, seed: int, deadline_s: float,
           extra: tuple[str, ...] = ()) -> simfl.Scenario:
    """30 timing-only clients in a 300 m disc, 10 invited per round, over the radio."""
    cfg = simfl.Scenario(
        name="placed", seed=seed,
        task=simfl.Task(dataset=simfl.Synthetic(), partition=simfl.Iid(), n_clients=30),
        population=simfl.Population(compute=simfl.Compute(median_samples_per_s=60.0, sigma=0.6)),
        network=simfl.Network(arq_max_attempts=2, model_bytes=200_000),
        server=simfl.Server(clients_per_round=10, deadline_s=deadline_s),
        run=simfl.Run(rounds=5, timing_only=True, events=True))
    return apply_overrides(cfg, [parse_override(s) for s in (
        'population.placement={"kind": "disc", "radius_m": 300.0}',
        f'network.radio={{{PATH_LOSSES[path_loss]}, "fading": {FADINGS[fading]}}}',
        f'network.mac.kind={mac}', *extra)])


def rounds_of(tables: dict[str, bytes]) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(tables["rounds.csv"].decode())))


@pytest.mark.parametrize("path_loss", sorted(PATH_LOSSES))
@pytest.mark.parametrize("fading", sorted(FADINGS))
@pytest.mark.parametrize("mac", PLACED_MACS)
def test_placed_rounds_off_the_clock_write_the_tables_of_processes(monkeypatch, mac, fading,
                                                                     path_loss):
    straddled = 0
    for seed, deadline_s in ((1, 3.5), (7, 8.0), (11, 60.0)):
        cfg = placed(mac, fading, path_loss, seed, deadline_s)
        reference, claimed, ran = run_on(monkeypatch, cfg, frozenset({PROCESS}))
        assert ran == {PROCESS} and OFF_CLOCK in claimed
        tables, _, ran = run_on(monkeypatch, cfg, frozenset({PROCESS, OFF_CLOCK}))
        assert ran == {OFF_CLOCK}
        for name in TABLES:
            assert tables.get(name) == reference.get(name), (
                f"{mac}, {fading} fading, {path_loss}, seed {seed}: {name} differs")
        received = [int(row["n_received"]) for row in rounds_of(tables)]
        straddled += sum(0 < r < 10 for r in received)
    assert straddled > 0, "some rounds have clients on both sides of the deadline"


#: energy settings whose powers differ by client or attempt, and the MAC's modes
VARIANTS = {
    "per_bit": ('population.energy={"tx_j_per_bit": 2e-7, "rx_j_per_bit": 5e-8}',),
    "amplifier": ('population.energy.amplifier={"circuit_w": 0.2, "efficiency": 0.25}',
                  'network.radio.power_control={"kind": "inversion", "target_snr_db": 15.0}'),
    "idle": ('population.energy.idle_w=0.3',),
    "moving": ('population.mobility={"kind": "constant_velocity", "speed_mps": 20.0, '
               '"radius_m": 300.0}',),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("mac", [*PLACED_MACS, "tdma_shared", "ofdma_private"])
def test_placed_energy_and_mac_modes_off_the_clock(monkeypatch, mac, variant):
    """Powers that differ by client or attempt, clients that move between rounds, TDMA's
    shared mode and OFDMA's private downlink."""
    extra = VARIANTS[variant]
    if mac == "tdma_shared":
        mac, extra = "tdma", (*extra, "network.mac.mode=shared")
    if mac == "ofdma_private":
        mac, extra = "ofdma", (*extra, "network.mac.downlink=private")
    for seed, deadline_s in ((2, 8.0), (5, 60.0)):
        cfg = placed(mac, "block", "uma", seed, deadline_s, extra)
        reference, claimed, _ = run_on(monkeypatch, cfg, frozenset({PROCESS}))
        assert OFF_CLOCK in claimed
        tables, _, ran = run_on(monkeypatch, cfg, frozenset({PROCESS, OFF_CLOCK}))
        assert ran == {OFF_CLOCK}
        for name in TABLES:
            assert tables.get(name) == reference.get(name), (
                f"{mac} {extra}, seed {seed}: {name} differs")


@pytest.mark.parametrize("setting", [
    "network.sinr_threshold_db=5.0",
    'network.mac={"kind": "ofdma", "scheduler": "proportional_fair"}',
    'network.mac={"kind": "slotted_aloha", "access_prob": 0.2, "slot_s": 0.02}',
    'network.radio.power_control={"kind": "truncated_inversion", "target_snr_db": 20.0}',
    'network.mac={"kind": "ofdma", "resource_blocks": 10, "selectivity": "rayleigh"}',
    'network.radio.link={"kind": "nr"}',
])
def test_settings_that_change_the_outcome_keep_the_clock(monkeypatch, setting):
    """An SINR threshold (outage, retries), a silenced client, a scheduler other than
    the equal split, contention with capture, a band scheduled per TTI, NR blocks lost
    with their BLER: no loop off the clock."""
    cfg = placed("ideal", "block", "shadowed", 3, 4.0, (setting,))
    reference, claimed, ran = run_on(monkeypatch, cfg, frozenset({PROCESS}))
    if "power_control" in setting:  # some client is silenced at this seed and target
        silenced = _silenced(cfg)
        assert silenced > 0
    assert OFF_CLOCK not in claimed and ran == {PROCESS}


def _silenced(cfg: simfl.Scenario) -> int:
    from simfl.core.rng import RngTree

    _, radio_map, _ = build_module.build_links(cfg, RngTree(cfg.seed))
    assert radio_map is not None
    return int(np.isneginf(radio_map.tx_power_dbm).sum())


def test_airtimes_for_a_cohort_are_those_of_single_attempts():
    """RadioLink.airtimes_s gives, client by client, the airtime of transmit."""
    from simfl.core.rng import RngTree

    for fading in ("none", "block"):
        cfg = placed("ideal", fading, "uma", 5, 4.0)
        links, _, _ = build_module.build_links(cfg, RngTree(cfg.seed))
        twin, _, _ = build_module.build_links(cfg, RngTree(cfg.seed))
        clients = np.arange(30)
        for link, single in zip(links, twin):
            assert isinstance(link, RadioLink)
            many = link.airtimes_s(clients, 12_345, 0.7)
            one = [single.transmit(0.7, 12_345, None, client=c).airtime_s for c in range(30)]
            assert many == one and len(set(many)) == 30


@pytest.mark.parametrize("mac", ["ideal", "ofdma"])
def test_a_trained_placed_run_off_the_clock_writes_the_evaluations_of_processes(monkeypatch,
                                                                                 mac):
    """The model side follows the same arrivals: evals.csv (and the rest) byte for byte."""
    cfg = placed(mac, "block", "uma", 4, 8.0)
    cfg = apply_overrides(cfg, [parse_override(s) for s in (
        "run.timing_only=false", "run.rounds=3", "run.eval_every_rounds=1")])
    reference, _, ran = run_on(monkeypatch, cfg, frozenset({PROCESS}))
    tables, _, ran = run_on(monkeypatch, cfg, frozenset({PROCESS, OFF_CLOCK}))
    assert ran == {OFF_CLOCK} and "evals.csv" in tables
    assert len(tables["evals.csv"].splitlines()) > 2
    for name in TABLES:
        assert tables.get(name) == reference.get(name), f"{mac}: {name} differs"
