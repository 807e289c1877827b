"""IEEE 802.11 DCF with a carrier-sense range: hidden terminals by hand and in aggregate,
RTS/CTS confining their collisions to the RTS, overhearing only what a station senses,
byte-identical results when the range covers everyone, and the config's errors."""

import filecmp

import numpy as np
import pytest

import simfl
from simfl.cli import main
from simfl.core.config import CsmaCaMac, apply_overrides
from simfl.core.errors import ConfigError
from simfl.sim.mac.csma.carrier_sense import all_in_range
from simfl.sim.mac.csma.dcf import Dcf
from simfl.sim.mac.csma.hidden import HiddenDcf
from simfl.sim.mac.csma.timing import DcfTiming
from scripted_draws import Script

US = 1e-6
# 1000-byte MPDUs at 1 Mbit/s: DATA (header 400 us + 8000 us), SIFS, ACK 240 us, RTS 288 us
DATA, ACK, RTS, DIFS, SIFS, DELAY, SLOT = 8400 * US, 240 * US, 288 * US, 128 * US, 28 * US, \
    1 * US, 50 * US
PAYLOAD_BITS = 8000


def everyone(sender, stations):
    return np.ones(stations.size, dtype=bool)


def nobody(sender, stations):  # two stations out of each other's range
    return np.zeros(stations.size, dtype=bool)


def dcf(senses, rng, radio=None, **changes):
    cfg = CsmaCaMac(**{"phy_rate_bps": 1e6, "mpdu_payload_bytes": 1000, "retry_limit": None,
                       **changes})
    return HiddenDcf(cfg, DcfTiming.of(cfg, 1e6), rng, senses, radio)


def frames(d, n_stations, n_frames, n_mpdus=10 ** 9):
    """Saturate ``n_stations`` and step until ``n_frames`` frames have been decided."""
    for station in range(n_stations):
        d.join(station, 0.0, n_mpdus, PAYLOAD_BITS)
    seen, decided, t = {}, [], 0.0
    while len(decided) < n_frames:
        t, _ = d.step()
        seen.update({(f.station, f.start_s): f for f in d.on_air.values()})
        decided = [f for f in seen.values() if f.end_s <= t]
    return sorted(decided, key=lambda f: (f.start_s, f.station))


def test_a_hidden_station_sends_into_the_frame_it_cannot_sense_by_hand():
    # backoffs 2 and 5 slots from DIFS: station 0 sends at DIFS + 2 slots; station 1 does
    # not sense it, counts on and sends at DIFS + 5 slots, 3 slots into station 0's DATA
    d = dcf(nobody, Script(2, 5, 7, 9))
    first, second = frames(d, 2, 2)[:2]
    assert (first.station, first.start_s) == (0, pytest.approx(DIFS + 2 * SLOT, abs=1e-12))
    assert (second.station, second.start_s) == (1, pytest.approx(DIFS + 5 * SLOT, abs=1e-12))
    assert first.end_s - second.start_s == pytest.approx(DATA - 3 * SLOT, abs=1e-12)
    assert first.lost and second.lost and d.lost_frames == 2
    # each ends its own exchange one delay after its DATA and backs off from there (CW 64)
    while d.next_event_s() is not None and len(d.on_air) > 0:
        d.step()
    assert d.st[0].resume_s == pytest.approx(DIFS + 2 * SLOT + DATA + DELAY + DIFS, abs=1e-12)
    assert (d.st[0].count, d.st[1].count) == (7, 9)


def test_hidden_collisions_count_toward_the_retry_limit():
    # retries at DIFS + 7 and DIFS + 9 slots after each exchange: station 1's lands 12 slots
    # into station 0's second DATA, so both MPDUs collide twice and are dropped
    d = dcf(nobody, Script(2, 5, 7, 9), retry_limit=2)
    d.join(0, 0.0, 3, PAYLOAD_BITS)
    d.join(1, 0.0, 3, PAYLOAD_BITS)
    dropped = []
    while d.next_event_s() is not None:
        dropped += d.step()[1].dropped
    assert dropped == [0, 1] and d.lost_frames == 4 and not d.st


def test_in_range_the_second_station_freezes_by_hand():
    d = dcf(everyone, Script(2, 5, 7))
    first = frames(d, 2, 1)[0]
    assert first.station == 0 and not first.lost
    assert d.st[1].count == 3  # 2 idle slots counted, frozen for the exchange
    assert d.st[1].resume_s == pytest.approx(first.start_s + DATA + SIFS + DELAY + ACK + DELAY
                                             + DIFS, abs=1e-12)


def loss_share(senses, rts_cts, n_frames=1500):
    fs = frames(dcf(senses, np.random.default_rng(5), rts_cts=rts_cts), 2, n_frames)
    return sum(f.lost for f in fs) / len(fs), fs


def test_hidden_terminals_collide_far_more_often_than_stations_in_range():
    hidden, _ = loss_share(nobody, False)
    heard, _ = loss_share(everyone, False)
    # in range: a collision needs equal backoffs (about 1 frame in 20); hidden, a backoff
    # of at most 31 slots ends inside a 168-slot DATA frame unless the other is idle
    assert heard < 0.1 and hidden > 0.4, (heard, hidden)


def test_rts_cts_confines_hidden_collisions_to_the_rts():
    basic, _ = loss_share(nobody, False)
    rts, fs = loss_share(nobody, True)
    assert rts < 0.7 * basic, (rts, basic)  # about 0.30 against 0.60
    starts = np.array([f.start_s for f in fs])
    for f in fs:
        overlapping = starts[(starts > f.start_s - RTS) & (starts < f.start_s + RTS)]
        assert f.lost == (overlapping.size > 1)  # only RTS against RTS collide
        if not f.lost:  # the CTS holds every station off until the ACK is in
            end = f.start_s + RTS + SIFS + DELAY + ACK + SIFS + DELAY + DATA + SIFS + DELAY \
                + ACK + DELAY
            assert not ((starts > f.start_s) & (starts < end)).any()


def test_with_everyone_in_range_the_per_station_model_is_the_shared_dcf():
    for rts_cts in (False, True):
        cfg = CsmaCaMac(phy_rate_bps=1e6, mpdu_payload_bytes=1000, rts_cts=rts_cts)
        shared = Dcf(cfg, DcfTiming.of(cfg, 1e6), np.random.default_rng(3))
        for station in range(6):
            shared.join(station, 0.0, 10 ** 9, PAYLOAD_BITS)
        expected = []
        for _ in range(400):
            busy = shared.start_busy()
            expected += [(busy.t_s, s) for s in busy.stations]
            shared.end_busy()
        fs = frames(dcf(everyone, np.random.default_rng(3), rts_cts=rts_cts), 6, len(expected))
        assert [(f.start_s, f.station) for f in fs][:len(expected)] == expected


def test_a_station_overhears_only_the_frames_it_senses():
    # station 0 sends at once; station 1 (backoff 300 slots) is idle through its DATA when
    # hidden, and receives only the access point's ACK
    def rx_s(senses):
        t = [0.0]
        log = []
        d = dcf(senses, Script(0, 300), radio=lambda s, state: log.append((t[0], s, state)),
                cw_min=512)
        d.join(0, 0.0, 1, PAYLOAD_BITS)
        d.join(1, 0.0, 1, PAYLOAD_BITS)
        while d.st.get(0) is not None:
            t[0] = d.next_event_s()
            d.step()
        mine = [(when, state) for when, s, state in log if s == 1]
        return sum(b - a for (a, state), (b, _) in zip(mine, mine[1:]) if state == "rx")

    exchange = DATA + SIFS + DELAY + ACK + DELAY
    assert rx_s(everyone) == pytest.approx(exchange, abs=1e-12)
    assert rx_s(nobody) == pytest.approx(exchange - DATA, abs=1e-12)


# ---- through a run: placement, range, byte identity, errors

BASE = [("run.timing_only", True), ("run.rounds", 2), ("network.uplink", {"kind": "ideal"}),
        ("population.placement", {"kind": "grid", "spacing_m": 100.0}), ("network.radio", {}),
        ("population.compute", {"median_samples_per_s": 1e9, "sigma": 0.0}),
        ("population.availability", {"kind": "always"}), ("task.n_clients", 9),
        ("server.clients_per_round", 8)]


def run_csma(tiny_scenario, out, more=(), **mac):
    s = apply_overrides(tiny_scenario, BASE + list(more) + [
        ("network.mac", {"kind": "csma_ca", "phy_rate_bps": 1e6, "retry_limit": None, **mac})])
    return simfl.run(s, out).out_dir


def test_a_range_that_covers_everyone_changes_nothing(tiny_scenario, tmp_path):
    plain = run_csma(tiny_scenario, tmp_path / "plain")
    covered = run_csma(tiny_scenario, tmp_path / "covered", carrier_sense_range_m=1000.0)
    hidden = run_csma(tiny_scenario, tmp_path / "hidden", carrier_sense_range_m=150.0)
    names = [p.name for p in plain.iterdir() if p.suffix == ".csv"]
    assert "mac.csv" in names and "clients.csv" in names
    for name in names:
        assert filecmp.cmp(plain / name, covered / name, shallow=False), name
    assert (plain / "mac.csv").read_text() != (hidden / "mac.csv").read_text()


def test_a_round_in_which_nobody_reaches_the_dcf_closes(tiny_scenario, tmp_path):
    slow = [("population.compute", {"median_samples_per_s": 1.0, "sigma": 0.0})]
    out = run_csma(tiny_scenario, tmp_path / "idle", slow, carrier_sense_range_m=150.0)
    assert (out / "mac.csv").exists()


def test_all_in_range_checks_every_pair():
    line = np.array([0.0, 100.0, 200.0]), np.zeros(3)
    assert not all_in_range(*line, 150.0) and all_in_range(*line, 200.0)
    # an equilateral triangle of side 100: the centroid bound (2 x 57.7) is not enough
    x, y = np.array([0.0, 100.0, 50.0]), np.array([0.0, 0.0, 50.0 * 3 ** 0.5])
    assert all_in_range(x, y, 100.0 + 1e-9) and not all_in_range(x, y, 99.9)


@pytest.mark.parametrize("value", [-1.0, 0.0, float("inf")])
def test_a_bad_range_is_one_line(value):
    with pytest.raises(ConfigError, match="carrier_sense_range_m") as caught:
        CsmaCaMac(carrier_sense_range_m=value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("override, words", [
    ('network.mac={"kind": "csma_ca", "phy_rate_bps": 1e6, "carrier_sense_range_m": -5}', "> 0 metres"),
    ('network.mac={"kind": "csma_ca", "phy_rate_bps": 1e6, "carrier_sense_range_m": 50}', "population.placement"),
])
def test_cli_refuses_a_bad_range_in_one_line(capsys, override, words):
    code = main(["validate", "quickstart", "--set", override])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "carrier_sense_range_m" in err[0] \
        and words in err[0], err


@pytest.mark.parametrize("rate_bps, rts_cts", [(1e6, True), (24e6, False)])
def test_a_hidden_pair_cut_by_the_deadline_leaves_the_next_rounds_running(tiny_scenario, tmp_path,
                                                                         rate_bps, rts_cts):
    # two clients 120 m apart with a 100 m range, 3 MB uploads: rounds cut by the
    # deadline take the pair out of contention; a wake scheduled for the last of their
    # frames must not fire once nothing is left to happen
    pair = [("population.placement", {"kind": "grid", "spacing_m": 120.0}),
            ("task.n_clients", 2), ("server.clients_per_round", 2), ("run.rounds", 4),
            ("server.deadline_s", 10.0), ("network.model_bytes", 3_000_000)]
    out = run_csma(tiny_scenario, tmp_path / "pair", pair, carrier_sense_range_m=100.0,
                   phy_rate_bps=rate_bps, rts_cts=rts_cts)
    rounds = (out / "rounds.csv").read_text().splitlines()
    assert len(rounds) == 1 + 4 and rounds[1].startswith("0,0,10.0,2,2,"), rounds
