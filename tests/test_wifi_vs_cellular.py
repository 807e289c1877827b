"""The Wi-Fi vs cellular study runs end to end in its quick mode: one campaign over the
four uplink MACs, its table and its figure."""

from simfl.scenarios import wifi_vs_cellular as study


def test_the_quick_study_runs_every_mac_and_draws_its_figure(tmp_path, capsys):
    study.main(["--out", str(tmp_path / "wc"), "--quick"])
    out = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in out[1:] if line.strip() and not line.startswith("figure")]
    assert [row[0] for row in rows] == ["csma_ca", "slotted_aloha", "tdma", "ofdma"]
    assert {row[1] for row in rows} == {"5"}
    length = {row[0]: float(row[2]) for row in rows}
    # the same clients and compute times under every MAC: the round lengths differ by MAC
    assert len(set(length.values())) == 4
    # the band shared by processor sharing is work-conserving and has no overhead: no
    # other MAC moves the same bits sooner (DCF pays backoff and headers, ALOHA its access
    # slots, TDMA the slots of clients still computing)
    assert all(length["ofdma"] < length[mac] for mac in ("csma_ca", "slotted_aloha", "tdma"))
    assert (tmp_path / "wc" / "wifi_vs_cellular.png").stat().st_size > 10_000


def test_each_mac_of_the_study_validates_on_its_uplink():

    base = study.scenario()
    assert base.network.uplink.rate.rate_bps == 2e6 and base.network.model_bytes == 100_000
    from simfl.core.config import apply_overrides

    kinds = [apply_overrides(base, [("network.mac", mac)]).network.mac for mac in study.MACS]
    assert [mac.kind for mac in kinds] == ["csma_ca", "slotted_aloha", "tdma", "ofdma"]
    # ALOHA's granted uploads share the one uplink, as every other MAC's do
    assert kinds[1].data_phase == "serialised" and kinds[1].channels == 1
