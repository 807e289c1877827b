"""The compression study runs end to end in its quick mode: one campaign over the four
schemes, its table and its figure; and its setting makes the uplink the bottleneck."""

import csv
import importlib.util
from pathlib import Path

from simfl.core.config import apply_overrides

SCRIPT = Path(__file__).resolve().parents[1] / "scenarios" / "compression.py"


def load_study():
    spec = importlib.util.spec_from_file_location("compression_study", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_quick_study_runs_every_scheme_counts_its_bits_and_draws_its_figure(tmp_path, capsys):
    study = load_study()
    study.main(["--out", str(tmp_path / "cs"), "--quick"])
    out = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in out[1:] if line.strip() and not line.startswith("figure")]
    assert [row[0] for row in rows] == ["none", "qsgd", "top_k", "int8"]
    bits = {row[0]: int(row[1].replace(",", "")) for row in rows}
    length = {row[0]: float(row[4]) for row in rows}
    assert bits["top_k"] < bits["qsgd"] < bits["int8"] < bits["none"]
    # the same clients and compute times under every scheme: a shorter upload, a shorter
    # round; float32 uploads run into the deadline
    assert length["top_k"] < length["qsgd"] < length["int8"] < length["none"]
    assert length["none"] == study.scenario().server.deadline_s
    assert (tmp_path / "cs" / "compression.png").stat().st_size > 10_000
    # the figure's bits per round (rounds.csv's arrivals times the configured payload)
    # against clients.csv's bits_sent, which the run counts as it delivers each upload
    from simfl.campaign.results import table

    _, rows = table(tmp_path / "cs")
    compressed = [r for r in rows if r["server.compression"]["kind"] != "none"]
    assert len(compressed) == 3
    for row in compressed:
        run_dir = tmp_path / "cs" / row["run"]
        on_time, late = study.delivered_per_round(
            run_dir, study.upload_bits(row["server.compression"]))
        with open(run_dir / "clients.csv", newline="") as f:
            sent = sum(int(c["bits_sent"]) for c in csv.DictReader(f))
        assert sent > 0 and (on_time + late) * row["rounds"] == sent


def test_the_uplink_is_the_bottleneck_for_dense_updates_only():
    study = load_study()
    base = study.scenario()
    rate_bps = base.network.uplink.rate.rate_bps
    deadline_s = base.server.deadline_s
    airtime_s = {s["kind"]: study.upload_bits(s) / rate_bps for s in study.SCHEMES}
    assert airtime_s["none"] > deadline_s / 2
    assert all(airtime_s[kind] < deadline_s / 5 for kind in ("qsgd", "top_k", "int8"))
    kinds = [apply_overrides(base, [("server.compression", s)]).server.compression
             for s in study.SCHEMES]
    assert [c.kind for c in kinds] == ["none", "qsgd", "top_k", "int8"]
    assert kinds[1].levels == 16 and kinds[2].fraction == 0.01 and kinds[2].error_feedback
