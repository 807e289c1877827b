"""Uplink inter-cell interference in the shared band (``network.mac.interference``)."""

import csv
import dataclasses
import math

import numpy as np
import pytest

from band_helpers import MODEL_BYTES, arrivals, band_sim, everyone, radio_map
from simfl import apply_overrides, run
from simfl.cli import main as cli_main
from simfl.core.config import OfdmaMac, parse_override
from simfl.sim.radio.capture import Air

S_BITS = 8 * MODEL_BYTES  # 10 Mb

# Two cells, one client each, 1 MHz band, noise N = 1e-12 W (N0 = 1e-18 W/Hz), both
# clients transmitting at 0 dBm. Powers received (W):
#                  at AP 0     at AP 1
#   client 0       3e-12       1e-12
#   client 1       2e-12       6e-12
CROSS_DB = {(0, 1): -90.0, (1, 0): 10.0 * math.log10(2e-9)}  # (client, other ap): dB


def two_cells(interference):
    """Client 0 served by AP 0, client 1 by AP 1, with the cross gains of CROSS_DB."""
    radio = radio_map([3e-12, 6e-12], ap=[0, 1], ap_xy_m=((0.0, 0.0), (500.0, 0.0)))

    def toward(ap, x_m, y_m, clients):
        return np.array([CROSS_DB.get((int(c), ap), np.nan) for c in clients])

    radio = dataclasses.replace(radio, gains_toward=toward)
    return OfdmaMac(interference=interference), Air(radio_map=radio)


def test_two_cells_both_uploading_hear_each_other():
    """Both start at t = 0 and each holds its cell's whole band (B = 1 MHz).

    Client 0 at AP 0: S = 3e-12, I = 2e-12 (client 1), SINR = 3 / (1 + 2) = 1, so
    R0 = B log2(2) = 1 Mb/s. Client 1 at AP 1: S = 6e-12, I = 1e-12, SINR = 6 / 2 = 3,
    R1 = B log2(4) = 2 Mb/s. Client 1 finishes its 10 Mb at 10 / 2 = 5 s; by then client
    0 has sent 5 Mb. Alone, client 0's SNR is 3: R0 = 2 Mb/s, its last 5 Mb take 2.5 s:
    it finishes at 7.5 s.
    Without interference: client 0 at log2(4) = 2 Mb/s finishes at 5 s, client 1 at
    log2(7) Mb/s at 10 / log2(7) = 3.5621 s.
    """
    mac, air = two_cells("average")
    got = arrivals(band_sim([0.0, 0.0], mac, air=air).run_round(0, everyone))
    assert got[1] == pytest.approx(5.0, abs=1e-9)
    assert got[0] == pytest.approx(7.5, abs=1e-9)
    mac, air = two_cells("none")
    got = arrivals(band_sim([0.0, 0.0], mac, air=air).run_round(0, everyone))
    assert got[0] == pytest.approx(5.0, abs=1e-9)
    assert got[1] == pytest.approx(S_BITS / 1e6 / math.log2(7.0), abs=1e-9)


def test_an_upload_alone_in_the_air_is_unaffected():
    # client 1 starts after client 0 is done: each one has the band to itself, unheard
    mac, air = two_cells("average")
    got = arrivals(band_sim([0.0, 20.0], mac, air=air).run_round(0, everyone))
    assert got[0] == pytest.approx(S_BITS / 2e6, abs=1e-9)  # SNR 3: 2 Mb/s
    assert got[1] == pytest.approx(20.0 + S_BITS / 1e6 / math.log2(7.0), abs=1e-9)


def test_uploads_of_the_same_cell_do_not_interfere_with_each_other():
    # both in cell 0: the equal split of today, interference or not
    radio = radio_map([3e-12, 3e-12], ap=[0, 0], ap_xy_m=((0.0, 0.0), (500.0, 0.0)))
    radio = dataclasses.replace(radio, gains_toward=lambda ap, x, y, c: np.full(c.size, -80.0))
    times = [arrivals(band_sim([0.0, 0.0], OfdmaMac(interference=kind),
                               air=Air(radio_map=radio)).run_round(0, everyone))
             for kind in ("none", "average")]
    assert times[0] == times[1]


def hexagonal(tmp_path, name, *pairs):
    base = [parse_override(p) for p in (
        "run.timing_only=true", "run.rounds=2", "network.model_bytes=20000000",
        "server.deadline_s=1000", "task.n_clients=14",
        "server.clients_per_round=14", 'population.placement={"kind": "hexagonal"}',
        'network.cells={"hexagonal": {"rings": 1, "isd_m": 200}}',
        'network.radio={"bandwidth_hz": 10e6}', "network.uplink=ideal", "network.mac=ofdma",
        *pairs)]
    from simfl.core.config import load_scenario
    scenario = apply_overrides(load_scenario("quickstart"), base)
    return run(scenario, tmp_path / name).out_dir


def energies_j(folder):
    """Each round's energy: the radio transmits while an upload holds a share."""
    with open(folder / "rounds.csv") as handle:
        return [float(row["energy_j"]) for row in csv.DictReader(handle)]


def test_none_is_byte_identical_and_average_slows_a_hexagonal_layout(tmp_path):
    default = hexagonal(tmp_path, "default")
    none = hexagonal(tmp_path, "none", "network.mac.interference=none")
    heard = hexagonal(tmp_path, "average", "network.mac.interference=average")
    assert (default / "rounds.csv").read_bytes() == (none / "rounds.csv").read_bytes()
    # the 20 MB uploads overlap across the 7 cells: interference makes them hold the band
    # (and transmit) longer
    quiet, loud = energies_j(default), energies_j(heard)
    assert len(quiet) == len(loud) == 2
    assert all(b > a * 1.01 for a, b in zip(quiet, loud))


def test_a_bad_value_is_one_line(capsys):
    code = cli_main(["validate", "quickstart", "--set", "network.mac.kind=ofdma",
                     "--set", "network.mac.interference=loud"])
    err = capsys.readouterr().err
    assert code == 2 and "interference" in err and "loud" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_interference_needs_a_radio(capsys):
    code = cli_main(["validate", "quickstart", "--set", "network.mac.kind=ofdma",
                     "--set", "network.mac.interference=average"])
    err = capsys.readouterr().err
    assert code == 2 and "network.radio" in err and len(err.strip().splitlines()) == 1


def test_reuse_3_gives_each_sector_a_third_and_only_its_own_third_interferes():
    """APs 0, 1, 2: the three sectors of a site; AP 3: sector 0 of the next site. A 3 MHz
    band with noise 3e-12 W (N0 = 1e-18 W/Hz): each cell has 1 MHz. Clients 0 (AP 0) and
    1 (AP 3) share the third 0 and hear each other as in the two-cell case: SINR 1 and 3
    on 1 MHz, done at 7.5 s and 5 s. Client 2 (AP 1, SNR 3 on its third) is received at
    1e-9 W by APs 0 and 3 and hears them as loudly, yet its third is its own: 2 Mb/s,
    done at 5 s.
    """
    radio = radio_map([3e-12, 6e-12, 3e-12], ap=[0, 3, 1], noise_w=3e-12, bandwidth_hz=3e6,
                      ap_xy_m=((0.0, 0.0),) * 3 + ((500.0, 0.0),))
    cross = {**CROSS_DB, (0, 3): -90.0, (1, 0): CROSS_DB[(1, 0)], (2, 0): -60.0,
             (2, 3): -60.0, (0, 1): -60.0, (1, 1): -60.0}

    def toward(ap, x_m, y_m, clients):
        return np.array([cross.get((int(c), ap), np.nan) for c in clients])

    air = Air(radio_map=dataclasses.replace(radio, gains_toward=toward))
    got = arrivals(band_sim([0.0] * 3, OfdmaMac(interference="average", reuse=3),
                            air=air).run_round(0, everyone))
    assert got[0] == pytest.approx(7.5, abs=1e-9)
    assert got[1] == pytest.approx(5.0, abs=1e-9)
    assert got[2] == pytest.approx(5.0, abs=1e-9)


def test_reuse_3_needs_three_sectors(capsys):
    code = cli_main(["validate", "quickstart", "--set", "network.mac.kind=ofdma",
                     "--set", "network.mac.reuse=3"])
    err = capsys.readouterr().err
    assert code == 2 and "reuse" in err and "sectors" in err and len(err.strip().splitlines()) == 1
