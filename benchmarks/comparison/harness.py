"""The parent side of the timing harness: each arm runs in a child process of its own
(pinned to one core where asked), whose whole process tree's peak resident memory is
polled from /proc."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

#: the benchmarks folder (where the child imports this package from) and the checkout
HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parent


def _tree_rss_b(root: int) -> int:
    """Resident memory of ``root`` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry)
        children.setdefault(int(fields[1]), []).append(pid)  # fields[1] is the parent pid
        rss[pid] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")  # resident pages
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


def run_arm(spec: dict, timeout_s: float) -> dict:
    """Run one arm in a child process; add its peak process-tree memory."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(HERE), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-c", "import sys; from comparison.worker import worker; worker(sys.argv[1:])", json.dumps(spec)]
    if spec.get("core") is not None and shutil.which("taskset"):
        cmd = ["taskset", "-c", str(spec["core"])] + cmd  # pinned to one core
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    peak = [0]
    done = threading.Event()

    def poll() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], _tree_rss_b(proc.pid))

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        stdout, stderr = proc.communicate()
        return {"error": f"timed out after {timeout_s:.0f} s"}
    finally:
        done.set()
        poller.join()
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (stderr or stdout).strip().splitlines()[-3:]
        return {"error": f"exit {proc.returncode}: " + " | ".join(tail)}
    out = json.loads(lines[-1])
    out["peak_b"] = max(peak[0], out["self_max_rss_b"])
    return out
