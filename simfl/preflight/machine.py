"""The memory this process can still use: the system's available memory, the cgroup's
limit and the process's own ``ulimit`` limits, read from ``/proc`` and ``/sys``."""

from __future__ import annotations

import math
import resource
from pathlib import Path


def available_memory() -> tuple[float, str]:
    """The memory this process can still use, in bytes, and where the limit comes from.

    The smallest of: the system's available memory (``MemAvailable``), the cgroup's
    limit less its usage, and the address-space or data-size limits (``ulimit -v``,
    ``ulimit -d``) less what the process already maps.
    """
    found: list[tuple[float, str]] = []
    meminfo = _read_kib_table(Path("/proc/meminfo"))
    if "MemAvailable" in meminfo:
        found.append((meminfo["MemAvailable"], "available system memory"))
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit, usage = _read_number(limit_file), _read_number(usage_file)
        if limit is not None and limit < 2**60:
            found.append((limit - (usage or 0), "the cgroup memory limit"))
    status = _read_kib_table(Path("/proc/self/status"))
    for rlimit, mapped, name in ((resource.RLIMIT_AS, "VmSize", "ulimit -v"),
                                 (resource.RLIMIT_DATA, "VmData", "ulimit -d")):
        soft, _ = resource.getrlimit(rlimit)
        if soft != resource.RLIM_INFINITY:
            found.append((soft - status.get(mapped, 0.0), f"the {name} limit"))
    if not found:
        return math.inf, "no limit found"
    free_bytes, source = min(found)
    return max(free_bytes, 0.0), source


def _read_kib_table(path: Path) -> dict[str, float]:
    """``Name: 123 kB`` lines as bytes."""
    table: dict[str, float] = {}
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return table
    for line in lines:
        name, _, rest = line.partition(":")
        words = rest.split()
        if len(words) == 2 and words[1] == "kB" and words[0].isdigit():
            table[name] = int(words[0]) * 1024.0
    return table


def _read_number(path: str) -> float | None:
    try:
        text = Path(path).read_text().strip()
    except OSError:
        return None
    return float(text) if text.isdigit() else None
