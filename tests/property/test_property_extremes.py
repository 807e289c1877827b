"""Extreme but finite numbers on the radio, MAC, placement, hierarchy and algorithm
surfaces: ``simfl validate`` refuses them in one line naming the field, or a short
timing-only run of them finishes (exit 0) or refuses them in one line; never a
traceback, never a hang.

The numbers are the ones that overflow an exponent or a division (1e308, -1e308,
1e-300), drawn for every floating-point field of those sections, with and without a
shared radio (a disc placement, so that positions, gains and carrier sense exist).
The command line's ``main`` runs in-process.
"""

from __future__ import annotations

import contextlib
import io
import signal
import types
import typing

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from property_tree import sites
from simfl.cli import main

#: the sections these properties cover
SURFACES = ("network.radio", "network.mac", "network.sinr_threshold_db", "network.cells",
            "population.placement", "server.hierarchy", "server.algorithm",
            "task.compression")
#: a shared radio on a disc of clients
RADIO = ('population.placement={"kind":"disc"}', "network.radio={}", "network.uplink=ideal")
#: numbers that overflow an exponent or a division
EXTREMES = ("1e308", "-1e308", "1e-300")
#: wall-clock seconds a two-round timing-only run may take before it counts as a hang
HANG_S = 120


def cli(argv) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, err.getvalue()


def sets(pairs) -> list[str]:
    return [a for pair in pairs for a in ("--set", pair)]


def _options(tp) -> tuple:
    return (typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType)
            else (tp,))


def _floating(tp) -> bool:
    return float in _options(tp)


def _integer(tp) -> bool:
    return int in _options(tp) and bool not in _options(tp) and float not in _options(tp)


def _sites(kind=_floating):
    """(base switches, site) pairs whose switches validate alone."""
    found = []
    for site in sites():
        if not site.key.startswith(SURFACES) or not kind(site.type):
            continue
        for base in ((), RADIO):
            switches = (*base, *site.switches)
            if cli(["validate", "quickstart", *sets(switches)])[0] == 0:
                found.append((switches, site.key))
    return found


SITES = _sites()
INT_SITES = _sites(_integer)
#: integers past any count the simulator could hold or loop over
HUGE_INTS = ("0", "1", "1000000000", "9223372036854775807")


@contextlib.contextmanager
def no_hang(what):
    def hung(*_):
        raise TimeoutError(f"{what} ran past {HANG_S} s")
    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(HANG_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def check(pairs, tmp_path) -> tuple[int, str]:
    """(exit status, stderr) of validate, and of a short run when validate accepts."""
    status, err = cli(["validate", "quickstart", *sets(pairs)])
    assert status in (0, 2) and "Traceback" not in err, (pairs, err)
    if status == 2:
        # one line naming a field: this one, or one that a rule between fields involves
        # (the invalid-value tier checks that each field's own bad values name it)
        assert len(err.strip().splitlines()) == 1, (pairs, err)
        assert err.startswith("simfl validate: error: ") and " = " in err, (pairs, err)
        return status, err
    with no_hang(pairs):
        status, err = cli(["run", "quickstart", "--timing-only", "--quiet", "--set",
                           "run.rounds=2", "--out", str(tmp_path / "r"), *sets(pairs)])
    assert status in (0, 2) and "Traceback" not in err, (pairs, err)
    if status == 2:
        assert len(err.strip().splitlines()) == 1, (pairs, err)
    return status, err


@st.composite
def extreme(draw):
    switches, key = draw(st.sampled_from(SITES))
    return (*switches, f"{key}={draw(st.sampled_from(EXTREMES))}"), key


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(extreme())
def test_an_extreme_number_on_the_new_surfaces_is_one_line_or_a_finished_run(tmp_path, case):
    check(case[0], tmp_path)


@st.composite
def huge_int(draw):
    switches, key = draw(st.sampled_from(INT_SITES))
    return (*switches, f"{key}={draw(st.sampled_from(HUGE_INTS))}"), key


@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(huge_int())
def test_a_huge_count_on_the_new_surfaces_is_one_line_or_a_finished_run(tmp_path, case):
    check(case[0], tmp_path)


@pytest.mark.slow
@settings(max_examples=600, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(extreme())
def test_an_extreme_number_on_the_new_surfaces_long_profile(tmp_path, case):
    check(case[0], tmp_path)


@pytest.mark.parametrize("pairs, key", [
    ((*RADIO, "network.radio.shadowing_db=8", "network.radio.shadowing_corr_m=1e308"),
     "network.radio.shadowing_corr_m"),
    ((*RADIO, "network.sinr_threshold_db=1e308"), "network.sinr_threshold_db"),
    ((*RADIO, "network.sinr_threshold_db=-1e308"), "network.sinr_threshold_db"),
    ((*RADIO, 'network.radio.fading={"kind":"rayleigh","coherence_s":1e-300}'),
     "network.radio.fading.coherence_s"),
    ((*RADIO, "network.radio.bandwidth_hz=1e-300"), "network.radio.bandwidth_hz"),
    ((*RADIO, "network.radio.path_loss.ref_loss_db=-1e308"),
     "network.radio.path_loss.ref_loss_db"),
    ((*RADIO, 'network.radio.path_loss={"kind":"free_space","freq_hz":1e308}'),
     "network.radio.path_loss.freq_hz"),
    (("network.mac.kind=slotted_aloha", "network.mac.channels=1000000000"),
     "network.mac.channels"),
    (('network.mac={"kind":"csma_ca","mpdu_payload_bytes":1,"phy_rate_bps":2e6}',
      "network.model_bytes=100000000"), "network.mac.mpdu_payload_bytes"),
])
def test_the_numbers_that_overflowed_are_refused_at_validate(tmp_path, pairs, key):
    status, err = check(pairs, tmp_path)
    assert status == 2 and f"validate: error: {key} = " in err, err


def test_rts_cts_with_a_window_of_one_and_no_retry_limit_finishes(tmp_path):
    pairs = ("task.n_clients=50", "server.clients_per_round=50", "server.deadline_s=40",
             'network.mac={"kind":"csma_ca","rts_cts":true,"cw_min":1,"retry_limit":null,'
             '"phy_rate_bps":2e6}')
    assert check(pairs, tmp_path)[0] == 0


def test_the_sites_cover_the_new_surfaces():
    keys = {key for _, key in SITES}
    for key in ("network.radio.shadowing_corr_m", "network.sinr_threshold_db",
                "network.radio.fading.coherence_s", "network.mac.slot_s",
                "network.mac.carrier_sense_range_m", "server.hierarchy.cloud_deadline_s"):
        assert key in keys, key
