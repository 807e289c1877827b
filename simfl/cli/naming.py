"""The folder ``simfl run`` writes when no ``--out`` is given: ``runs/NAME_seedN``, with
the values set on the command line between them (``runs/cvar_alpha=1.0_seed11``), or
``runs/RUN_NAME`` for ``--name RUN_NAME``.

A set value is shown by its key's last dotted part (more parts when two keys end alike,
as a campaign's run folders do), in the characters a folder name may hold; a name
longer than a campaign's run folder names is cut and ends with a hash of the values.
``name`` and ``seed`` are left out: they are the name's two ends already.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from simfl.campaign.grid import FOLDER_CHARS, MAX_FOLDER_CHARS, short_keys, value_text
from simfl.core.errors import ConfigError

#: what ``--name`` may be: one plain folder name, not starting with a dot
RUN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=,@-]*")
#: the keys a folder name shows in another place (its start and its end)
SHOWN_APART = ("name", "seed")


def labelled_name(scenario_name: str, overrides: list[tuple[str, Any]], seed: int) -> str:
    """``NAME_key=value_..._seedN`` for the overrides given (the last of a key wins)."""
    values = {key: value for key, value in overrides if key not in SHOWN_APART}
    short = short_keys(list(values))
    label = FOLDER_CHARS.sub("_", "_".join(f"{short[k]}={value_text(v)}"
                                           for k, v in values.items()))
    stem = f"{scenario_name}_{label}" if label else scenario_name
    if len(stem) > MAX_FOLDER_CHARS:
        digest = hashlib.sha256(label.encode("utf-8", "replace")).hexdigest()[:8]
        stem = f"{stem[:MAX_FOLDER_CHARS - 9]}@{digest}"
    return f"{stem}_seed{seed}"


def checked_name(name: str) -> str:
    """``--name``: one plain folder name, or a :class:`ConfigError`."""
    if (len(name) > MAX_FOLDER_CHARS or RUN_NAME.fullmatch(name) is None
            or ".." in name):
        raise ConfigError("--name", name, f"a folder name of 1 to {MAX_FOLDER_CHARS} letters, "
                          "digits or _ - . + = , @, not starting with a dot, without '..' or "
                          "path separators (choose any folder with --out)")
    return name


def run_out_dir(out: str | None, name: str | None, scenario_name: str,
                overrides: list[tuple[str, Any]], seed: int) -> Path:
    """The folder a run is claimed in (a taken one gets ``_2``, ``_3``... when claimed)."""
    if out is not None and name is not None:
        raise ConfigError("--name", name, "--name or --out, not both (--out names the "
                          "folder itself)")
    if out is not None:
        if out.strip() == "" or "\0" in out:
            raise ConfigError("--out", out, "the path of a run folder (not empty)")
        return Path(out)
    if name is not None:
        return Path("runs") / checked_name(name)
    return Path("runs") / labelled_name(scenario_name, overrides, seed)
