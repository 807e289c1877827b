"""The generated reference and the command-line page say what the code does.

* docs/reference.md repeats no heading and no place (``At ...``), cuts no kind's
  description mid-sentence, and gives every physical field a unit;
* the checks above also run on pages built to fail them, so they can fail;
* docs/command-line.md's synopsis is the one argparse's parsers give (options, their
  values and choices, which repeat and how).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: parts of a field's name that make it a physical quantity, which needs a unit
PHYSICAL = re.compile(r"(^|_)(speed|power|distance|delay|energy|bandwidth|radius|height|"
                      r"duration|interval|deadline|density|kappa|cycles|noise_var)(_|$)"
                      r"|_(s|m|j|w|h|hz|db|dbm|bps|bits|bytes|mps|per_s|per_m2)$")
#: what a complete description ends with
SENTENCE_END = (".", ")", "!", "?", "`")


def reference_text() -> str:
    return (DOCS / "reference.md").read_text(encoding="utf-8")


def repeated_headings(page: str) -> list[str]:
    headings = re.findall(r"^(#{1,6} .+)$", page, re.M)
    return sorted({h for h in headings if headings.count(h) > 1})


def repeated_places(page: str) -> list[str]:
    """Places that an ``At`` line names twice (a section found at two places is listed
    once, with both)."""
    bad = []
    for line in re.findall(r"^At (.+)\.$", page, re.M):
        places = re.findall(r"`([^`]+)`", line)
        bad += [p for p in set(places) if places.count(p) > 1]
    return sorted(set(bad))


def cut_descriptions(page: str) -> list[str]:
    """Kinds whose description (the paragraph below its ``####`` heading) does not end a
    sentence."""
    cut = []
    for heading, body in re.findall(r"^(#### .+)\n\n(.*?)\n\n", page, re.M | re.S):
        if body.startswith("|"):
            continue  # no description: the table follows at once
        if not body.rstrip().endswith(SENTENCE_END):
            cut.append(f"{heading}: {body[-60:]!r}")
    return cut


def fields_without_units(page: str) -> list[str]:
    """Number fields whose name makes them physical but whose unit cell is empty."""
    missing = []
    for name, tp, unit in re.findall(r"^\| `(\w+)` \| ([^|]+) \| [^|]* \| ([^|]*) \|",
                                     page, re.M):
        if ("number" in tp or "integer" in tp) and PHYSICAL.search(name) and not unit.strip():
            missing.append(name)
    return sorted(set(missing))


def test_the_reference_repeats_no_heading_or_place():
    page = reference_text()
    assert repeated_headings(page) == []
    assert repeated_places(page) == []


def test_the_reference_cuts_no_description_mid_sentence():
    page = reference_text()
    assert cut_descriptions(page) == []
    assert re.search(r"#### macs: `scripted`\n\n[^\n]*seconds after the round opens", page)


def test_every_physical_field_has_a_unit():
    page = reference_text()
    assert fields_without_units(page) == []
    row = re.search(r"^\| `speed_mps` \|.*$", page, re.M)
    assert row is not None and "| m/s |" in row.group(0)


def test_the_downlinks_default_is_shown_as_network_makes_it():
    from simfl.core.config.network import Network

    rate = Network().downlink.rate
    row = re.search(r"^\| `downlink` \|.*$", reference_text(), re.M)
    assert row is not None and f"`{rate.to_dict()['rate_bps']!r}`" in row.group(0), row


def test_the_checks_fail_on_pages_built_to_fail_them():
    page = ("### Channel\n\nAt `network.uplink.distance`, `network.uplink.distance`.\n\n"
            "### Channel\n\n#### macs: `scripted`\n\nScripted access: client c may transmit "
            "after the\n\n| field | type | default | unit | allowed |\n|---|---|---|---|---|\n"
            "| `speed_mps` | number | `1.0` |  | a number >= 0 |\n"
            "| `access_prob` | number | `0.1` |  | a probability |\n")
    assert repeated_headings(page) == ["### Channel"]
    assert repeated_places(page) == ["network.uplink.distance"]
    assert len(cut_descriptions(page)) == 1
    assert fields_without_units(page) == ["speed_mps"]


# ---------------------------------------------------------------------------------
# docs/command-line.md against argparse


def option_text(action: argparse.Action) -> str:
    """How a synopsis writes one argument of a parser."""
    if not action.option_strings:  # a positional
        name = action.metavar or action.dest.upper()
        if action.nargs == "+":
            return f"{name} [{name} ...]"
        return f"[{name}]" if action.nargs == "?" else str(name)
    flag = max(action.option_strings, key=len)
    if action.nargs == 0:
        return f"[{flag}]"
    value = "|".join(map(str, action.choices)) if action.choices else (
        action.metavar or action.dest.upper())
    if isinstance(action, argparse._ExtendAction) or action.nargs == "+":
        return f"[{flag} {value} ...]"
    if isinstance(action, argparse._AppendAction):
        return f"[{flag} {value}]..."
    return f"[{flag} {value}]"


def argparse_synopses() -> dict[str, str]:
    from simfl.cli.parser import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    lines = {}
    for name, command in sub.choices.items():
        parts = [option_text(a) for a in command._actions
                 if not isinstance(a, argparse._HelpAction)]
        lines[name] = " ".join(["simfl", name, *parts])
    return lines


def documented_synopses() -> dict[str, str]:
    """The first fenced block of docs/command-line.md, continuation lines joined."""
    page = (DOCS / "command-line.md").read_text(encoding="utf-8")
    block = re.search(r"```\n(.*?)```", page, re.S)
    assert block is not None, "docs/command-line.md starts without its synopsis block"
    lines: dict[str, str] = {}
    last = None
    for line in block.group(1).splitlines():
        if line.startswith("simfl ") and not line.startswith("simfl --"):
            last = line.split()[1]
            lines[last] = " ".join(line.split())
        elif line.startswith(" ") and last is not None:
            lines[last] += " " + " ".join(line.split())
    return lines


def test_the_synopsis_of_each_command_is_argparses():
    documented = documented_synopses()
    for name, expected in argparse_synopses().items():
        assert documented.get(name) == expected, (
            f"docs/command-line.md's `simfl {name}` line differs from its parser:\n"
            f"  docs:     {documented.get(name)}\n  argparse: {expected}")
    assert set(documented) <= set(argparse_synopses())


def test_the_synopsis_check_sees_a_missing_choice():
    from simfl.cli.parser import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    unit = next(a for a in sub.choices["plot"]._actions if "--unit" in a.option_strings)
    assert option_text(unit) == "[--unit s|min|h|days]"
    label = next(a for a in sub.choices["plot"]._actions if "--label" in a.option_strings)
    assert option_text(label).endswith("...]")  # several values after one --label


def quiet_runs_shown_silent(text: str) -> list[str]:
    """``$ simfl run ... --quiet`` lines of console blocks followed by no output line
    (``--quiet`` drops the progress bar only: the summary line stays)."""
    silent = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        lines = block.splitlines()
        for line, following in zip(lines, lines[1:] + ["$"]):
            if re.match(r"\$ simfl (run|resume) .*--quiet", line) and following.startswith("$"):
                silent.append(line)
    return silent


@pytest.mark.parametrize("page", ["README.md", *sorted(f"docs/{p.name}" for p in DOCS.glob("*.md"))])
def test_a_quiet_run_is_shown_with_its_summary_line(page):
    assert quiet_runs_shown_silent((ROOT / page).read_text(encoding="utf-8")) == []
    assert quiet_runs_shown_silent("```console\n$ simfl run q --quiet\n$ ls\n```\n") == [
        "$ simfl run q --quiet"]


def test_simfl_list_cuts_no_description(capsys):
    """Each kind's line of ``simfl list`` ends a sentence (a docstring whose first line
    stops mid-sentence is shown up to the end of its first paragraph)."""
    from simfl.cli import main

    assert main(["list"]) == 0
    cut = []
    for line in capsys.readouterr().out.splitlines():
        text = re.sub(r"  \[.*\]$", "", line.rstrip())  # the paper cited at the end
        if line.startswith("  ") and not text.endswith((".", ")", "!", "?")):
            cut.append(text)
    assert cut == []
