"""The analytic tier's checks and its oracle table.

Each statistical check goes through the ``oracle`` fixture, which asserts
``|simulated - expected| <= tolerance`` and records the row. With the environment
variable ``SIMFL_ORACLE_TABLE=FILE`` set, the session writes every recorded row to
FILE as a Markdown table (oracle / expected / simulated / tolerance)::

    SIMFL_ORACLE_TABLE=oracles.md pytest tests/analytic
"""

from __future__ import annotations

import os

import pytest

_ROWS: list[tuple[str, float, float, float]] = []


def _check(name: str, expected: float, simulated: float, tolerance: float) -> None:
    expected, simulated, tolerance = float(expected), float(simulated), float(tolerance)
    _ROWS.append((name, expected, simulated, tolerance))
    assert abs(simulated - expected) <= tolerance, (
        f"{name}: simulated {simulated:.6g}, expected {expected:.6g} +/- {tolerance:.3g}")


@pytest.fixture
def oracle():
    """``oracle(name, expected, simulated, tolerance)``: assert and record one check."""
    return _check


def pytest_sessionfinish(session) -> None:
    path = os.environ.get("SIMFL_ORACLE_TABLE")
    if not path or not _ROWS:
        return
    lines = ["| oracle | expected | simulated | tolerance (±) |", "|---|---|---|---|"]
    lines += [f"| {name} | {e:.6g} | {s:.6g} | {t:.3g} |" for name, e, s, t in _ROWS]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
