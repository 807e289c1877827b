"""Channel and rate models: validation, determinism, per-client state, same-draw rule."""

import math

import numpy as np
import pytest

from simfl.core.config import Scenario, apply_overrides, parse_override
from simfl.core.config.network import (ContinuousGilbertElliottChannel, Distance, ErasureChannel,
                                       FixedRate,
                                       GilbertElliottChannel, IdealChannel, RayleighChannel,
                                       ShannonRate)
from simfl.core.errors import ConfigError
from simfl.core.registry import REGISTRIES
from simfl.core.rng import RngTree
from simfl.sim.links.channel import build_link

SECOND = FixedRate(rate_bps=8000.0)  # 1000 bytes take 1 s


@pytest.mark.parametrize("make, field", [
    (lambda: GilbertElliottChannel(p_gb=1.5), "p_gb"),
    (lambda: GilbertElliottChannel(p_gb=0.0, p_bg=0.0), "p_bg"),
    (lambda: GilbertElliottChannel(loss_bad=-0.1), "loss_bad"),
    (lambda: ContinuousGilbertElliottChannel(rate_gb_per_s=-1.0), "rate_gb_per_s"),
    (lambda: ContinuousGilbertElliottChannel(rate_gb_per_s=0.0, rate_bg_per_s=0.0),
     "rate_bg_per_s"),
    (lambda: ContinuousGilbertElliottChannel(loss_good=1.5), "loss_good"),
    (lambda: RayleighChannel(k_factor=-1.0), "k_factor"),
    (lambda: RayleighChannel(mean_snr_db=math.inf), "mean_snr_db"),
    (lambda: ShannonRate(bandwidth_hz=0.0), "bandwidth_hz"),
    (lambda: ShannonRate(efficiency=1.5), "efficiency"),
    (lambda: ShannonRate(efficiency=0.0), "efficiency"),
    (lambda: Distance(d_min_m=50.0, d_max_m=10.0), "d_max_m"),
    (lambda: Distance(d_ref_m=0.0), "d_ref_m"),
    (lambda: IdealChannel(distance=Distance()), "distance"),
    (lambda: ErasureChannel(p=2.0), "p"),
])
def test_bad_values_raise_config_error_naming_the_field(make, field):
    with pytest.raises(ConfigError) as info:
        make()
    assert info.value.field == field


def test_new_kinds_are_registered_with_a_summary():
    for point, name in [("channels", "gilbert_elliott"), ("channels", "gilbert_elliott_continuous"),
                        ("channels", "rayleigh"),
                        ("rates", "shannon")]:
        entry = next(e for e in REGISTRIES[point] if e.name == name)
        assert entry.summary


def test_kinds_set_from_overrides_round_trip():
    s = apply_overrides(Scenario(), [parse_override(p) for p in (
        "network.uplink.kind=gilbert_elliott_continuous",
        "network.uplink.rate_gb_per_s=0.1", "network.downlink.kind=rayleigh",
        "network.downlink.rate.kind=shannon", 'network.downlink.distance={"d_max_m": 50}')])
    assert type(s.network.uplink) is ContinuousGilbertElliottChannel
    assert s.network.uplink.rate_gb_per_s == 0.1
    assert s.network.downlink.rate == ShannonRate()
    assert s.network.downlink.distance == Distance(d_max_m=50.0)
    assert Scenario.from_dict(s.to_dict()) == s


CHANNELS = [
    GilbertElliottChannel(rate=SECOND),
    ContinuousGilbertElliottChannel(rate=SECOND),
    RayleighChannel(rate=ShannonRate(), k_factor=3.0, distance=Distance()),
    ErasureChannel(rate=SECOND),
]


@pytest.mark.parametrize("cfg", CHANNELS, ids=lambda c: f"{c.kind}")
def test_same_seed_same_deliveries(cfg):
    def run(seed):
        rngs = RngTree(seed)
        link = build_link(cfg, rngs)
        out = []
        for r in range(20):
            for client in range(3):
                rng = rngs.stream(f"channel/uplink/{client}/round/{r}")
                out += [link.transmit(10.0 * r + k, 1000, rng, client=client) for k in range(2)]
        return out

    assert run(1) == run(1)
    assert run(1) != run(2)


@pytest.mark.parametrize("cfg", CHANNELS[:2], ids=["per_attempt", "continuous"])
def test_each_client_has_its_own_chain(cfg):
    """A client's outcomes do not depend on how other clients' attempts interleave."""
    def outcomes(order):
        link = build_link(cfg)
        rngs = {c: np.random.default_rng(c) for c in range(3)}
        seen = {c: [] for c in range(3)}
        for t, client in order:
            seen[client].append(link.transmit(t, 1000, rngs[client], client=client).ok)
        return seen

    times = [(float(t), c) for t in range(0, 600, 2) for c in range(3)]
    assert outcomes(times) == outcomes(sorted(times, key=lambda tc: (tc[1], tc[0])))


def test_gilbert_elliott_state_persists_across_rounds():
    """A chain that (almost) never moves repeats each client's first outcome in later rounds."""
    cfg = GilbertElliottChannel(p_gb=1e-12, p_bg=1e-12)
    link, rngs = build_link(cfg), RngTree(5)

    def round_of(r):
        return [link.transmit(0.0, 10, rngs.stream(f"channel/uplink/{c}/round/{r}"), client=c).ok
                for c in range(40)]

    first = round_of(0)
    assert 5 < sum(first) < 35  # stationary start: about half Good
    assert round_of(1) == first and round_of(2) == first


def test_continuous_chain_depends_on_elapsed_time():
    cfg = ContinuousGilbertElliottChannel(rate_gb_per_s=1e-9, rate_bg_per_s=1e-9,
                                rate=SECOND)
    link, rng = build_link(cfg), np.random.default_rng(0)
    first = [link.transmit(0.0, 1000, rng, client=c).ok for c in range(40)]
    assert [link.transmit(1.0, 1000, rng, client=c).ok for c in range(40)] == first
    fast = ContinuousGilbertElliottChannel(rate_gb_per_s=100.0, rate=SECOND)
    link = build_link(fast)
    assert not any(link.transmit(0.0, 1000, rng, client=c).ok for c in range(40))
    with pytest.raises(ValueError):
        link.transmit(-1.0, 1000, rng, client=0)


def test_continuous_attempt_may_start_before_a_cut_short_one_would_have_ended():
    """A deadline interrupts a 10 s attempt; the next starts at 5 s, inside its airtime."""
    cfg = ContinuousGilbertElliottChannel(rate_gb_per_s=1e-9, rate_bg_per_s=1e-9,
                                rate=FixedRate(rate_bps=800.0))
    link, rng = build_link(cfg), np.random.default_rng(1)
    first = [link.transmit(0.0, 1000, rng, client=c).ok for c in range(40)]
    assert [link.transmit(5.0, 1000, rng, client=c).ok for c in range(40)] == first


def test_rayleigh_loss_and_airtime_come_from_the_same_draw():
    """With a shannon rate, an attempt in outage is sent at the threshold's rate and lost;
    the others run at the capacity of their own draw (so never slower than that)."""
    cfg = RayleighChannel(mean_snr_db=10.0, threshold_db=0.0, rate=ShannonRate(bandwidth_hz=1e6))
    link, rng = build_link(cfg), np.random.default_rng(3)
    n_bytes = 1_250_000
    limit_s = n_bytes * 8 / (1e6 * math.log2(1 + 1.0))  # airtime at SNR = threshold = 1
    deliveries = [link.transmit(0.0, n_bytes, rng) for _ in range(2000)]
    lost = [d for d in deliveries if not d.ok]
    assert 0 < len(lost) < 2000 and all(d.airtime_s == limit_s for d in lost)
    arrived = {d.airtime_s for d in deliveries if d.ok}
    assert max(arrived) < limit_s and len(arrived) == 2000 - len(lost)


def test_a_deep_fade_costs_one_attempt_at_the_threshold_rate_not_its_own():
    # mean SNR 10 dB, threshold 0 dB: an SNR of 1e-6 would take 7e5 s at its own capacity
    cfg = RayleighChannel(mean_snr_db=10.0, threshold_db=0.0, rate=ShannonRate(bandwidth_hz=1e6))
    link = build_link(cfg)
    link._snr = lambda t_s, client, rng: 1e-6
    delivery = link.transmit(0.0, 1_250_000, None)
    assert not delivery.ok and delivery.airtime_s == pytest.approx(1e7 / 1e6)


def test_rayleigh_without_threshold_never_loses():
    link, rng = build_link(RayleighChannel(threshold_db=None)), np.random.default_rng(0)
    assert all(link.transmit(0.0, 1000, rng).ok for _ in range(500))


def test_shannon_rate_with_efficiency_and_fixed_distance():
    """10 dB at 100 m with d_ref = 10 m and exponent 2 is 30 dB - 20 dB; efficiency 0.5 doubles."""
    n_bytes = 1_250_000
    expected_s = 1e7 / (1e6 * math.log2(11.0))
    ideal = IdealChannel(rate=ShannonRate(bandwidth_hz=1e6, snr_db=10.0))
    assert build_link(ideal).transmit(0.0, n_bytes, None).airtime_s == pytest.approx(expected_s)
    half = IdealChannel(rate=ShannonRate(bandwidth_hz=1e6, snr_db=10.0, efficiency=0.5))
    assert build_link(half).transmit(0.0, n_bytes, None).airtime_s == pytest.approx(2 * expected_s)
    far = IdealChannel(rate=ShannonRate(bandwidth_hz=1e6, snr_db=30.0),
                       distance=Distance(d_min_m=100.0, d_max_m=100.0, d_ref_m=10.0,
                                         path_loss_exponent=2.0))
    delivery = build_link(far, RngTree(0)).transmit(0.0, n_bytes, None, client=7)
    assert delivery.ok and delivery.airtime_s == pytest.approx(expected_s)


def test_distances_are_per_client_and_shared_by_directions():
    cfg = IdealChannel(rate=ShannonRate(), distance=Distance(d_min_m=1.0, d_max_m=1000.0))
    rngs = RngTree(4)
    up, down = build_link(cfg, rngs), build_link(cfg, rngs)
    up_s = [up.transmit(0.0, 1000, None, client=c).airtime_s for c in range(10)]
    assert up_s == [down.transmit(0.0, 1000, None, client=c).airtime_s for c in range(10)]
    assert len(set(up_s)) == 10
    with pytest.raises(ValueError):
        build_link(cfg)


@pytest.mark.parametrize("cfg", CHANNELS + [IdealChannel(rate=SECOND),
                                         IdealChannel(rate=ShannonRate())], ids=lambda c: c.kind)
def test_draws_says_whether_transmit_uses_its_rng(cfg):
    """The device creates a transfer's stream only for links that draw from it."""
    link = build_link(cfg, RngTree(0))
    rng = np.random.default_rng(0)
    link.transmit(0.0, 1000, rng, client=1)
    assert (rng.bit_generator.state != np.random.default_rng(0).bit_generator.state) == link.draws
    if not link.draws:
        assert link.transmit(1.0, 1000, None, client=1).ok


def test_transmit_without_client_still_works():
    """device.py calls transmit(t, n_bytes, rng) until it passes client=."""
    link = build_link(GilbertElliottChannel(rate=SECOND))
    delivery = link.transmit(0.0, 1000, np.random.default_rng(0))
    assert delivery.airtime_s == 1.0


# ---- ARQ transfer on the simulation clock

def test_arq_transfer_retries_back_to_back_and_reports_each_attempt():
    import simpy

    from simfl.sim.links.channel import arq_transfer

    env = simpy.Environment()
    link = build_link(ErasureChannel(p=0.5, rate=FixedRate(rate_bps=8000.0)))  # 1 s attempts
    rng = RngTree(3).stream("arq")
    twin, reference = build_link(link.cfg), RngTree(3).stream("arq")  # the same draws
    expected = [not twin.transmit(0.0, 1000, reference, client=0).ok for _ in range(6)]
    attempts, lost = [], []
    proc = env.process(arq_transfer(env, link, 1000, rng, client=0, max_attempts=6,
                                    on_attempt=lambda air, wall, bursts: attempts.append(env.now),
                                    on_lost=lambda n, retrying: lost.append((n, retrying))))
    env.run(proc)
    n_lost = expected.index(False) if False in expected else 6
    assert proc.value == (n_lost < 6)
    assert attempts == [float(i) for i in range(min(n_lost + 1, 6))]
    assert lost == [(i + 1, i + 1 < 6) for i in range(n_lost)]
    assert env.now == min(n_lost + 1, 6)


def test_arq_transfer_uses_the_sharing_rule_for_wall_time():
    import simpy

    from simfl.sim.links.channel import arq_transfer

    env = simpy.Environment()
    link = build_link(IdealChannel(rate=FixedRate(rate_bps=8000.0)))
    seen = []
    proc = env.process(arq_transfer(env, link, 1000, None, client=4, max_attempts=2,
                                    share=lambda c, t, air: (3 * air + c,
                                                             ((2 * air + c, 3 * air + c),)),
                                    on_attempt=lambda air, wall, b: seen.append((air, wall, b))))
    env.run(proc)
    assert proc.value is True and seen == [(1.0, 7.0, ((6.0, 7.0),))] and env.now == 7.0


def test_the_two_gilbert_elliott_kinds_keep_to_their_own_parameters():
    per_attempt = apply_overrides(Scenario(), [parse_override(p) for p in (
        "network.uplink=gilbert_elliott", "network.uplink.p_gb=0.3")])
    assert per_attempt.network.uplink == GilbertElliottChannel(p_gb=0.3)
    switched = apply_overrides(per_attempt, [("network.uplink", "gilbert_elliott_continuous")])
    assert switched.network.uplink == ContinuousGilbertElliottChannel()
    with pytest.raises(ConfigError) as err:
        apply_overrides(switched, [("network.uplink.p_gb", 0.3)])
    assert err.value.field == "network.uplink.p_gb"
