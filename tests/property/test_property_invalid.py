"""Generated invalid overrides over the whole scenario tree: exit 2, one line, the field.

Each example picks a field of some kind anywhere in the tree (switching kinds on the way
as ``--set`` pairs) and a value that cannot be valid there: a wrong type, a non-finite
or huge number, an unknown key or kind, a per-client list of the wrong length. The
command line's ``main`` runs in-process (``simfl validate quickstart --set ...``).
"""

from __future__ import annotations

import contextlib
import io
import json
import types
import typing

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from property_tree import sites
from simfl.cli import main

def _valid_sites():
    """The sites whose kind switches validate on their own in the quickstart scenario."""
    good = []
    for site in sites():
        if site.key in ("name",) or site.type is str and site.key.endswith(".path"):
            continue  # free text: any string is a name or a path (checked elsewhere)
        status, _ = validate(site.switches)
        if status == 0:
            good.append(site)
    return good


def validate(pairs) -> tuple[int, str]:
    argv = ["validate", "quickstart"]
    for pair in pairs:
        argv += ["--set", pair]
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, err.getvalue()


SITES = _valid_sites()
COUNTS: dict[str, int] = {}


def _bad_values(site) -> st.SearchStrategy[tuple[str, str]]:
    """(key suffix, JSON text) pairs that are invalid at ``site``."""
    tp = site.type
    origin = typing.get_origin(tp)
    options = (typing.get_args(tp) if origin in (typing.Union, types.UnionType) else (tp,))
    options = tuple(o for o in options if o is not type(None))
    has = {typing.get_origin(o) or o for o in options}
    bad: list[str] = ['"not-a-thing-%%"', "{}", '{"a": 1}']
    if float in has:
        bad += ["NaN"] + ([] if site.infinite_ok else ["Infinity", "-Infinity", "1e309"])
    if int in has:
        bad += ["1.5", "1e30", str(2**64), "-" + str(2**70)]
    if float not in has and int not in has:
        bad += ["1.25"]
    if bool not in has:
        bad += ["true"] if (float in has or int in has) else []
    if bool in has:
        bad += ["3", "0.5"]
    if tuple in has:
        item = typing.get_args([o for o in options if typing.get_origin(o) is tuple][0])[0]
        bad += ['["x"]', "[[1]]"] if item in (int, float) else []
        if site.per_client:
            bad += ["[0.5, 0.5, 0.5]"]  # quickstart has 50 clients
    else:
        bad += ["[1, 2]"]
    values = st.sampled_from(bad).map(lambda text: ("", text))
    unknown_key = st.just((".no_such_key", "1"))
    return st.one_of(values, unknown_key) if not site.key.count(".") == 0 else values


@st.composite
def invalid_override(draw):
    site = draw(st.sampled_from(SITES))
    suffix, text = draw(_bad_values(site))
    if suffix:  # an unknown key beside the field: key = its section + .no_such_key
        key = site.key.rsplit(".", 1)[0] + suffix
    else:
        key = site.key
    return site, key, text


@st.composite
def unknown_kind(draw):
    choices = sorted({s.switches[-1].split("=")[0] for s in SITES if s.switches})
    key = draw(st.sampled_from(choices))
    return key, draw(st.sampled_from(["no_such_kind", "FEDAVG", "", "1"]))


def _check(pairs, key):
    status, err = validate(pairs)
    COUNTS[f"exit {status}"] = COUNTS.get(f"exit {status}", 0) + 1
    lines = err.strip().splitlines()
    assert status == 2, (pairs, err)
    assert len(lines) == 1 and "Traceback" not in err, (pairs, err)
    named = key[:-len(".kind")] if key.endswith(".kind") else key
    assert f"error: {named}" in err or f"error: {key}" in err, (pairs, err)


@settings(max_examples=500, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(invalid_override())
def test_an_invalid_value_anywhere_is_one_line_naming_its_field(case):
    site, key, text = case
    _check([*site.switches, f"{key}={text}"], key)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(unknown_kind())
def test_an_unknown_kind_anywhere_is_one_line_naming_its_field(case):
    key, kind = case
    _check([f"{key}={kind}"], key)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(invalid_override())
def test_an_invalid_value_anywhere_long_profile(case):
    site, key, text = case
    _check([*site.switches, f"{key}={text}"], key)


def test_the_tree_has_many_sites():
    assert len(SITES) > 150
    keys = {s.key for s in SITES}
    for key in ("server.deadline_s", "network.uplink.rate.rate_bps", "population.battery.capacity_j",
                "population.availability.beta", "server.algorithm.p", "network.mac.access_prob"):
        assert key in keys, key
