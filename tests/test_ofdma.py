"""The shared band (ofdma) in a simulation, capture's settings, and their errors."""

import numpy as np
import pytest

from band_helpers import (MODEL_BYTES, RATE_BPS, arrivals, band_sim, everyone, radio_map,
                          with_radio)
from stopped_runs import assert_resumes_identically
from simfl.cli import main as cli_main
from simfl.core.config import Energy, OfdmaMac, SlottedAlohaMac
from simfl.sim.radio.band import share_rate_bps
from simfl.sim.radio.capture import Air

S_BITS = 8 * MODEL_BYTES


def test_max_rate_serves_the_strongest_first_then_the_next():
    a_hz = np.array([1e6, 15e6])  # full-band SNR 1 and 15: 1 and 4 Mb/s
    sim = band_sim([0.0, 0.0], OfdmaMac(scheduler="max_rate"), air=with_radio(a_hz * 1e-18))
    r = share_rate_bps(1e6, a_hz)
    got = arrivals(sim.run_round(0, everyone))
    assert got == pytest.approx({1: S_BITS / r[1], 0: S_BITS / r[1] + S_BITS / r[0]},
                                rel=1e-9)


def test_proportional_fair_serves_both_and_is_not_max_rate():
    a_hz = np.array([1e6, 15e6])
    sim = band_sim([0.0, 0.0], OfdmaMac(scheduler="proportional_fair",
                                        pf_time_constant_s=0.1), air=with_radio(a_hz * 1e-18))
    got = arrivals(sim.run_round(0, everyone))
    alone = S_BITS / share_rate_bps(1e6, a_hz)
    assert got[1] > alone[1] * (1 + 1e-6)  # the strong client shares the band with the weak
    assert got[0] < alone[1] + alone[0]    # the weak one does not wait for it


def test_equal_shares_of_whole_blocks_leave_the_extra_upload_waiting():
    # two blocks, three uploads: blocks go to clients 0 and 1; client 2 waits
    sim = band_sim([0.0] * 3, OfdmaMac(scheduler="equal", resource_blocks=2))
    got = arrivals(sim.run_round(0, everyone))
    alone = S_BITS / RATE_BPS
    assert got == pytest.approx({0: 2 * alone, 1: 2 * alone, 2: 3 * alone}, rel=1e-12)


def test_min_latency_names_the_client_that_cannot_make_the_deadline():
    # client 2's rate saturates at a / ln 2 = 1.44 kb/s: 10 Mb would take ~ 1.9 hours
    a_hz = np.array([5e6, 5e6, 1e3])
    sim = band_sim([0.0] * 3, OfdmaMac(scheduler="min_latency"),
                   air=with_radio(a_hz * 1e-18), deadline_s=30.0)
    outcome = sim.run_round(0, everyone)
    refused = [e.client for e in sim.events if e.kind == "band_refused"]
    assert refused == [2]
    got = arrivals(outcome)
    assert sorted(got) == [0, 1] and got[0] == pytest.approx(got[1], rel=1e-12)
    assert got[0] == pytest.approx(S_BITS / share_rate_bps(0.5e6, 5e6), rel=1e-9)


def test_the_radio_transmits_for_the_whole_time_it_holds_a_share():
    # the meter is the one the MAC was built with (bound before build_mac)
    sim = band_sim([0.0, 0.5], OfdmaMac(), energy=Energy(idle_w=0.0, compute_w=0.0, rx_w=0.0,
                                                         tx_w=2.0))
    sim.run_round(0, everyone)  # uploads over [0, 1.5] and [0.5, 2.0]
    assert sim.energy.used_j.tolist() == pytest.approx([3.0, 3.0], rel=1e-12)


def test_an_equal_split_charges_each_hold_once():
    # 1 s of airtime each at full band; together each holds half the band for 2 s: 4 W x 2 s
    sim = band_sim([0.0, 0.0], OfdmaMac(), energy=Energy(idle_w=0.0, compute_w=0.0, rx_w=0.0,
                                                         tx_w=4.0))
    assert arrivals(sim.run_round(0, everyone)) == pytest.approx({0: 2.0, 1: 2.0}, rel=1e-12)
    assert sim.energy.used_j.tolist() == pytest.approx([8.0, 8.0], rel=1e-12)


def test_an_upload_cut_by_the_deadline_frees_the_band_for_the_next_round():
    sim = band_sim([0.0, 0.0], OfdmaMac(), deadline_s=1.5)  # together they need 2 s
    first = sim.run_round(0, everyone)
    assert not first.received and {m.reason for m in first.missing} == {"late"}
    second = sim.run_round(1, lambda view: np.array([0]))  # alone: the whole band
    assert arrivals(second) == pytest.approx({0: 1.5 + 1.0}, rel=1e-12)


def test_capture_off_by_default_keeps_every_collision_a_loss():
    sim = band_sim([0.0] * 2, SlottedAlohaMac(access_prob=1.0, slot_s=0.01), deadline_s=0.1,
                   air=Air(radio_map([1.0, 1e-6], noise_w=1e-300)))
    outcome = sim.run_round(0, everyone)
    assert {m.reason for m in outcome.missing} == {"collided"}
    captured = band_sim([0.0] * 2, SlottedAlohaMac(access_prob=1.0, slot_s=0.01),
                        deadline_s=2.0, air=Air(radio_map([1.0, 1e-6], noise_w=1e-300),
                                                sinr_threshold_db=10.0))
    got = arrivals(captured.run_round(0, everyone))
    # the strong one captures the first slot, the weak one is alone in the next
    assert got == pytest.approx({0: 0.01 + 1.0, 1: 0.02 + 1.0}, rel=1e-9)


def test_capture_in_another_cell_counts_its_interference():
    # two cells 1 km apart; each client next to its own access point on one channel:
    # a 0 dB threshold is cleared by both (each hears the other 60 dB down)
    m = radio_map([1e-6, 1e-6], noise_w=1e-300, ap=[0, 1], x_m=[1.0, 1000.0],
                  y_m=[0.0, 0.0], ap_xy_m=((0.0, 0.0), (1000.0, 1.0)))
    from simfl.core.config.radio import LogDistance
    from simfl.sim.radio.capture import Capture
    capture = Capture(Air(m, 0.0, LogDistance(exponent=2.0, ref_loss_db=0.0)), 2)
    won = capture.won(np.array([0, 1]), None, np.random.default_rng(0))
    assert won.tolist() == [True, True]
    one_cell = Capture(Air(radio_map([1e-6, 1e-6], noise_w=1e-300), 0.0), 2)
    assert one_cell.won(np.array([0, 1]), None, np.random.default_rng(0)).tolist() == [True,
                                                                                     False]


@pytest.mark.parametrize("override, field", [
    ("network.mac.scheduler=fastest", "scheduler"),
    ("network.mac.resource_blocks=-2", "resource_blocks"),
    ("network.mac.pf_time_constant_s=0", "pf_time_constant_s"),
])
def test_bad_band_settings_get_one_line(override, field, capsys):
    code = cli_main(["validate", "quickstart", "--set", "network.mac=ofdma",
                     "--set", override])
    err = capsys.readouterr().err.strip()
    assert code == 2 and f"error: network.mac.{field} =" in err and len(err.splitlines()) == 1


def test_capture_rounds_contend_per_event_under_the_cohort_default(tmp_path, capsys):
    tables = []
    for contention in ("vectorised", "per_event"):
        out = tmp_path / contention
        code = cli_main(["run", "quickstart", "--timing-only", "--quiet", "--out", str(out),
                         "--set", "network.mac=slotted_aloha", "--set", "run.rounds=8",
                         "--set", f"network.mac.contention={contention}",
                         "--set", "network.sinr_threshold_db=-3"])
        assert code == 0, capsys.readouterr().err
        tables.append((out / "rounds.csv").read_text())
    assert tables[0] == tables[1]


def test_the_shared_band_section_of_the_docs_runs_as_printed():
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "network-models.md").read_text()
    section = page[page.index("## 7. The shared band"):]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "network-models.md", "exec"), {})


@pytest.mark.parametrize("mac", ["ideal", "tdma"])
def test_broadcast_downloads_end_together_under_every_round_loop(mac):
    # the weakest of three downlinks has SNR 3 over 1 MHz: 10 Mb in 5 s for everyone
    from simfl.core.config import IdealMac, TdmaMac
    from simfl.sim.radio.broadcast import Broadcast

    m = radio_map(np.full(3, 1e-9), noise_w=1e-12, ap_tx_power_dbm=0.0)
    m.gain_db = 10.0 * np.log10(np.array([100.0, 3.0, 30.0]) * 1e-12 / 1e-3)
    cfg = IdealMac() if mac == "ideal" else TdmaMac(mode="shared")
    sim = band_sim([0.0, 1.0, 2.0], cfg, broadcast=Broadcast(MODEL_BYTES, 1e6, m),
                   download_bps=1e12)
    got = arrivals(sim.run_round(0, everyone))
    n = 1 if mac == "ideal" else 3
    alone = S_BITS / RATE_BPS
    assert got == pytest.approx({c: 5.0 + c + n * alone for c in range(3)}, rel=1e-12)


def test_a_resumed_band_run_ends_with_the_same_tables(tmp_path):
    # proportional fair keeps averages across rounds: the replay must rebuild them
    from simfl.core.config import apply_overrides, load_scenario, parse_override

    sets = ["run.rounds=7", "run.timing_only=true", "run.events=true", "network.mac=ofdma",
            "network.mac.scheduler=proportional_fair", "network.mac.pf_time_constant_s=2"]
    scenario = apply_overrides(load_scenario("quickstart"), [parse_override(o) for o in sets])
    assert_resumes_identically(scenario, tmp_path, 3, 6, ("rounds.csv", "events.csv"),
                               drop=("summary.json",))


def test_unicast_downloads_share_the_access_points_band():
    # three downloads of 1 s each alone start together: equal shares, all done at
    # 1 + 1 + 1 = 3 s (not 1 s side by side); then the three uploads share the uplink
    # (1 s each alone): 3 + 3 = 6 s. With a private downlink: 1 + 3 = 4 s.
    shared = band_sim([0.0] * 3, OfdmaMac(), download_bps=RATE_BPS)
    assert arrivals(shared.run_round(0, everyone)) == pytest.approx({0: 6.0, 1: 6.0, 2: 6.0},
                                                                    rel=1e-12)
    private = band_sim([0.0] * 3, OfdmaMac(downlink="private"), download_bps=RATE_BPS)
    assert arrivals(private.run_round(0, everyone)) == pytest.approx({0: 4.0, 1: 4.0, 2: 4.0},
                                                                     rel=1e-12)


def test_a_download_that_starts_later_shares_what_is_left():
    # downloads over [0, 2] together (each 1 s alone, half the band each); client 1
    # computes 0.5 s: uploads from 2 s and 2.5 s. Client 0 alone until 2.5 (half its
    # upload), then both at half rate: client 0 done at 3.5, client 1 (half its upload
    # sent by then) alone until 4.0
    sim = band_sim([0.0, 0.5], OfdmaMac(), download_bps=RATE_BPS,
                   energy=Energy(idle_w=0.0, compute_w=0.0, rx_w=1.0, tx_w=0.0))
    assert arrivals(sim.run_round(0, everyone)) == pytest.approx({0: 3.5, 1: 4.0}, rel=1e-12)
    # each receives for the 2 s it holds half the downlink band, once
    assert sim.energy.used_j.tolist() == pytest.approx([2.0, 2.0], rel=1e-12)


def test_with_a_radio_each_access_point_shares_its_own_downlink_band():
    # two cells, one download in each: no sharing across cells, both done at 1 s + upload
    m = radio_map([1e-6, 1e-6], noise_w=1e-12, ap=[0, 1], x_m=[1.0, 1000.0],
                  y_m=[0.0, 0.0], ap_xy_m=((0.0, 0.0), (1000.0, 1.0)))
    sim = band_sim([0.0, 0.0], OfdmaMac(), air=Air(m), download_bps=RATE_BPS)
    got = arrivals(sim.run_round(0, everyone))
    up_s = S_BITS / share_rate_bps(1e6, 1e6 * 1e6)  # each alone in its cell's uplink
    assert got == pytest.approx({0: 1.0 + up_s, 1: 1.0 + up_s}, rel=1e-9)
