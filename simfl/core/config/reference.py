"""docs/reference.md, generated from the scenario's config classes.

Every section and every registered kind is walked from :class:`Scenario`: each field
with its type, its default, the unit its name carries and the values it accepts. The
accepted values are not written by hand: each number field is built once with -1 and
once with a huge value, and the message of the :class:`ConfigError` that the class's
own checks raise says what it allows. Only simfl's own kinds are listed (a plug-in's
are not). Regenerate the page with ``python -m simfl.core.config.reference --write``.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal

from simfl.core.config.node import Choice, Node, field_types
from simfl.core.config.scenario import Scenario
from simfl.core.errors import ConfigError

#: the page this module writes, relative to the repository root
PAGE = Path("docs") / "reference.md"
#: the command that regenerates it
COMMAND = "python -m simfl.core.config.reference --write"

#: units read from the end of a field's name, longest first
_UNITS = (("_j_per_bit", "J/bit"), ("_per_m2", "1/m²"), ("_per_s", "1/s"), ("_bps", "bit/s"),
          ("_bytes", "bytes"), ("_bits", "bits"), ("_hour", "h"), ("_dbm", "dBm"),
          ("_db", "dB"), ("_mps", "m/s"), ("_h", "h"), ("_hz", "Hz"), ("_s", "s"),
          ("_j", "J"), ("_w", "W"), ("_m", "m"))
#: units of physical fields whose names do not end in one
_NAMED_UNITS = {"Compute.cycles_per_sample": "CPU cycles per sample",
                "Compute.kappa": "J/(cycle·Hz²) (effective capacitance)",
                "AirComp.power": "relative (1: the clients' tx_power_dbm)",
                "PolynomialLr.power": "exponent (no unit: not a power in watts)",
                "AirComp.noise_var": "relative (1: the band's thermal noise)",
                "FedCS.deadline_fraction": "fraction of server.deadline_s"}
_PROBES: dict[Any, tuple[Any, ...]] = {int: (-1, 2**62), float: (-1.0, 1e300)}


def unit(name: str, owner: str = "") -> str:
    """The unit a field's name ends in (``deadline_s``: s), or that a physical field
    without one is measured in (``Compute.kappa``: its class's name, a dot and its
    own), or an empty string."""
    return _NAMED_UNITS.get(f"{owner}.{name}") or next(
        (u for suffix, u in _UNITS if name.endswith(suffix)), "")


def description(cls: type) -> str:
    """The first paragraph of a class's docstring on one line (a description that runs
    over several lines is kept whole, never cut at the end of its first line)."""
    doc = (cls.__doc__ or "").strip()
    return " ".join(doc.split("\n\n")[0].split())


def _options(tp: Any) -> tuple[Any, ...]:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return typing.get_args(tp)
    return (tp,)


def type_text(tp: Any) -> str:
    """A field's type in words."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_text(a) for a in typing.get_args(tp))
    if origin is Literal:
        return " / ".join(f"`{a}`" for a in typing.get_args(tp))
    if origin is tuple:
        return f"list of {type_text(typing.get_args(tp)[0])}"
    if tp is type(None):
        return "null"
    if isinstance(tp, type) and issubclass(tp, Choice):
        return f"kind ({tp._registry.point})"
    if isinstance(tp, type) and issubclass(tp, Node):
        return "section"
    return {float: "number", int: "integer", bool: "boolean", str: "string"}.get(tp, str(tp))


def _value_text(value: Any) -> str:
    if isinstance(value, Choice):
        changed = _changed(value)
        return f"`{value.kind}`" + (f" ({', '.join(changed)})" if changed else "")
    if isinstance(value, Node):
        return "(section)"
    if isinstance(value, tuple):  # a list of sections (a hierarchy's backhaul) as tables
        value = [v.to_dict() if isinstance(v, Node) else v for v in value]
    return f"`{json.dumps(value)}`"


def _changed(value: Node) -> list[str]:
    """The fields of a default section that differ from its kind's own defaults, as
    ``key = value`` (the downlink's ``rate.rate_bps`` when its default is not the rate's),
    so that a default is shown as it is, not as the kind alone would make it."""
    try:
        own = type(value)().to_dict()
    except Exception:
        return []

    def leaves(tree: Any, prefix: str = "") -> dict[str, Any]:
        if isinstance(tree, dict):
            return {k: v for key, sub in tree.items() for k, v in
                    leaves(sub, f"{prefix}{key}.").items()}
        return {prefix[:-1]: tree}

    mine, theirs = leaves(value.to_dict()), leaves(own)
    return [f"`{k}` = `{json.dumps(v)}`" for k, v in mine.items()
            if k not in theirs or theirs[k] != v]


def allowed(cls: type[Node], name: str, tp: Any) -> str:
    """What the class's checks say about ``name`` when given -1 and a huge number."""
    numeric = [t for t in _options(tp) if t in _PROBES]
    if not numeric:
        return ""
    said: list[str] = []
    for probe in _PROBES[numeric[0]]:
        try:
            cls(**{name: probe})
        except ConfigError as err:
            if err.field == name and err.allowed not in said:
                said.append(err.allowed)
        except Exception:  # another rule tripped first: nothing learnt from this probe
            continue
    return "; ".join(said)


def _rows(cls: type[Node]) -> list[str]:
    try:
        instance: Node | None = cls()
    except Exception:
        instance = None
    derived: frozenset[str] = getattr(instance, "_derived", frozenset())
    rows = []
    for f in dataclasses.fields(cls):
        tp = field_types(cls)[f.name]
        if instance is not None:
            default = _value_text(getattr(instance, f.name))
            if f.name in derived:
                default += " (derived)"
        elif f.default is not dataclasses.MISSING:
            default = _value_text(f.default)
        else:
            default = "(required)"
        text = allowed(cls, f.name, tp).replace("|", "\\|")
        rows.append(f"| `{f.name}` | {type_text(tp)} | {default} | "
                    f"{unit(f.name, cls.__name__)} | {text} |")
    return rows


def _table(cls: type[Node]) -> list[str]:
    if not dataclasses.fields(cls):
        return ["No fields."]
    return ["| field | type | default | unit | allowed |", "|---|---|---|---|---|", *_rows(cls)]


def _own(cls: type) -> bool:
    """Whether ``cls`` is one of simfl's own kinds (not a plug-in's or a script's)."""
    return cls.__module__.startswith("simfl.core.")


def _walk(cls: type[Node], path: str, sections: dict[type[Node], list[str]],
          points: dict[type[Choice], list[str]], within: tuple[type, ...] = ()) -> None:
    """Record where each section and extension point is found below ``cls`` at ``path``:
    every path once (two kinds of one point that share a field add it once), and each
    place walked in full (``network.downlink``'s fields as well as ``network.uplink``'s);
    a class already being walked above is not entered again."""
    for name, tp in field_types(cls).items():
        for option in _options(tp):
            if typing.get_origin(option) is tuple:  # a list of sections: each one's fields
                option = typing.get_args(option)[0]
            if not (isinstance(option, type) and issubclass(option, Node)):
                continue
            where = f"{path}.{name}" if path else name
            if issubclass(option, Choice):
                found = points.setdefault(option, [])
                if where in found or option in within:
                    continue
                found.append(where)
                for entry in option._registry:
                    if _own(entry.obj):
                        _walk(entry.obj, where, sections, points, (*within, option))
            else:
                found = sections.setdefault(option, [])
                if where in found or option in within:
                    continue
                found.append(where)
                _walk(option, where, sections, points, (*within, option))


def section_paths() -> dict[type[Node], list[str]]:
    """Every section class of the scenario tree (not the kinds of an extension point) and
    the paths it is found at, in the order of the tree (the scenario itself at "")."""
    sections: dict[type[Node], list[str]] = {Scenario: [""]}
    _walk(Scenario, "", sections, {})
    return sections


def reference() -> str:
    """The whole page, as Markdown."""
    sections: dict[type[Node], list[str]] = {Scenario: [""]}
    points: dict[type[Choice], list[str]] = {}
    _walk(Scenario, "", sections, points)
    out = ["# Scenario reference", "",
           f"Generated from simfl's config classes by `{COMMAND}`; do not edit by hand. "
           "Every field of every section and every registered kind: its type, default, "
           "the unit its name carries, and what the class's own checks allow for a "
           "number (found by building the class with -1 and with a huge value; an empty "
           "cell: no bound found that way). A `(derived)` default is computed from other "
           "fields when left unset. Every number must also be finite unless its "
           "description says otherwise. `simfl validate SCENARIO` prints a scenario with "
           "every field resolved; `simfl list` describes every kind.", "", "## Sections", ""]
    for cls, paths in sections.items():
        title = "the scenario itself" if paths == [""] else ", ".join(f"`{p}`" for p in paths)
        out += [f"### {cls.__name__}", "", f"At {title}.", "", *_table(cls), ""]
    out += ["## Kinds", "", "A field that takes a kind is set by name "
            "(`--set network.uplink=erasure`) or as a table with `kind` and that kind's "
            "fields.", ""]
    for base, paths in points.items():
        point = base._registry.point
        out += [f"### {point}", "", "At " + ", ".join(f"`{p}`" for p in paths) + ".", ""]
        for entry in base._registry:
            if not _own(entry.obj):
                continue
            text = description(entry.obj)
            out += [f"#### {point}: `{entry.name}`", "", *([text, ""] if text else []),
                    *_table(entry.obj), ""]
    return "\n".join(line.rstrip() for line in out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the page, or with ``--write`` write it to :data:`PAGE` under the current
    folder (the repository root)."""
    args = sys.argv[1:] if argv is None else argv
    page = reference()
    if "--write" in args:
        PAGE.write_text(page, encoding="utf-8")
        print(f"wrote {PAGE}")
    else:
        sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
