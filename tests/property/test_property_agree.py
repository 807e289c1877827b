"""``simfl validate`` and ``simfl run --timing-only`` agree on every override.

The overrides are those the property tier draws from (every kind switch of the scenario
tree, an invalid value anywhere in it, an unknown kind) and the loose values a flag must
not hide (``1`` or ``"yes"`` for a boolean, a section set to null). Both commands run
in-process on the quickstart scenario with the same ``--set`` pairs: one refuses them
(exit 2, one line) exactly when the other does.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import typing

from hypothesis import HealthCheck, given, settings, strategies as st

from simfl.cli import main
from test_property_invalid import SITES, _bad_values, unknown_kind

#: every run is this short: acceptance, not results, is compared
BASE = ("run.rounds=1",)
LOOSE = ("1", "0", '"yes"', '"true"', "null")
SECTIONS = ("run", "server", "network", "population", "task")


def _exit(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, err.getvalue()


def _both(pairs: list[str]) -> None:
    sets = [arg for pair in (*BASE, *pairs) for arg in ("--set", pair)]
    checked, said = _exit(["validate", "quickstart", *sets])
    with tempfile.TemporaryDirectory() as folder:
        ran, told = _exit(["run", "quickstart", "--timing-only", "--quiet",
                           "--out", f"{folder}/run", *sets])
    assert (checked == 0) == (ran == 0), (pairs, said, told)
    for status, text in ((checked, said), (ran, told)):
        assert status in (0, 2), (pairs, status, text)
        if status == 2:
            assert len(text.strip().splitlines()) == 1 and "Traceback" not in text, text


@st.composite
def overrides(draw) -> list[str]:
    site = draw(st.sampled_from(SITES))
    kind = draw(st.sampled_from(["switch", "bad", "loose"]))
    if kind == "switch":  # the kinds on the way alone: valid
        return list(site.switches)
    if kind == "loose" and bool in typing.get_args(site.type) + (site.type,):
        return [*site.switches, f"{site.key}={draw(st.sampled_from(LOOSE))}"]
    suffix, text = draw(_bad_values(site))
    key = site.key.rsplit(".", 1)[0] + suffix if suffix else site.key
    return [*site.switches, f"{key}={text}"]


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(overrides())
def test_validate_and_timing_only_run_agree_on_every_override(pairs):
    _both(pairs)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(unknown_kind())
def test_validate_and_timing_only_run_agree_on_unknown_kinds(case):
    key, kind = case
    _both([f"{key}={kind}"])


def test_loose_booleans_and_null_sections_are_refused_by_both():
    for value in LOOSE:
        _both([f"run.timing_only={value}"])
        _both([f"run.events={value}"])
    for section in SECTIONS:
        _both([f"{section}=null"])
