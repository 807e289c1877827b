"""The NR link of the shared radio (``network.radio.link = "nr"``): the MCS table against
3GPP TS 38.214 table 5.1.3.1-1, block errors drawn at the curve's rate, HARQ with chase
combining, the MCS choice, validation and checkpoint/resume."""

import math

import numpy as np
import pytest
from stopped_runs import stopped_copy

import simfl
from simfl.cli import main
from simfl.core.config import IdealChannel, NrLink, apply_overrides, parse_override
from simfl.core.rng import RngTree
from simfl.experiment import resume_run, run_scenario
from simfl.sim.radio import bler as curves
from simfl.sim.radio.link import build_radio_link
from simfl.sim.radio.mcs import MCS_TABLE_1, spectral_efficiency
from simfl.sim.radio.nr_link import NrRadioLink

#: TS 38.214 V17 table 5.1.3.1-1, typed from the standard: MCS index, modulation order
#: Q_m, target code rate R x 1024, spectral efficiency (as printed, four decimals)
STANDARD_TABLE_1 = (
    (0, 2, 120, 0.2344), (1, 2, 157, 0.3066), (2, 2, 193, 0.3770), (3, 2, 251, 0.4902),
    (4, 2, 308, 0.6016), (5, 2, 379, 0.7402), (6, 2, 449, 0.8770), (7, 2, 526, 1.0273),
    (8, 2, 602, 1.1758), (9, 2, 679, 1.3262), (10, 4, 340, 1.3281), (11, 4, 378, 1.4766),
    (12, 4, 434, 1.6953), (13, 4, 490, 1.9141), (14, 4, 553, 2.1602), (15, 4, 616, 2.4063),
    (16, 4, 658, 2.5703), (17, 6, 438, 2.5664), (18, 6, 466, 2.7305), (19, 6, 517, 3.0293),
    (20, 6, 567, 3.3223), (21, 6, 616, 3.6094), (22, 6, 666, 3.9023), (23, 6, 719, 4.2129),
    (24, 6, 772, 4.5234), (25, 6, 822, 4.8164), (26, 6, 873, 5.1152), (27, 6, 910, 5.3320),
    (28, 6, 948, 5.5547),
)
BANDWIDTH_HZ = 1e6


class OneCellMap:
    """A radio map of fixed mean SNRs (dB) by client, over ``BANDWIDTH_HZ``."""

    def __init__(self, snr_db):
        self.snr_db, self.bandwidth_hz = list(snr_db), BANDWIDTH_HZ

    def mean_snr_db(self, client):
        return self.snr_db[client]

    downlink_mean_snr_db = mean_snr_db


class ScriptedGains:
    """Fading gains given in order of the queries, with the times they were asked at."""

    draws = True

    def __init__(self, gains):
        self.gains, self.asked = list(gains), []

    def gain(self, client, t_s):
        self.asked.append(t_s)
        return self.gains[(len(self.asked) - 1) % len(self.gains)]


def _link(snr_db, fading=None, seed=7, **nr) -> NrRadioLink:
    link = build_radio_link(NrLink(**nr), IdealChannel(), OneCellMap(snr_db), "uplink",
                            fading, None, RngTree(seed))
    assert isinstance(link, NrRadioLink)
    return link


def _logistic_bler(mcs: int, sinr_linear: float) -> float:
    """The curve's BLER, written out here from its definition."""
    s_db = 10.0 * math.log10(sinr_linear)
    return 1.0 / (1.0 + math.exp((s_db - curves.HALF_BLER_SINR_DB[mcs]) / curves.WIDTH_DB))


def test_the_spectral_efficiency_is_modulation_order_times_code_rate_for_every_mcs():
    assert len(MCS_TABLE_1) == len(STANDARD_TABLE_1) == 29
    for mcs, q_m, rate_x1024, printed in STANDARD_TABLE_1:
        assert tuple(MCS_TABLE_1[mcs]) == (q_m, rate_x1024), mcs
        assert spectral_efficiency(mcs) == q_m * rate_x1024 / 1024, mcs
        assert spectral_efficiency(mcs) == pytest.approx(printed, abs=5.1e-5), mcs
    # the link runs at SE x bandwidth, less the overhead
    link = _link([20.0], overhead=0.25)
    assert link.mcs_rate_bps(27) == pytest.approx(0.75 * 6 * 910 / 1024 * BANDWIDTH_HZ)


def test_without_fading_blocks_are_lost_at_the_curves_rate():
    """One HARQ transmission at 5 dB with a target of 0.5: MCS 12 (s50 4.95 dB), lost
    with BLER 0.447; 20,000 blocks agree within 4.5 binomial standard deviations."""
    link = _link([5.0], target_bler=0.5, max_harq=1)
    mcs = link.mcs(0)
    assert mcs == 12
    p = _logistic_bler(mcs, 10 ** 0.5)
    assert 0.3 < p < 0.5
    n = 20_000
    one_s = 1000 * 8 / (spectral_efficiency(mcs) * BANDWIDTH_HZ)
    deliveries = [link.transmit(0.0, 1000, None, client=0) for _ in range(n)]
    assert all(d.airtime_s == pytest.approx(one_s) for d in deliveries)
    lost = sum(not d.ok for d in deliveries) / n
    assert abs(lost - p) <= 4.5 * math.sqrt(p * (1 - p) / n), (lost, p)


def test_harq_chase_combining_loses_a_block_with_the_product_of_the_combined_blers():
    """Scripted fades 0.85, 0.03, 0.02, 0.05 of a 12 dB mean (MCS 20): the combined SINRs
    are 0.85, 0.88, 0.9 and 0.95 times the mean (BLER 0.61, 0.45, 0.34, 0.15), and after
    n tries the block is lost with the product of the BLERs there; each success comes
    after k transmissions of bits / R."""
    gains = (0.85, 0.03, 0.02, 0.05)
    residuals = []
    mean = 10 ** 1.2
    n = 20_000
    for max_harq in (1, 2, 3, 4):
        link = _link([12.0], ScriptedGains(gains), seed=max_harq, max_harq=max_harq)
        mcs = link.mcs(0)
        blers, combined = [], 0.0
        for g in gains[:max_harq]:
            combined += mean * g
            blers.append(_logistic_bler(mcs, combined))
        residual = math.prod(blers)
        arrive_at = [math.prod(blers[:k]) * (1 - blers[k]) for k in range(max_harq)]
        one_s = 500 * 8 / (spectral_efficiency(mcs) * BANDWIDTH_HZ)
        counts = np.zeros(max_harq + 1)
        for _ in range(n):
            link.fading.gains = list(gains)  # every block meets the same fades
            link.fading.asked.clear()
            d = link.transmit(2.0, 500, None, client=0)
            k = round(d.airtime_s / one_s)
            assert d.airtime_s == pytest.approx(k * one_s)
            assert link.fading.asked == pytest.approx([2.0 + j * one_s for j in range(k)])
            assert link.mcs(0) == 20
            counts[k - 1 if d.ok else max_harq] += 1
        expected = np.array(arrive_at + [residual])
        residuals.append(residual)
        sd = np.sqrt(expected * (1 - expected) / n)
        assert (np.abs(counts / n - expected) <= 4.5 * sd + 1e-12).all(), (
            max_harq, counts / n, expected)
    assert 0.5 < residuals[0] < 0.7 and 0.01 < residuals[-1] < 0.02
    assert (np.diff(residuals) < 0).all(), "each combined copy lowers the residual loss"


def test_the_mcs_never_falls_as_the_sinr_grows_and_is_the_highest_within_the_target():
    sinrs_db = np.linspace(-15.0, 30.0, 1801)
    for target in (0.01, 0.1, 0.3):
        chosen = [curves.pick_mcs(float(s), target) for s in sinrs_db]
        assert (np.diff(chosen) >= 0).all() and chosen[0] == 0 and chosen[-1] == 28
        for s, mcs in zip(sinrs_db[::7], chosen[::7]):
            above = [m for m in range(29) if _logistic_bler(m, 10 ** (s / 10)) <= target]
            assert mcs == (max(above) if above else 0), (s, target)
    link = _link([-10.0, 0.0, 5.0, 10.0, 20.0, 30.0])
    picked = [link.mcs(c) for c in range(6)]
    assert picked == sorted(picked) and picked[0] == 0 and picked[-1] == 28
    rates = [link.mean_rate_bps(c) for c in range(6)]
    assert rates[-1] == pytest.approx(948 * 6 / 1024 * BANDWIDTH_HZ)


def test_the_required_sinr_is_where_the_curve_meets_the_target():
    for mcs in range(29):
        s = curves.required_sinr_db(mcs, 0.1)
        assert _logistic_bler(mcs, 10 ** (s / 10)) == pytest.approx(0.1, rel=1e-9)
        assert curves.pick_mcs(s + 1e-6, 0.1) >= mcs


def test_a_silenced_client_loses_at_once_and_draws_nothing():
    link = _link([-math.inf])
    d = link.transmit(0.0, 1000, None, client=0)
    assert not d.ok and d.airtime_s == 0.0 and link.decodings == {}


RADIO = ["--set", "population.placement=disc", "--set", "network.radio={}",
         "--set", "network.uplink=ideal"]


@pytest.mark.parametrize("override, field, words", [
    ('network.radio.link="lte"', "network.radio.link.kind", "shannon, nr"),
    ('network.radio.link={"kind": "nr", "target_bler": 0}', "network.radio.link.target_bler",
     "(0, 1)"),
    ('network.radio.link={"kind": "nr", "target_bler": 1}', "network.radio.link.target_bler",
     "(0, 1)"),
    ('network.radio.link={"kind": "nr", "max_harq": 0}', "network.radio.link.max_harq",
     "[1, 32]"),
    ('network.radio.link={"kind": "nr", "overhead": 1}', "network.radio.link.overhead",
     "[0, 1)"),
])
def test_bad_link_settings_are_one_line(capsys, override, field, words):
    code = main(["validate", "quickstart", *RADIO, "--set", override])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and field in err[0] and words in err[0], err


def test_list_shows_the_nr_link_with_its_sources(capsys):
    assert main(["list", "radio_links"]) == 0
    out = capsys.readouterr().out
    nr = next(line for line in out.splitlines() if line.startswith("  nr "))
    assert "TS 38.214" in nr and "5.1.3.1-1" in nr and "Sionna" in nr and "Apache-2.0" in nr
    assert "  shannon " in out


def _scenario(*overrides):
    return apply_overrides(simfl.load_scenario("quickstart"),
                           [parse_override(s) for s in overrides])


def _same(a, b, names):
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_a_resumed_run_on_an_nr_link_ends_the_same(tmp_path):
    """HARQ decodings under Gauss-Markov fading and ARQ retries: the replay of a resumed
    run rebuilds the decoding counts, so its tables and events are byte-identical."""
    base = ("run.rounds=7", "run.timing_only=true", "run.events=true",
            "population.placement=disc", "network.uplink=ideal", "network.downlink=ideal",
            'network.radio={"fading": {"kind": "rayleigh", "doppler_hz": 5.0}, '
            '"shadowing_db": 6.0, "link": {"kind": "nr", "target_bler": 0.3, '
            '"max_harq": 2}}', "network.arq_max_attempts=3")
    plain = run_scenario(_scenario(*base), tmp_path / "plain").out_dir
    rounds = (plain / "rounds.csv").read_text().splitlines()
    retries = sum(int(r.split(",")[rounds[0].split(",").index("retries")]) for r in rounds[1:])
    assert retries > 0, "block errors decide some attempts"
    shannon = run_scenario(_scenario(*base[:-2], 'network.radio={"fading": {"kind": '
                                     '"rayleigh", "doppler_hz": 5.0}, "shadowing_db": 6.0}',
                                     base[-1]), tmp_path / "shannon").out_dir
    assert (shannon / "rounds.csv").read_bytes() != (plain / "rounds.csv").read_bytes()
    kept = run_scenario(_scenario(*base, "run.checkpoint_every_rounds=3"),
                        tmp_path / "kept").out_dir
    names = ("rounds.csv", "clients.csv", "events.csv")
    _same(plain, kept, names)
    stopped = stopped_copy(kept, tmp_path / "stopped",
                           drop=("summary.json", "clients.csv", "events.csv"))
    assert resume_run(stopped).summary["resumed_after_round"] == 6
    _same(plain, stopped, names)


def test_the_worked_example_of_the_docs():
    """docs/radio.md: at 20.0 dB (100 m, no fading) MCS 28 at 5.5547 Mb/s over 1 MHz; a
    400 kb block lasts 0.0720 s and needs a second transmission with BLER 1.03 %."""
    link = _link([20.0])
    assert link.mcs(0) == 28
    assert link.mean_rate_bps(0) == pytest.approx(5.5547e6, abs=50)
    assert curves.bler(28, 20.0) == pytest.approx(0.0103, abs=5e-5)
    assert curves.bler(28, 10 * math.log10(200.0)) < 1e-7  # two copies combined
    first = link.transmit(0.0, 50_000, None, client=0)
    assert first.ok and first.airtime_s == pytest.approx(0.0720, abs=5e-5)


def test_under_rayleigh_fading_the_loss_is_the_bler_averaged_over_the_fades():
    """A fresh Rayleigh fade per transmission (|h|^2 ~ Exp(1)) at a 15 dB mean: MCS 23;
    one transmission is lost with E[BLER(mean g)], two with E[BLER(mean g1) BLER(mean
    (g1 + g2))], integrated here numerically; 20,000 blocks agree within 4.5 sd."""
    from scipy import integrate

    from simfl.core.config import RayleighFading
    from simfl.sim.radio.fading import build_fading

    mean = 10 ** 1.5

    def one(g1):
        return _logistic_bler(23, mean * g1) * math.exp(-g1)

    def two(g2, g1):
        return (_logistic_bler(23, mean * g1) * _logistic_bler(23, mean * (g1 + g2))
                * math.exp(-g1 - g2))

    expected = {1: integrate.quad(one, 0, 50, points=[0.5, 0.9, 1.2], limit=200)[0],
                2: integrate.dblquad(two, 0, 50, 0, 50, epsabs=1e-9)[0]}
    n = 20_000
    for max_harq, p in expected.items():
        fading = build_fading(RayleighFading(), "uplink", RngTree(11), 1)
        link = _link([15.0], fading, seed=11, max_harq=max_harq)
        assert link.mcs(0) == 23
        lost = sum(not link.transmit(0.01 * i, 1000, None, client=0).ok for i in range(n)) / n
        assert abs(lost - p) <= 4.5 * math.sqrt(p * (1 - p) / n), (max_harq, lost, p)
    assert expected[1] == pytest.approx(0.558, abs=5e-4)  # docs/radio.md
    assert expected[2] == pytest.approx(0.197, abs=5e-4)
