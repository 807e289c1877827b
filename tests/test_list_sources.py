"""``simfl list`` names the source of each radio model: the TR 38.901 scenarios, the
hexagonal layout and its client drop, NR fractional power control and the amplifier's
energy, which is a section (one model) rather than a choice of kinds."""

from simfl.cli import main
from simfl.cli.listing import TOPICS, sourced_sections
from simfl.core.config import Amplifier, Hexagonal


def _lines(topic, capsys):
    assert main(["list", topic]) == 0
    return capsys.readouterr().out.splitlines()


def _entry(lines, name):
    found = [line for line in lines if line.split()[:1] == [name]]
    assert len(found) == 1, (name, lines)
    return found[0]


def test_the_radio_kinds_cite_their_standard(capsys):
    path_loss = _lines("path_loss", capsys)
    for kind in ("uma", "umi", "rma", "inh"):
        assert "[3GPP TR 38.901" in _entry(path_loss, kind)
    assert "[3GPP TS 38.213" in _entry(_lines("power_control", capsys), "fractional")
    assert "[3GPP TR 38.901" in _entry(_lines("placements", capsys), "hexagonal")


def test_the_layout_and_the_amplifier_are_listed_with_their_sources(capsys):
    lines = _lines("sections", capsys)
    assert lines[0] == "sections:"
    layout = _entry(lines, "network.cells.hexagonal")
    assert layout.endswith(f"[{Hexagonal.paper}]") and "Table 7.8-1" in layout
    amplifier = _entry(lines, "population.energy.amplifier")
    assert amplifier.endswith(f"[{Amplifier.paper}]") and "Cui, Goldsmith, Bahai" in amplifier
    # only sections that cite a source: the listing is not every section of the tree
    assert len(lines) - 1 == len(sourced_sections())
    assert all(not line.split()[0].startswith("run") for line in lines[1:])


def test_the_whole_listing_has_every_topic_once(capsys):
    assert main(["list"]) == 0
    heads = [line for line in capsys.readouterr().out.splitlines() if not line.startswith(" ")]
    assert heads == [f"{topic}:" for topic in TOPICS]
    assert len(set(heads)) == len(heads)
