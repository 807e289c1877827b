"""Closed forms of update compression: QSGD's unbiasedness and variance bound (Alistarh et
al. 2017, Lemma 3.1), top-k's exact bits and error feedback's conservation, and the
round-trip error of the float16 and int8 casts."""

from __future__ import annotations

import math

import pytest
import torch

from simfl.algorithms.compression import build_codec
from simfl.core.config.compression import Float16, Int8, NoCompression, Qsgd, Sign, TopK

#: the reference MLP's parameter count (784-100-10 with biases)
D_MLP = 784 * 100 + 100 + 100 * 10 + 10


def qsgd_bound_factor(d: int, s: int) -> float:
    """min(d / s^2, sqrt(d) / s): E||Q(v) - v||^2 <= factor * ||v||^2."""
    return min(d / s ** 2, math.sqrt(d) / s)


def _vector(d: int, seed: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {"w": torch.randn(d, generator=g, dtype=torch.float64)}


def _round_trip(codec, update, state=None, seed=0):
    payload, bits, state = codec.encode(update, state, torch.Generator().manual_seed(seed))
    return codec.decode(payload), bits, state


def test_the_reference_mlp_has_79510_parameters_and_qsgd_s16_bound_factor_17_62(oracle):
    assert D_MLP == 79_510
    factor = qsgd_bound_factor(D_MLP, 16)
    assert factor == math.sqrt(79_510) / 16  # sqrt(d)/s = 17.62 < d/s^2 = 310.6
    oracle("QSGD bound factor, d = 79,510, s = 16", 17.62, factor, 0.005)
    assert 79_510 / 256 == pytest.approx(310.5859375)


def test_qsgd_is_unbiased_and_its_variance_stays_under_the_bound(oracle):
    d, s, n = 400, 4, 4000
    v = _vector(d, 1)
    codec = build_codec(Qsgd(levels=s))
    draws = torch.stack([_round_trip(codec, v, seed=k)[0]["w"] for k in range(n)])
    mean = draws.mean(0)
    norm2 = float(v["w"].square().sum())
    # the exact per-coordinate variance of the rounding: (||v||/s)^2 p (1 - p)
    r = v["w"].abs() / math.sqrt(norm2) * s
    p = r - r.floor()
    exact_var = float((norm2 / s ** 2 * p * (1 - p)).sum())
    # unbiased: the Monte Carlo mean is within 4 standard errors of v, coordinate by coordinate
    se = torch.sqrt(norm2 / s ** 2 * p * (1 - p) / n) + 1e-12
    assert float(((mean - v["w"]).abs() / se).max()) < 5.0
    assert float((mean - v["w"]).abs().mean()) < 0.05 * float(v["w"].abs().mean())
    mc_var = float((draws - v["w"]).square().sum(1).mean())
    oracle("QSGD E‖Q(v) − v‖², d = 400, s = 4 (Monte Carlo)", exact_var, mc_var,
           0.05 * exact_var)
    assert mc_var < qsgd_bound_factor(d, s) * norm2
    # the bound is not loose by orders of magnitude here (sqrt(d)/s = 5)
    assert mc_var > 0.1 * qsgd_bound_factor(d, s) * norm2


def test_qsgd_bits_are_norm_plus_sign_plus_level_index():
    bits = Qsgd(levels=16).bits([D_MLP])
    assert bits == 32 + D_MLP * (1 + 5)  # levels 0..16 need ceil(log2 17) = 5 bits
    assert Qsgd(levels=15).bits([10]) == 32 + 10 * (1 + 4)
    assert _round_trip(build_codec(Qsgd(levels=16)), _vector(D_MLP, 2))[1] == bits


def test_top_k_bits_are_exact_for_the_reference_mlp_at_one_percent(oracle):
    config = TopK(fraction=0.01)
    assert config.kept(D_MLP) == 795
    assert config.bits([D_MLP]) == 795 * (32 + 17)
    oracle("top-k bits, d = 79,510, 1 %", 38_955, config.bits([D_MLP]), 0)
    assert NoCompression().bits([D_MLP]) == 2_544_320
    # the codec sends 795 values and reports the same bits for a real update
    update = {"a": torch.randn(784 * 100), "b": torch.randn(D_MLP - 78_400)}
    decoded, bits, residual = _round_trip(build_codec(config), update)
    assert bits == 38_955
    sent = torch.cat([decoded["a"].reshape(-1), decoded["b"]])
    assert int((sent != 0).sum()) == 795
    whole = torch.cat([update["a"], update["b"]])
    assert float(sent.abs().max()) == float(whole.abs().max())
    assert float(sent[sent != 0].abs().min()) >= float(whole.abs().sort().values[-795])
    # the fraction is read as written: 0.29 of 100 is 29, not 28 (0.29 * 100 < 29 in floats)
    assert TopK(fraction=0.29).kept(100) == 29


def test_error_feedback_sends_every_update_in_the_end():
    codec = build_codec(TopK(fraction=0.05))
    state, sent_total, true_total = None, torch.zeros(300, dtype=torch.float64), \
        torch.zeros(300, dtype=torch.float64)
    for rnd in range(12):
        update = _vector(300, 100 + rnd)
        decoded, _, state = _round_trip(codec, update, state, seed=rnd)
        sent_total += decoded["w"]
        true_total += update["w"]
        assert int((decoded["w"] != 0).sum()) == 15
    torch.testing.assert_close(sent_total + state, true_total, rtol=0, atol=1e-12)
    assert float(state.abs().sum()) > 0  # something is still owed


def test_without_error_feedback_top_k_forgets_what_it_did_not_send():
    codec = build_codec(TopK(fraction=0.05, error_feedback=False))
    update = _vector(300, 7)
    first, _, state = _round_trip(codec, update)
    again, _, _ = _round_trip(codec, update, state)
    assert state is None and torch.equal(first["w"], again["w"])


def test_float16_round_trip_is_within_half_an_ulp():
    v = {"w": torch.randn(10_000, generator=torch.Generator().manual_seed(3)) * 10.0}
    decoded, bits, _ = _round_trip(build_codec(Float16()), v)
    assert bits == 16 * 10_000
    err = (decoded["w"] - v["w"]).abs()
    # round to nearest with 11 significant bits: relative 2^-11, subnormals 2^-25 absolute
    assert bool((err <= v["w"].abs() * 2.0 ** -11 + 2.0 ** -25).all())
    assert decoded["w"].dtype == torch.float32


def test_int8_round_trip_is_within_half_a_step_per_tensor():
    g = torch.Generator().manual_seed(4)
    v = {"a": torch.randn(50, 20, generator=g), "b": torch.randn(7, generator=g) * 1e-3,
         "zero": torch.zeros(3)}
    decoded, bits, _ = _round_trip(build_codec(Int8()), v)
    assert bits == 8 * (1000 + 7 + 3) + 32 * 3
    for name, value in v.items():
        step = float(value.abs().max()) / 127
        assert float((decoded[name] - value).abs().max()) <= step / 2 * (1 + 1e-6) + 1e-12
    assert torch.equal(decoded["zero"], v["zero"])


def test_scaled_sign_keeps_each_tensors_mean_magnitude_and_majority_sends_only_signs():
    v = {"a": torch.tensor([3.0, -1.0, 0.0, -4.0]), "b": torch.tensor([-2.0])}
    decoded, bits, _ = _round_trip(build_codec(Sign()), v)
    assert bits == 5 + 2 * 32
    assert torch.equal(decoded["a"], torch.tensor([2.0, -2.0, 2.0, -2.0]))
    assert torch.equal(decoded["b"], torch.tensor([-2.0]))
    decoded, bits, _ = _round_trip(build_codec(Sign(vote="majority")), v)
    assert bits == 5
    assert torch.equal(decoded["a"], torch.tensor([1.0, -1.0, 1.0, -1.0]))
