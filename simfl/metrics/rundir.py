"""The run directory: every file written atomically (temporary file, then rename)."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

ROUND_COLUMNS = ("round", "t_open_s", "t_close_s", "n_available", "n_selected", "n_received",
                 "n_late", "n_erased", "n_collided", "n_battery", "n_offline", "retries",
                 "energy_j", "trained_updates", "aggregated_updates")
EVAL_COLUMNS = ("t_s", "round", "accuracy", "loss")
EVENT_COLUMNS = ("t_s", "kind", "round", "client", "detail")


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that readers see the old or the new file, never half."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def csv_text(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue()


def write_json(path: Path, data: Any) -> None:
    write_atomic(path, json.dumps(data, indent=2, sort_keys=False) + "\n")


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def fresh_run_dir(base: Path) -> Path:
    """``base`` itself if unused, else ``base_2``, ``base_3``...: never overwrite a run."""
    candidate, n = base, 1
    while candidate.exists() and any(candidate.iterdir()):
        n += 1
        candidate = base.with_name(f"{base.name}_{n}")
    candidate.mkdir(parents=True, exist_ok=True)
    return candidate
