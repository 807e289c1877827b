"""simfl's NR MCS table and BLER curves against NVIDIA Sionna's (the optional ``sionna``
test extra, ``sionna-no-rt``): the modulation orders and code rates of MCS index table 1,
and the AWGN block-error table the curves were fitted to. Skipped when Sionna is not
installed."""

import json
import math
from importlib import resources

import numpy as np
import pytest

from simfl.sim.radio import bler as curves
from simfl.sim.radio.mcs import MCS_TABLE_1

pytest.importorskip("torch")
nr_utils = pytest.importorskip("sionna.phy.nr.utils")
pytest.importorskip("sionna.sys")

#: the code block size (bits) of the curves simfl fitted
CBS = "500"


def _table() -> dict:
    path = resources.files("sionna.sys") / "bler_tables" / "PDSCH_table1.json"
    data = json.loads(path.read_text())
    category = next(iter(data["category"].values()))
    return category["index"]["1"]["MCS"]


def test_the_mcs_table_is_sionnas_table_1():
    for mcs, row in enumerate(MCS_TABLE_1):
        order, rate = nr_utils.decode_mcs_index(mcs, table_index=1, is_pusch=False)
        assert int(order) == row.modulation_order, mcs
        assert float(rate) * 1024 == pytest.approx(row.code_rate_x1024), mcs


def test_the_curves_follow_sionnas_awgn_table():
    """At every tabulated SINR of MCS 3-28 the curve is within 0.1 of the table's BLER, and
    its half-BLER SINR lies between the table's last point above 0.5 and first below."""
    table = _table()
    assert sorted(map(int, table)) == list(range(3, 29))
    for key, entry in table.items():
        mcs = int(key)
        sinr_db = np.asarray(entry["SNR_db"], dtype=float)
        theirs = np.asarray(entry["CBS"][CBS]["BLER"], dtype=float)
        ours = np.array([curves.bler(mcs, float(s)) for s in sinr_db])
        assert np.abs(ours - theirs).max() <= 0.1, (mcs, ours, theirs)
        above = sinr_db[theirs >= 0.5]
        below = sinr_db[theirs < 0.5]
        assert above.max() <= curves.HALF_BLER_SINR_DB[mcs] <= below.min(), mcs
    # MCS 0-2 (not tabulated) continue the table's order below MCS 3
    half = curves.HALF_BLER_SINR_DB
    assert half[0] < half[1] < half[2] < half[3]
    assert half[3] - half[2] < 2.0 and math.isfinite(half[0])
