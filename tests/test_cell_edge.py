"""The cell-edge study runs end to end in its quick mode: a campaign over the cell radius
and the band's scheduler, its table and its figure."""

from simfl.scenarios import cell_edge as study


def test_the_quick_study_sweeps_the_grid_and_draws_its_figure(tmp_path, capsys):
    study.main(["--out", str(tmp_path / "ce"), "--quick"])
    out = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in out[1:] if line.strip() and not line.startswith("figure")]
    assert len(rows) == 4  # two radii x two schedulers, one band and K
    assert {row[0] for row in rows} == {"100", "600"}
    assert {row[2] for row in rows} == {"equal", "min_latency"}
    length = {(row[0], row[2]): float(row[4]) for row in rows}
    # a farther cell has weaker links: the same uploads take longer to share the band
    assert length[("600", "equal")] > length[("100", "equal")]
    assert (tmp_path / "ce" / "cell_edge.png").stat().st_size > 10_000


def test_the_study_scenario_validates_with_its_radio_and_band():
    scenario = study.scenario()
    assert scenario.network.mac.kind == "ofdma" and scenario.network.radio is not None
    assert scenario.population.placement.kind == "disc"
