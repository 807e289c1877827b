"""Labels that cannot land on the wrong line, legends that name what was varied, and run
folders named readably when a grid value is a whole table.

Run folders here are written by hand (config.json, provenance.json and the tables), so
which data belongs to which line is known without a simulation; each line's label is
checked against the data the figure drew for it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simfl.campaign.grid import expand, parse_grid, table_text
from simfl.campaign.rows import agrees
from simfl.cli import main
from simfl.cli.naming import labelled_name
from simfl.cli.parser import build_parser
from simfl.core.config import load_scenario
from simfl.core.errors import ConfigError
from simfl.metrics.grouping import group_by_seed, group_labels
from simfl.metrics.plot import make_figure
from simfl.metrics.rundir import write_provenance
from simfl.metrics.run_folders import read_run

#: resolved MAC sections as a run folder records them: the defaults differ by kind
MACS = {
    "csma_ca": {"kind": "csma_ca", "slot_s": 5e-05, "cw_min": 32, "phy_rate_bps": 12e6},
    "slotted_aloha": {"kind": "slotted_aloha", "slot_s": 0.01, "cw_min": 2},
    "ofdma": {"kind": "ofdma", "scheduler": "proportional_fair", "phy_rate_bps": 6e6},
}
#: the tables given on the command line for them
GIVEN = {
    "csma_ca": {"kind": "csma_ca", "phy_rate_bps": 12e6},
    "slotted_aloha": {"kind": "slotted_aloha"},
    "ofdma": {"kind": "ofdma", "scheduler": "proportional_fair"},
}


def write_run(folder: Path, mac: str, level: float, seed: int = 1,
              given: list | None = None, command: list | None = None) -> Path:
    """A finished run folder whose accuracy stays at ``level`` (its data's fingerprint)."""
    folder.mkdir(parents=True)
    scenario = {"name": "toy", "seed": seed, "network": {"mac": MACS[mac]},
                "run": {"rounds": 3, "target_accuracy": None}}
    (folder / "config.json").write_text(json.dumps({"scenario": scenario, "seed": seed}))
    (folder / "evals.csv").write_text("t_s,round,accuracy\n" + "".join(
        f"{10.0 * r},{r},{level}\n" for r in range(4)))
    (folder / "summary.json").write_text("{}")
    if given is not None or command is not None:
        record = {"command": command or ["simfl", "run", "toy"]}
        if given is not None:
            record["given"] = given
        (folder / "provenance.json").write_text(json.dumps(record))
    return folder


def drawn(fig) -> dict[str, float]:
    """Each data line's label and the (constant) accuracy it drew."""
    return {ln.get_label(): float(ln.get_ydata()[0]) for ln in fig.axes[0].get_lines()
            if not ln.get_label().startswith(("_", "target"))}


@pytest.fixture
def three(tmp_path) -> list[Path]:
    """Three runs given in an order their folder names do not sort in."""
    return [write_run(tmp_path / "zeta_ofdma", "ofdma", 0.3),
            write_run(tmp_path / "alpha_dcf", "csma_ca", 0.5),
            write_run(tmp_path / "mid_aloha", "slotted_aloha", 0.7)]


def test_plain_labels_follow_the_order_the_runs_are_given(three):
    fig = make_figure(three, labels=["OFDMA-PF", "DCF", "ALOHA"])
    assert drawn(fig) == {"OFDMA-PF": 0.3, "DCF": 0.5, "ALOHA": 0.7}
    again = make_figure(three[::-1], labels=["ALOHA", "DCF", "OFDMA-PF"])
    assert drawn(again) == drawn(fig)


def test_labels_are_bound_by_name_in_a_folder_of_runs(three, tmp_path):
    fig = make_figure([tmp_path], labels=["zeta_ofdma=OFDMA-PF", "mid_aloha=ALOHA",
                                          "alpha_dcf=DCF"])
    assert drawn(fig) == {"OFDMA-PF": 0.3, "DCF": 0.5, "ALOHA": 0.7}
    partly = make_figure([tmp_path], labels=["alpha_dcf=DCF"])  # the others: automatic
    assert drawn(partly)["DCF"] == 0.5 and len(drawn(partly)) == 3


def test_a_campaign_takes_labels_by_line_not_by_the_sorted_order(tmp_path):
    root = tmp_path / "c2_sweep"
    for mac, level in (("ofdma", 0.3), ("csma_ca", 0.5), ("slotted_aloha", 0.7)):
        for seed in (1, 2):
            write_run(root / f"mac={mac},seed={seed}", mac, level, seed,
                      given=[["network.mac", GIVEN[mac]]])
    with pytest.raises(ConfigError, match="holds 3 lines"):
        make_figure([root], labels=["OFDMA-PF", "DCF", "ALOHA"])
    fig = make_figure([root], labels=["mac=ofdma=OFDMA-PF", "mac=csma_ca=DCF",
                                      "mac=slotted_aloha,seed=2=ALOHA"])
    assert drawn(fig) == {"OFDMA-PF": 0.3, "DCF": 0.5, "ALOHA": 0.7}


def test_a_line_is_named_by_part_of_its_automatic_label(tmp_path):
    root = tmp_path / "c"
    for i, mac in enumerate(("ofdma", "csma_ca", "slotted_aloha")):
        write_run(root / f"run{i}_seed1", mac, 0.3 + 0.2 * i, given=[["network.mac", GIVEN[mac]]])
    fig = make_figure([root], labels=["mac=ofdma=OFDMA-PF", "mac=csma_ca, phy_rate_bps=1.2e+07=DCF",
                                      "mac=slotted_aloha=ALOHA"])
    assert drawn(fig) == {"OFDMA-PF": 0.3, "DCF": 0.5, "ALOHA": 0.7}


def test_a_given_record_nested_beyond_reason_is_no_record(tmp_path):
    run = write_run(tmp_path / "r", "csma_ca", 0.1)
    (run / "provenance.json").write_text('{"given": [["network.mac", ' + "{\"x\": " * 5000
                                         + "1" + "}" * 5000 + "]]}")
    assert read_run(run).given is None


def test_one_label_per_dir_and_one_line_per_label(tmp_path):
    a1 = write_run(tmp_path / "a_seed1", "csma_ca", 0.5, 1)
    a2 = write_run(tmp_path / "a_seed2", "csma_ca", 0.5, 2)
    b = write_run(tmp_path / "b_seed1", "ofdma", 0.3, 1)
    lines = {"B (n=1)": 0.3, "A (n=2)": 0.5}  # n: the lines have different seed counts
    assert drawn(make_figure([b, a1, a2], labels=["B", "A", "A"])) == lines
    assert drawn(make_figure([b, a1, a2], labels=["B", "A"])) == lines
    with pytest.raises(ConfigError, match="one label per line"):
        make_figure([b, a1, a2], labels=["B", "A", "C"])
    with pytest.raises(ConfigError, match="already named"):
        make_figure([b, a1, a2], labels=["a_seed1=A", "a=B"])
    with pytest.raises(ConfigError, match="LINE=TEXT like the others"):
        make_figure([b, a1, a2], labels=["a=A", "B"])


def test_label_takes_several_values_after_one_flag_or_repeated():
    parser = build_parser()
    assert parser.parse_args(["plot", "d", "--label", "A", "B", "C"]).label == ["A", "B", "C"]
    assert parser.parse_args(["plot", "d", "--label", "A", "--label", "B"]).label == ["A", "B"]
    assert parser.parse_args(["plot", "d", "--label", "A", "B", "--label", "C"]).label == [
        "A", "B", "C"]


def test_a_label_count_that_fits_nothing_is_one_line(three, tmp_path, capsys):
    out = tmp_path / "p.png"
    assert main(["plot", *map(str, three), "--out", str(out), "--label", "A", "B"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "3 labels" in err and "Traceback" not in err
    assert not out.exists()
    assert main(["plot", *map(str, three), "--out", str(out), "--label", "A", "B", "C"]) == 0


# ---------------------------------------------------------------------------------
# legends name what was given


def test_legends_name_the_given_keys_not_the_defaults_of_a_kind(tmp_path):
    runs = [read_run(write_run(tmp_path / mac, mac, 0.1 * i, given=[["network.mac", GIVEN[mac]]]))
            for i, mac in enumerate(GIVEN)]
    assert group_labels(group_by_seed(runs)) == [
        "mac=csma_ca, phy_rate_bps=1.2e+07", "mac=slotted_aloha",
        "mac=ofdma, scheduler=proportional_fair"]


def test_without_given_values_the_resolved_differences_name_the_lines(tmp_path):
    runs = [read_run(write_run(tmp_path / mac, mac, 0.1)) for mac in ("csma_ca", "slotted_aloha")]
    assert group_labels(group_by_seed(runs)) == ["mac=csma_ca, slot_s=5e-05, cw_min=32",
                                                 "mac=slotted_aloha, slot_s=0.01, cw_min=2"]


def test_a_run_commands_set_items_are_its_given_values(tmp_path):
    """Folders written before provenance.json had ``given``: its ``--set`` items."""
    runs = [read_run(write_run(tmp_path / mac, mac, 0.1, command=[
        "simfl", "run", "toy", "--set", f"network.mac={json.dumps(GIVEN[mac])}", "--quiet"]))
        for mac in ("csma_ca", "ofdma")]
    assert runs[0].given == {"network.mac.kind": "csma_ca", "network.mac.phy_rate_bps": 12e6}
    assert group_labels(group_by_seed(runs)) == ["mac=csma_ca, phy_rate_bps=1.2e+07",
                                                 "mac=ofdma, scheduler=proportional_fair"]


def test_a_given_field_of_the_same_kind_shows_the_others_value(tmp_path):
    a = write_run(tmp_path / "a", "csma_ca", 0.1, given=[["network.mac.cw_min", 16]])
    config = json.loads((a / "config.json").read_text())
    config["scenario"]["network"]["mac"]["cw_min"] = 16
    (a / "config.json").write_text(json.dumps(config))
    b = write_run(tmp_path / "b", "csma_ca", 0.2, given=[])
    assert group_labels(group_by_seed([read_run(a), read_run(b)])) == ["cw_min=16", "cw_min=32"]


def test_a_resumed_run_keeps_its_given_values(tmp_path):
    folder = tmp_path / "r"
    folder.mkdir()
    write_provenance(folder, ["simfl", "run", "q"], 0.0, None, [("server.deadline_s", 5)])
    write_provenance(folder, ["simfl", "resume", str(folder)], 1.0, None)
    record = json.loads((folder / "provenance.json").read_text())
    assert record["given"] == [["server.deadline_s", 5]] and record["command"][1] == "resume"


# ---------------------------------------------------------------------------------
# run folders named by a table's kind and fields


def test_a_table_names_its_folder_by_kind_and_fields():
    key, values = parse_grid('network.mac={"kind":"csma_ca","phy_rate_bps":12e6},'
                             '{"kind":"slotted_aloha"},'
                             '{"kind":"ofdma","scheduler":"proportional_fair"}')
    specs = expand(load_scenario("quickstart"), [], [(key, values)], [1], "1.0")
    assert [s.folder for s in specs] == ["mac=csma_ca_phy12M,seed=1", "mac=slotted_aloha,seed=1",
                                         "mac=ofdma_proportional_fair,seed=1"]
    for spec in specs:  # the index's check of a stored folder accepts the new names...
        assert agrees(spec.folder, spec.id, spec.params)
    legacy = "mac=__kind___csma_ca_,_phy_rate_bps__12000000.0_,seed=1"
    assert agrees(legacy, specs[0].id, specs[0].params)  # ...and those of earlier releases
    assert labelled_name("q", [("network.mac", values[0])], 1) == "q_mac=csma_ca_phy12M_seed1"


def test_table_text_is_short_and_keeps_values_apart():
    assert table_text({"kind": "csma_ca", "cw_min": 16, "cw_max": 1024}) == \
        "csma_ca_cw_min16_cw_max1024"
    assert table_text({"kind": "csma_ca", "rts_cts": False}) == "csma_ca_no_rts_cts"
    assert table_text({"kind": "x", "slot_s": 0.30000000000000004}) != table_text(
        {"kind": "x", "slot_s": 0.3})


def test_two_grid_points_naming_one_folder_are_refused():
    key, values = parse_grid('network.mac={"kind":"csma_ca","cw_min":64},'
                             '{"kind":"csma_ca","cw_max":64}')
    with pytest.raises(ConfigError, match="both name 'mac=csma_ca_cw64,seed=1'"):
        expand(load_scenario("quickstart"), [], [(key, values)], [1], "1.0")


def test_given_values_are_shown_as_they_resolved(tmp_path):
    """``5`` given is the scenario's ``5.0``; a given key the scenario lacks is not shown."""
    runs = []
    for name, deadline, given in (("a", 5.0, [["server.deadline_s", 5], ["x.gone", 1]]),
                                  ("b", 6.0, [["server.deadline_s", 6.0]])):
        run = write_run(tmp_path / name, "csma_ca", 0.1, given=given)
        config = json.loads((run / "config.json").read_text())
        config["scenario"]["server"] = {"deadline_s": deadline}
        (run / "config.json").write_text(json.dumps(config))
        runs.append(read_run(run))
    assert group_labels(group_by_seed(runs)) == ["deadline_s=5", "deadline_s=6"]
