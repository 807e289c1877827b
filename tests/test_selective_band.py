"""Frequency-selective fading per resource block and TTI scheduling in the shared band
(``network.mac.selectivity``): closed forms, scheduler properties, energy, errors,
resume, and the default left as it was."""

import hashlib
import math

import numpy as np
import pytest
from scipy import integrate
from scipy.special import j0

from band_helpers import band_sim, everyone, arrivals, with_radio
from stopped_runs import assert_resumes_identically
from simfl.cli import main as cli_main
from simfl.core.config import Energy, OfdmaMac
from simfl.core.config.fading import RayleighFading
from simfl.core.rng import RngTree
from simfl.sim.radio.block_gains import BlockGains

BAND_HZ = 1e6  # with_radio's band; its noise density is 1e-18 W/Hz
HUGE_BITS = 1e15  # an upload nobody finishes within a test


def selective(scheduler, blocks=50, **fields):
    return OfdmaMac(scheduler=scheduler, resource_blocks=blocks,
                    selectivity=fields.pop("selectivity", "rayleigh"), **fields)


def drive(mac_cfg, snr, t_s, seed=0):
    """Uploads that never end, one per full-band mean SNR in ``snr``, all joining at 0
    and run for ``t_s`` (a whole number of TTIs): the TTI band and the bits each sent."""
    snr = np.asarray(snr, dtype=float)
    sim = band_sim([0.0] * snr.size, mac_cfg, air=with_radio(snr * BAND_HZ * 1e-18),
                   seed=seed)
    mac = sim.mac
    mac.open_round(0, np.arange(snr.size))
    for client in range(snr.size):
        mac.serve(client, HUGE_BITS, 1.0)
    # half a TTI past the end: the tick at t_s has settled the bits sent until then
    sim.env.run(until=t_s + 0.5 * mac_cfg.tti_s)
    cell = mac.tti._cells[0]
    return mac.tti, HUGE_BITS - cell.left_bits


def log2_max_moments(snr, k):
    """E and Var of log2(1 + snr M), M the largest of k Exp(1) draws, from the CDF
    (1 - e^-x)^k by parts: E[g(M)] = g(0) + integral of g'(x) (1 - F(x)) over x > 0."""
    tail = lambda x: 1.0 - (1.0 - math.exp(-x)) ** k  # noqa: E731
    g = lambda x: math.log2(1.0 + snr * x)  # noqa: E731
    dg = lambda x: snr / ((1.0 + snr * x) * math.log(2.0))  # noqa: E731
    mean = integrate.quad(lambda x: dg(x) * tail(x), 0.0, math.inf, limit=200)[0]
    second = integrate.quad(lambda x: 2.0 * g(x) * dg(x) * tail(x), 0.0, math.inf,
                            limit=200)[0]
    return mean, second - mean * mean


@pytest.mark.parametrize("k", [1, 4])
def test_max_rate_sum_rate_is_the_order_statistics_closed_form(k):
    # every block of every TTI carries B/R log2(1 + snr max_k |h_k|^2): i.i.d. Rayleigh
    # blocks, a fresh draw per TTI, so the sum rate averages N = TTIs x blocks samples;
    # tolerance: 4 standard errors of that mean (from the closed form's own variance)
    snr, blocks, t_s = 10.0, 50, 2.0
    cfg = selective("max_rate", blocks)
    tti, sent = drive(cfg, [snr] * k, t_s)
    mean, var = log2_max_moments(snr, k)
    n = round(t_s / cfg.tti_s) * blocks
    got = sent.sum() / t_s / BAND_HZ  # bit/s/Hz
    assert got == pytest.approx(mean, abs=4.0 * math.sqrt(var / n))
    # max rate leaves no block unused (the TTI that starts at t_s is scheduled too)
    assert tti.block_ttis[:k].sum() == n + blocks


def test_proportional_fair_gives_identical_users_equal_time_and_beats_round_robin():
    snr, t_s = [10.0] * 3, 3.0
    pf_tti, pf_sent = drive(selective("proportional_fair", pf_time_constant_s=0.1), snr, t_s)
    rr_tti, rr_sent = drive(selective("round_robin"), snr, t_s)
    shares = pf_tti.block_ttis[:3] / pf_tti.block_ttis[:3].sum()
    assert shares == pytest.approx([1 / 3] * 3, abs=0.01)
    # multi-user diversity: E log2(1 + 10 max of 3) = 4.02 against E log2(1 + 10 X) = 2.91
    # for round robin (PF of identical users is close to max rate)
    assert pf_sent.sum() > 1.25 * rr_sent.sum()
    dealt = rr_tti.block_ttis[:3]  # in turn: 3001 TTIs x 50 blocks, within one block
    assert dealt.sum() == 3001 * 50 and dealt.max() - dealt.min() <= 1


def test_max_rate_starves_the_weak_user_and_proportional_fair_does_not():
    # 10 dB weaker: it wins a block only if its gain is 10x both others' (1.5 %)
    snr = [10.0, 10.0, 1.0]
    mr_tti, _ = drive(selective("max_rate"), snr, 2.0)
    pf_tti, _ = drive(selective("proportional_fair", pf_time_constant_s=0.1), snr, 2.0)
    mr_weak = mr_tti.block_ttis[2] / mr_tti.block_ttis[:3].sum()
    pf_weak = pf_tti.block_ttis[2] / pf_tti.block_ttis[:3].sum()
    exact = 1.0 - 2.0 / 1.1 + 1.0 / 1.2  # P(X_weak > 10 max(X_1, X_2)), X ~ Exp(1)
    assert mr_weak == pytest.approx(exact, abs=0.005)
    assert pf_weak > 0.25


def test_an_upload_ends_inside_its_tti_at_the_exact_instant():
    # unit gains, one client from 4 ms: it waits for the TTI at 10 ms, then sends at
    # the whole band's rate B log2(1 + snr) and is served mid-TTI, not at a boundary
    snr = 3.0
    sim = band_sim([0.004], selective("equal", 10, selectivity="none", tti_s=0.01),
                   air=with_radio(np.array([snr * BAND_HZ * 1e-18])))
    got = arrivals(sim.run_round(0, everyone))
    rate = BAND_HZ * math.log2(1.0 + snr)
    s_bits = 8 * 1_250_000
    assert got[0] == pytest.approx(0.01 + s_bits / rate, rel=1e-12)
    assert (got[0] / 0.01) % 1 > 1e-3  # inside a TTI


def test_the_radio_transmits_for_the_whole_time_an_upload_is_in_the_band():
    # the device keeps its transmitter on (tx_w) from the attempt's start until it is
    # served, TTIs without a block included: under max rate the weak client waits
    start_s = [0.0, 0.0, 0.25]
    sim = band_sim(start_s, selective("max_rate", tti_s=0.005),
                   air=with_radio(np.array([10.0, 10.0, 1.0]) * BAND_HZ * 1e-18),
                   energy=Energy(idle_w=0.0, compute_w=0.0, rx_w=0.0, tx_w=2.0))
    got = arrivals(sim.run_round(0, everyone))
    assert sorted(got) == [0, 1, 2]
    assert sim.energy.used_j.tolist() == pytest.approx(
        [2.0 * (got[c] - start_s[c]) for c in range(3)], rel=1e-9)
    assert got[2] > max(got[0], got[1])  # the weak one mostly waited for the others


def test_block_fading_keeps_a_gain_for_its_window_and_its_coherence_band():
    gains = BlockGains(RayleighFading(coherence_s=0.01), blocks=12, coherence_blocks=4,
                       tti_s=1e-3, rngs=RngTree(1), n_clients=3)
    clients = np.arange(3)
    first = gains.gains(clients, 0)
    assert first.shape == (3, 12)
    assert np.array_equal(first[:, :4], np.repeat(first[:, :1], 4, axis=1))  # one group
    assert not np.array_equal(first[:, 0], first[:, 4])  # groups fade independently
    assert np.array_equal(gains.gains(clients, 9), first)  # 9 ms: the same window
    assert not np.array_equal(gains.gains(clients, 10), first)  # 10 ms: a new window


def test_doppler_gains_have_jakes_correlation_from_tti_to_tti():
    # Rayleigh power gains one TTI apart: correlation rho^2, rho = J0(2 pi f_d tti)
    doppler_hz, tti_s, n = 50.0, 2e-3, 200_000
    gains = BlockGains(RayleighFading(doppler_hz=doppler_hz), blocks=1, coherence_blocks=1,
                       tti_s=tti_s, rngs=RngTree(2), n_clients=n)
    clients = np.arange(n)
    a, b = gains.gains(clients, 0)[:, 0], gains.gains(clients, 1)[:, 0]
    rho = j0(2 * math.pi * doppler_hz * tti_s)
    assert a.mean() == pytest.approx(1.0, abs=0.01)
    assert np.corrcoef(a, b)[0, 1] == pytest.approx(rho ** 2, abs=0.01)  # SE ~ 0.002


@pytest.mark.parametrize("override, field", [
    ("network.mac.tti_s=0", "tti_s"),
    ("network.mac.coherence_blocks=0", "coherence_blocks"),
    ("network.mac.selectivity=fastest", "selectivity"),
    ("network.mac.coherence_blocks=60", "coherence_blocks"),
    ("network.mac.resource_blocks=null", "resource_blocks"),
    ("network.mac.scheduler=min_latency", "scheduler"),
    ("network.mac.selectivity.coherence_s=0.0001", "coherence_s"),
])
def test_bad_selectivity_settings_get_one_line(override, field, capsys):
    code = cli_main(["validate", "cell_edge", "--set", "network.mac.selectivity=rayleigh",
                     "--set", "network.mac.resource_blocks=50", "--set", override])
    err = capsys.readouterr().err.strip()
    assert code == 2 and field in err and len(err.splitlines()) == 1, err


def test_selectivity_without_a_radio_is_one_line(capsys):
    code = cli_main(["validate", "quickstart", "--set", "network.mac=ofdma",
                     "--set", "network.mac.resource_blocks=10",
                     "--set", "network.mac.selectivity=rayleigh"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "selectivity" in err and len(err.splitlines()) == 1, err


def _tables(out):
    return [hashlib.sha256((out / name).read_bytes()).hexdigest()
            for name in ("rounds.csv", "events.csv")]


@pytest.mark.parametrize("scheduler, rounds_sha, events_sha", [
    ("proportional_fair", "cf4419412aa0d2f9c6e132fea924dc8623263e3a6cc6dcc879d73f6f6c4b36e3",
     "c7d9d6b4db26c6a4ab89a96f5e1149f0e62d4a49b2e78b982d2666e276c19ec9"),
    ("round_robin", "671e38a1f622162c4a1bc7a00a32b315c4ec471a37a40202d580756d4197320c",
     "79eaaf5aeb297b3e0be0f194d0236f3862ed731121bd18a771a045d51fbbc922"),
])
def test_selectivity_off_leaves_the_band_as_it_was(tmp_path, scheduler, rounds_sha,
                                                   events_sha):
    # the hashes are of the tables the band wrote before selectivity existed
    code = cli_main(["run", "cell_edge", "--timing-only", "--quiet", "--out", str(tmp_path),
                     "--set", "run.rounds=4", "--set", "run.events=true",
                     "--set", f"network.mac.scheduler={scheduler}",
                     "--set", "network.mac.resource_blocks=25"])
    assert code == 0
    assert _tables(tmp_path) == [rounds_sha, events_sha]


def test_a_resumed_selective_run_ends_with_the_same_tables(tmp_path):
    # the gains' memory (block fading over 50 ms) and PF's averages cross rounds
    from simfl.core.config import apply_overrides, load_scenario, parse_override

    sets = ["run.rounds=5", "run.timing_only=true", "run.events=true",
            "network.mac.scheduler=proportional_fair", "network.mac.resource_blocks=10",
            "network.mac.selectivity=rayleigh", "network.mac.selectivity.coherence_s=0.05",
            "network.mac.tti_s=0.01", "server.clients_per_round=4"]
    scenario = apply_overrides(load_scenario("cell_edge"), [parse_override(o) for o in sets])
    assert_resumes_identically(scenario, tmp_path, 2, 4, ("rounds.csv", "events.csv"),
                               drop=("summary.json",))


def _cell_edge():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scenarios" / "cell_edge.py"
    spec = importlib.util.spec_from_file_location("cell_edge_study", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cell_edge_on_a_selective_band_favours_the_schedulers_that_read_the_channel(tmp_path):
    # the same seed, rounds and clients: proportional fair's rounds end sooner than round
    # robin's (it gives each block to an upload in a good fade on it)
    import simfl

    scenario = _cell_edge().selective_scenario()
    assert scenario.network.mac.selectivity.kind == "rayleigh"
    lengths = {}
    for scheduler in ("round_robin", "proportional_fair"):
        sets = ["run.rounds=2", "run.timing_only=true", "population.placement.radius_m=100",
                f"network.mac.scheduler={scheduler}"]
        run = simfl.apply_overrides(scenario, [simfl.parse_override(o) for o in sets])
        out = simfl.run(run, out_dir=tmp_path / scheduler).out_dir
        rows = (out / "rounds.csv").read_text().splitlines()[1:]
        lengths[scheduler] = [float(r.split(",")[2]) - float(r.split(",")[1]) for r in rows]
    assert len(lengths["round_robin"]) == 2
    assert all(pf < rr for pf, rr in zip(lengths["proportional_fair"], lengths["round_robin"]))


def test_interference_between_cells_slows_a_selective_band_too(tmp_path):
    # seven cells; each upload's per-block SNR is divided by its cell's noise rise
    from test_ofdma_interference import energies_j, hexagonal

    sets = ("network.mac.selectivity=rayleigh", "network.mac.resource_blocks=20",
            "network.mac.tti_s=0.01")
    quiet = energies_j(hexagonal(tmp_path, "none", *sets))
    loud = energies_j(hexagonal(tmp_path, "average", *sets, "network.mac.interference=average"))
    assert len(quiet) == len(loud) == 2
    assert all(b > a * 1.01 for a, b in zip(quiet, loud))


@pytest.mark.parametrize("scheduler", ["max_rate", "proportional_fair", "round_robin", "equal"])
def test_all_cells_at_once_give_each_cell_what_it_would_get_alone(scheduler):
    # three cells of 1, 3 and 2 uploads (rows stacked), ties included: the stacked
    # owners are each cell's own argmax (or turn, or run of blocks), shifted by its start
    from simfl.sim.mac.band_split import BandSplit

    rng = np.random.default_rng(5)
    block_bps = rng.integers(1, 4, size=(6, 7)).astype(float)  # integers: many ties
    clients = np.array([0, 1, 2, 3, 4, 5])
    starts, sizes = np.array([0, 1, 4]), [1, 3, 2]
    cfg = OfdmaMac(scheduler=scheduler, resource_blocks=7, selectivity="rayleigh")
    stacked = BandSplit(cfg, None, 6).cells_block_owners([0, 1, 2], starts, clients,
                                                         block_bps)
    alone = BandSplit(cfg, None, 6)
    for i, (start, n) in enumerate(zip(starts, sizes)):
        rows = slice(start, start + n)
        own = alone.block_owners(i, clients[rows], block_bps[rows])
        assert stacked[i].tolist() == np.where(own >= 0, own + start, -1).tolist()
        if scheduler == "max_rate":
            assert own.tolist() == np.argmax(block_bps[rows], axis=0).tolist()
