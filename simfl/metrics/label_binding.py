"""``simfl plot --label``: legend labels bound to lines by what the user named, never by
the order in which folders happen to sort.

Two forms, not mixed:

- ``LINE=TEXT`` names one line: ``LINE`` is a DIR as given, a run folder (its path or
  its name, with or without its seed part: ``mac=csma_ca,seed=1`` or ``mac=csma_ca``),
  or the line's automatic label or some of its ``KEY=VALUE`` items (``mac=ofdma`` for
  ``mac=ofdma, scheduler=proportional_fair``). Lines not named keep their automatic
  label.
- Plain ``TEXT`` labels are bound to the DIRs in the order they were given: one per
  line, or one per DIR (DIRs that are one line must then agree). A DIR that holds
  several lines (a campaign) cannot take labels by order, since the order of its lines
  is only the order of their folder names: name them with ``LINE=TEXT``.

A label that holds ``=`` is ``LINE=TEXT`` only when what precedes an ``=`` names a line;
otherwise it is plain text (``p=0.1`` is a fine label).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

from simfl.core.errors import ConfigError
from simfl.metrics.run_folders import Run

#: a seed part of a run folder's name (``_seed3``, ``,seed=3``)
SEED_PART = re.compile(r"[_,-]?seed=?\d+")


def _names(group: Sequence[Run], auto: str, whole_dirs: Sequence[str]) -> set[str]:
    names = {auto, *whole_dirs, *(d.rstrip("/") for d in whole_dirs)}
    for run in group:
        names.update({str(run.path), run.path.name, SEED_PART.sub("", run.path.name),
                      str(run.path.resolve())})
    return {n for n in names if n}


def _dir_groups(dirs: Sequence[str], dir_runs: Sequence[Sequence[Path]],
                group_of: dict[Path, int]) -> list[list[int]]:
    """For each DIR, the lines its runs belong to, in order."""
    return [list(dict.fromkeys(group_of[Path(p).resolve()] for p in runs))
            for runs in dir_runs]


def bind_labels(dirs: Sequence[str], dir_runs: Sequence[Sequence[Path]],
                groups: Sequence[Sequence[Run]], auto: Sequence[str],
                labels: Sequence[str]) -> list[str]:
    """One label per line (``groups``) from the ``--label`` values ``labels``.

    Parameters
    ----------
    dirs, dir_runs:
        The DIRs as given, and the run folders each one stands for.
    groups, auto:
        The lines (runs that differ only by seed) and their automatic labels.

    Raises
    ------
    ConfigError
        A count that matches neither the lines nor the DIRs, a DIR of several lines
        given labels by order, a line named twice, or a mix of both forms.
    """
    group_of = {run.path.resolve(): i for i, group in enumerate(groups) for run in group}
    per_dir = _dir_groups(dirs, dir_runs, group_of)
    whole = [[d for d, lines in zip(dirs, per_dir) if lines == [i]] for i in range(len(groups))]
    names = [_names(g, a, w) for g, a, w in zip(groups, auto, whole)]
    items = [set(a.split(", ")) for a in auto]
    bound = [_bound(text, names, items) for text in labels]
    if any(b is not None for b in bound):
        if not all(b is not None for b in bound):
            plain = [t for t, b in zip(labels, bound) if b is None]
            raise ConfigError("--label", plain, f"LINE=TEXT like the others, where LINE is a "
                              f"line's label or part of it ({'; '.join(auto)}) or a run "
                              f"folder's name")
        result = list(auto)
        named: dict[int, str] = {}
        for text, b in zip(labels, bound):
            assert b is not None
            line, label = b
            if line in named:
                raise ConfigError("--label", text, f"one label per line ({auto[line]!r} is "
                                  f"already named {named[line]!r})")
            named[line] = label
            result[line] = label
        return result
    return _by_order(dirs, per_dir, auto, list(labels))


def _bound(text: str, names: Sequence[set[str]],
           items: Sequence[set[str]]) -> tuple[int, str] | None:
    """``(line, TEXT)`` when ``text`` is ``LINE=TEXT`` naming exactly one line (the
    longest LINE that does wins), else None. LINE names a line by one of its ``names``,
    or by some of the ``KEY=VALUE`` items of its automatic label (``mac=ofdma`` for
    ``mac=ofdma, scheduler=proportional_fair``)."""
    cuts = [i for i, c in enumerate(text) if c == "="]
    for cut in reversed(cuts):
        key = text[:cut]
        hits = [i for i, n in enumerate(names) if key in n or key.rstrip("/") in n
                or _resolved(key) in n]
        if not hits and "=" in key:
            hits = [i for i, own in enumerate(items) if set(key.split(", ")) <= own]
        if len(hits) == 1:
            return hits[0], text[cut + 1:]
        if len(hits) > 1:
            raise ConfigError("--label", text, f"a LINE naming one line ({key!r} names "
                              f"{len(hits)}: give one of its run folders or its label)")
    return None


def _resolved(key: str) -> str:
    try:
        return str(Path(key).resolve())
    except (OSError, RuntimeError, ValueError):
        return key


def _by_order(dirs: Sequence[str], per_dir: Sequence[list[int]], auto: Sequence[str],
              labels: list[str]) -> list[str]:
    """Plain labels bound to the DIRs in the order given."""
    n_lines = len(auto)
    kept = [(d, lines) for d, lines in zip(dirs, per_dir) if lines]  # not only unfinished runs
    dirs, per_dir = [d for d, _ in kept], [lines for _, lines in kept]
    if len(labels) not in (n_lines, len(dirs)):
        raise ConfigError("--label", labels, f"{n_lines} labels, one per line in order: "
                          f"{'; '.join(auto)} (or LINE=TEXT for each line)")
    several = [(d, lines) for d, lines in zip(dirs, per_dir) if len(lines) > 1]
    if several:
        folder, lines = several[0]
        raise ConfigError("--label", labels, f"labels bound to lines, since {folder} holds "
                          f"{len(lines)} lines whose order is only that of their folder names: "
                          f"--label LINE=TEXT for each (LINE one of: "
                          f"{'; '.join(auto[i] for i in lines)})")
    if len(labels) == n_lines:
        return labels  # every DIR is one line: lines are in the order of the DIRs
    result: dict[int, str] = {}
    for folder, (line,), label in zip(dirs, per_dir, labels):
        if result.setdefault(line, label) != label:
            raise ConfigError("--label", labels, f"one label per line: {folder} is on the "
                              f"line of {auto[line]!r} (its runs differ only by seed), "
                              f"already labelled {result[line]!r}")
    return [result[i] for i in range(n_lines)]
