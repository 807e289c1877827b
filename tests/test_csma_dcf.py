"""IEEE 802.11 DCF as simfl's uplink MAC: hand-timed exchanges, freezing, the retry limit,
energy per radio state, the deadline tie, mac.csv and the config's errors."""

import math

import numpy as np
import pytest

from conftest import everyone, make_sim
from simfl.core.config import CsmaCaMac, Energy, IdealChannel, Network, ShannonRate
from simfl.core.errors import ConfigError
from simfl.sim.energy.infinite import InfiniteEnergy
from simfl.sim.mac.csma.dcf import Dcf
from simfl.sim.mac.csma.timing import DcfTiming
from scripted_draws import Script

US = 1e-6
# make_sim sends 1000-byte updates; at 1 Mbit/s: header 400 us, ACK 240 us, payload 8 us/byte
HEADER, ACK, DIFS, SIFS, DELAY, SLOT = 400 * US, 240 * US, 128 * US, 28 * US, 1 * US, 50 * US


def exchange_s(payload_bytes):
    """DATA + SIFS + ACK with a propagation delay after each (basic access, by hand)."""
    return HEADER + payload_bytes * 8 * US + SIFS + DELAY + ACK + DELAY


def csma(**changes):
    return CsmaCaMac(**{"phy_rate_bps": 1e6, **changes})


def arrivals(outcome):
    return {a.client: a.t_s for a in outcome.received}


def test_one_station_hand_timed():
    # ready at 1 s; no backoff (CW = 1): DIFS, DATA, SIFS, ACK
    sim = make_sim(n_clients=1, compute_s=(1.0,), mac=csma(cw_min=1, cw_max=1))
    assert arrivals(sim.run_round(0, everyone))[0] == pytest.approx(1 + DIFS + exchange_s(1000),
                                                                     abs=1e-12)


def test_update_split_into_mpdus_last_one_short():
    sim = make_sim(n_clients=1, compute_s=(1.0,),
                   mac=csma(cw_min=1, cw_max=1, mpdu_payload_bytes=600))
    expected = 1 + DIFS + exchange_s(600) + DIFS + exchange_s(400)
    assert arrivals(sim.run_round(0, everyone))[0] == pytest.approx(expected, abs=1e-12)


def test_backoff_is_whole_idle_slots_below_the_window():
    for seed in range(6):
        sim = make_sim(n_clients=1, compute_s=(1.0,), seed=seed, mac=csma(cw_min=8, cw_max=8))
        waited = arrivals(sim.run_round(0, everyone))[0] - 1 - DIFS - exchange_s(1000)
        assert 0 <= round(waited / SLOT) < 8
        assert waited == pytest.approx(round(waited / SLOT) * SLOT, abs=1e-12)


def test_rts_cts_hand_timed():
    sim = make_sim(n_clients=1, compute_s=(1.0,), mac=csma(cw_min=1, cw_max=1, rts_cts=True))
    rts, cts = 288 * US, 240 * US
    expected = 1 + DIFS + rts + SIFS + DELAY + cts + SIFS + DELAY + exchange_s(1000)
    assert arrivals(sim.run_round(0, everyone))[0] == pytest.approx(expected, abs=1e-12)


def test_rate_defaults_to_the_uplinks():
    # make_sim's uplink carries the 1000-byte update in 1 s: 8000 bit/s
    sim = make_sim(n_clients=1, compute_s=(0.0,), upload_s=1.0, deadline_s=100.0,
                   mac=CsmaCaMac(cw_min=1, cw_max=1))
    bits = 272 + 128 + 8000 + 112 + 128
    assert arrivals(sim.run_round(0, everyone))[0] == pytest.approx(
        DIFS + bits / 8000 + SIFS + 2 * DELAY, abs=1e-12)


def test_retry_limit_drops_the_update():
    # two stations that never back off collide on every try; 3 collisions drop the MPDU
    sim = make_sim(n_clients=2, compute_s=(1.0,), mac=csma(cw_min=1, cw_max=1, retry_limit=3))
    outcome = sim.run_round(0, everyone)
    assert not outcome.received
    collision_s = HEADER + 8000 * US + DELAY
    assert {m.client: m.reason for m in outcome.missing} == {0: "collided", 1: "collided"}
    for missing in outcome.missing:
        assert missing.t_s == pytest.approx(1 + DIFS + 3 * collision_s + 2 * DIFS, abs=1e-12)
    (record,) = outcome.mac_slots
    assert (record.contenders, record.collision_slots, record.successes) == (2, 3, 0)


def test_backoff_freezes_while_the_medium_is_busy():
    cfg = csma(mpdu_payload_bytes=1000)
    dcf = Dcf(cfg, DcfTiming.of(cfg, 1e6), Script(2, 5, 10))
    dcf.join(0, 0.0, 2, 8000)  # backoff 2
    dcf.join(1, 0.0, 1, 8000)  # backoff 5
    first = dcf.start_busy()
    assert (first.stations, first.t_s) == ((0,), pytest.approx(DIFS + 2 * SLOT))
    during = first.t_s + first.busy_s / 2
    assert dcf.counter(1, during) == 3  # 2 idle slots counted; frozen while busy
    dcf.end_busy()  # station 0 draws 10 for its second MPDU
    resumed = first.t_s + first.busy_s + DIFS
    assert dcf.counter(1, resumed) == 3
    second = dcf.start_busy()
    assert second.stations == (1,)
    assert second.t_s == pytest.approx(resumed + 3 * SLOT, abs=1e-12)


def test_window_doubles_with_each_collision_up_to_cw_max():
    seen = []

    class Recording(Script):
        def integers(self, low, high):
            seen.append(high)
            return 0

    cfg = csma(cw_min=4, cw_max=16, retry_limit=None)
    dcf = Dcf(cfg, DcfTiming.of(cfg, 1e6), Recording())
    dcf.join(0, 0.0, 1, 8000)
    dcf.join(1, 0.0, 1, 8000)
    for _ in range(4):
        dcf.start_busy()
        dcf.end_busy()
    assert seen == [4, 4, 8, 8, 16, 16, 16, 16, 16, 16]


def test_energy_is_charged_per_radio_state():
    energy = Energy(idle_w=0.5, compute_w=0.0, tx_w=2.0, rx_w=1.0)
    for seed in range(30):  # two stations, one MPDU each, a seed where they do not collide
        sim = make_sim(n_clients=2, compute_s=(1.0,), seed=seed, download_s=0.0,
                       battery=InfiniteEnergy(2, energy), mac=csma(cw_min=4, cw_max=4))
        outcome = sim.run_round(0, everyone)
        if outcome.mac_slots[0].collision_slots == 0:
            break
    busy_s, sent_s = exchange_s(1000), HEADER + 8000 * US
    times = arrivals(outcome)
    for client, t_s in times.items():
        other_first = t_s > min(times.values())
        on_s = t_s - 1.0  # contending: from ready to its ACK
        listen_s = busy_s if other_first else 0.0
        expected = (0.5 * (on_s - busy_s - listen_s) + 2.0 * sent_s
                    + 1.0 * (busy_s - sent_s) + 1.0 * listen_s)
        assert sim.battery.used_j[client] == pytest.approx(expected, rel=1e-9)


def test_upload_done_exactly_at_the_deadline_is_on_time():
    done_s = arrivals(make_sim(n_clients=1, compute_s=(1.0,),
                               mac=csma(cw_min=1, cw_max=1)).run_round(0, everyone))[0]
    on_time = make_sim(n_clients=1, compute_s=(1.0,), deadline_s=done_s,
                       mac=csma(cw_min=1, cw_max=1)).run_round(0, everyone)
    assert arrivals(on_time) == {0: done_s}
    late = make_sim(n_clients=1, compute_s=(1.0,), deadline_s=float(np.nextafter(done_s, 0)),
                    mac=csma(cw_min=1, cw_max=1)).run_round(0, everyone)
    assert [m.reason for m in late.missing] == ["late"]


def test_round_records_count_idle_success_and_collision_slots():
    sim = make_sim(n_clients=6, compute_s=(1.0,), seed=3, deadline_s=100.0,
                   mac=csma(mpdu_payload_bytes=250))
    outcome = sim.run_round(0, everyone)
    assert len(outcome.received) == 6
    records = outcome.mac_slots
    assert sum(r.successes for r in records) == 6 * 4  # four MPDUs each
    assert max(r.contenders for r in records) == 6
    for r in records:
        assert r.slots == r.idle_slots + r.successes + r.collision_slots
        assert 0 < r.throughput < 1 and r.channel_s > 0
    second = sim.run_round(1, everyone).mac_slots
    assert sum(r.successes for r in second) == 24  # a new round counts afresh


def test_run_writes_mac_csv_with_the_carrier_sense_columns(tiny_scenario, tmp_path):
    import simfl
    from simfl.core.config import apply_overrides
    from simfl.metrics.rundir import read_csv

    s = apply_overrides(tiny_scenario, [
        ("run.timing_only", True), ("run.rounds", 3), ("network.uplink", {"kind": "ideal"}),
        ("network.mac", {"kind": "csma_ca", "mpdu_payload_bytes": 200})])
    result = simfl.run(s, tmp_path / "csma")
    text = (result.out_dir / "mac.csv").read_text()
    assert text.splitlines()[0] == ("round,contenders,slots,successes,idle_slots,"
                                    "collision_slots,channel_s,throughput")
    rows = read_csv(result.out_dir / "mac.csv")
    expected = [(r.round, r.contenders, r.successes, r.collision_slots)
                for o in result.outcomes for r in o.mac_slots]
    assert [(int(r["round"]), int(r["contenders"]), int(r["successes"]),
             int(r["collision_slots"])) for r in rows] == expected
    assert {int(r["round"]) for r in rows} == {0, 1, 2}


@pytest.mark.parametrize("field, value, allowed", [
    ("cw_max", 16, "cw_min"), ("slot_s", 0.0, "slot length"), ("difs_s", -1.0, "seconds"),
    ("retry_limit", 0, "> 0"), ("mpdu_payload_bytes", 20000, "11454"),
    ("phy_rate_bps", math.inf, "finite"), ("phy_rate_bps", 0.5, ">= 1 bit/s"),
    ("ack_bits", -1, ">= 0"), ("rts_bits", 10 ** 7, "control frame")])
def test_config_errors_are_one_line(field, value, allowed):
    with pytest.raises(ConfigError, match=allowed) as caught:
        CsmaCaMac(**{field: value})
    assert "\n" not in str(caught.value) and field in str(caught.value)


def test_a_null_rate_needs_a_fixed_uplink_rate():
    with pytest.raises(ConfigError, match="phy_rate_bps"):
        Network(uplink=IdealChannel(rate=ShannonRate()), mac=CsmaCaMac())
    Network(uplink=IdealChannel(rate=ShannonRate()), mac=CsmaCaMac(phy_rate_bps=6e6))


def test_deadline_mid_upload_is_late_and_the_next_round_starts_afresh():
    # 10 MPDUs of 100 bytes need about 10 x 1.3 ms; the round closes after 5 ms
    sim = make_sim(n_clients=2, compute_s=(0.0,), deadline_s=0.005,
                   mac=csma(mpdu_payload_bytes=100))
    first = sim.run_round(0, everyone)
    assert not first.received and {m.reason for m in first.missing} == {"late"}
    assert sum(r.successes for r in first.mac_slots) >= 2
    sim.deadline_s = sim.loops.clocked.deadline_s = 1.0
    second = sim.run_round(1, everyone)
    assert len(second.received) == 2
    assert sum(r.successes for r in second.mac_slots) == 20


def test_cli_run_writes_mac_csv(tmp_path, capsys):
    from simfl.cli import main as cli_main

    code = cli_main(["run", "quickstart", "--timing-only", "--set", "network.mac=csma_ca",
                     "--set", "run.rounds=2", "--out", str(tmp_path)])
    assert code == 0
    (mac_csv,) = tmp_path.rglob("mac.csv")
    lines = mac_csv.read_text().splitlines()
    assert lines[0].endswith("idle_slots,collision_slots,channel_s,throughput")
    assert {line.split(",")[0] for line in lines[1:]} == {"0", "1"}
    assert cli_main(["validate", "quickstart", "--set", "network.mac=csma_ca", "--set",
                     "network.mac.cw_min=0"]) == 2
    assert "network.mac.cw_min" in capsys.readouterr().err


def test_energy_per_bit_prices_each_radio_state_at_the_phy_rate():
    energy = Energy(idle_w=0.5, compute_w=0.0, tx_j_per_bit=2e-6, rx_j_per_bit=1e-6)
    sim = make_sim(n_clients=1, compute_s=(1.0,), battery=InfiniteEnergy(1, energy),
                   mac=csma(cw_min=1, cw_max=1))
    sim.run_round(0, everyone)
    sent_s = HEADER + 8000 * US  # 1 Mbit/s: 2 W sending, 1 W receiving
    download_j = 8000 * 1e-6  # the model's 8000 bits received, per bit
    expected = download_j + 0.5 * DIFS + 2.0 * sent_s + 1.0 * (exchange_s(1000) - sent_s)
    assert sim.battery.used_j[0] == pytest.approx(expected, rel=1e-9)


def test_a_station_joining_mid_idle_counts_from_the_next_slot_boundary():
    cfg = csma()
    dcf = Dcf(cfg, DcfTiming.of(cfg, 1e6), Script(10, 1))
    dcf.join(0, 0.0, 1, 8000)  # counts from DIFS; would send at DIFS + 10 slots
    dcf.join(1, DIFS + 2.5 * SLOT, 1, 8000)  # first boundary: slot 3; backoff 1
    first = dcf.start_busy()
    assert first.stations == (1,) and first.t_s == pytest.approx(DIFS + 4 * SLOT, abs=1e-12)
    dcf.end_busy()
    second = dcf.start_busy()
    assert second.t_s == pytest.approx(first.t_s + first.busy_s + DIFS + 6 * SLOT, abs=1e-12)
