"""The documentation under docs/ against the code it describes.

* every "§N" the code, tests, scenarios and README cite is a section of docs/algorithms.md;
* every relative link and anchor between the docs resolves;
* docs/run-directory.md names every column, outcome reason, event kind and summary field
  the code writes (event kinds are read from the source, so a new kind without a line
  in the docs fails here);
* FedLaAvg's Example 1 (docs/algorithms.md §5) through simfl's own aggregators: the
  period-boundary limit of FedAvg and the fixed point of FedLaAvg;
* every Python example of the README and docs/*.md runs as printed (all in one
  subprocess), and every `simfl run`, `validate` and `sweep` command of their shell
  examples names a scenario and overrides that validate;
* docs/reference.md is what its generator writes today.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
#: every page whose examples the tests run: the README and the docs
EXAMPLE_PAGES = [ROOT / "README.md", *PAGES]
#: Python examples not run here, by a string they contain, and why
NOT_RUN = {"dask_jobqueue": "needs a SLURM cluster",
           "simfl.sweep(": "ten runs; tests/test_campaign.py runs the sweep API"}


def text(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", page.read_text(), re.M)}


def algorithm_sections() -> set[str]:
    """Section numbers of docs/algorithms.md's headings: "1", "1.2", ..."""
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)[. ]", text("algorithms.md"), re.M))


def test_the_docs_exist_and_the_index_lists_them():
    names = {p.name for p in PAGES}
    assert {"README.md", "algorithms.md", "network-models.md", "run-directory.md"} <= names
    index = text("README.md")
    for name in names - {"README.md"}:
        assert f"({name})" in index, f"docs/README.md does not link {name}"


def test_every_cited_section_exists():
    sections = algorithm_sections()
    assert {"0.1", "1.1", "1.6", "2", "3", "4.5", "5", "6", "8.7"} <= sections
    numbered = {"algorithms.md", "network-models.md"}  # they cite their own sections
    files = [p for p in EXAMPLE_PAGES if p.name not in numbered] + [p for folder in ("simfl", "scenarios", "tests", "analysis")
                             for p in (ROOT / folder).rglob("*.py")]
    cited = {}
    for path in files:
        for number in re.findall(r"§(\d+(?:\.\d+)?)", path.read_text(encoding="utf-8")):
            cited.setdefault(number, path.relative_to(ROOT).as_posix())
    assert cited, "no section citations found"
    missing = {n: where for n, where in cited.items() if n not in sections}
    assert not missing, f"cited but not a section of docs/algorithms.md: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_and_anchors_resolve(page):
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f"{page.name}: broken link {target}"
        if anchor:
            assert anchor in anchors(dest), f"{page.name}: no anchor #{anchor} in {dest.name}"


def documented(name: str) -> set[str]:
    """Every name written in backticks on a docs page."""
    return set(re.findall(r"`([^`\s]+)`", text(name)))


def calls(source: str, opening: str) -> list[str]:
    """The argument text of every call that starts with ``opening`` (balanced parentheses)."""
    found = []
    for match in re.finditer(re.escape(opening), source):
        depth, end = 1, match.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(source[end], 0)
            end += 1
        found.append(source[match.end():end - 1])
    return found


def logged_event_kinds() -> set[str]:
    """The event kinds the simulator logs, read from its source."""
    from simfl.core.records import MISSING_REASONS, EventKind

    sim = "\n".join(p.read_text() for p in (ROOT / "simfl" / "sim").rglob("*.py"))
    kinds = set(re.findall(r"\blog\([^,()]+(?:\([^()]*\))?,\s*\"(\w+)\"", sim))
    kinds |= set(re.findall(r"\bEvent\([^,()]+(?:\([^()]*\))?,\s*\"(\w+)\"", sim))
    kinds |= set(re.findall(r"_missing\(sim, client, round, \"(\w+)\"", sim))
    suffixes = set(re.findall(r"f\"\{stream\}_(\w+)\"", sim))
    experiment = (ROOT / "simfl" / "experiment" / "probe.py").read_text()
    streams = {re.findall(r"\"(\w+)\"", call)[-1] for call in calls(experiment, "self._exchange(")}
    assert suffixes and streams, "query exchange event kinds not found in the source"
    kinds |= {f"{s}_{x}" for s in streams for x in suffixes}
    return kinds | set(MISSING_REASONS) | {kind.value for kind in EventKind}


def test_run_directory_names_every_column_reason_and_event_kind():
    from simfl.core.config import Battery, Energy
    from simfl.core.rng import RngTree
    from simfl.metrics.rundir import EVAL_COLUMNS, EVENT_COLUMNS, MAC_COLUMNS, ROUND_COLUMNS
    from simfl.metrics.recorder import TIER_COLUMNS
    from simfl.sim.energy.battery import Batteries

    names = documented("run-directory.md")
    clients = Batteries(2, Battery(), Energy(), RngTree(0)).table()
    kinds = logged_event_kinds()
    assert {"round_open", "arrived", "attempt_lost", "mac_slots", "battery_dead",
            "loss_query_open", "graph_lost", "late"} <= kinds
    expected = (set(ROUND_COLUMNS) | set(EVAL_COLUMNS) | set(EVENT_COLUMNS) | set(MAC_COLUMNS)
                | set(clients) | set(TIER_COLUMNS)
                | kinds | {"n_late_stored", "session"})
    assert not expected - names, f"not in docs/run-directory.md: {sorted(expected - names)}"


def test_run_directory_names_every_file_and_summary_field(tiny_scenario, tmp_path):
    from dataclasses import replace

    import simfl
    from simfl.experiment import run_scenario

    scenario = replace(tiny_scenario, run=simfl.Run(rounds=2, timing_only=True, events=True))
    result = run_scenario(scenario, tmp_path / "run")
    names = documented("run-directory.md")
    files = {p.name for p in result.out_dir.iterdir()}
    assert not files - names, f"files not in docs/run-directory.md: {files - names}"
    assert not set(result.summary) - names, (
        f"summary fields not in docs/run-directory.md: {set(result.summary) - names}")


def example_1(algorithm, rounds: int, gamma: float = 0.1) -> float:
    """Example 1 of docs/algorithms.md §5 through simfl's aggregator: f_i(x) = (x - e_i)^2,
    e = (0, 1), client 0 online 1 round then client 1 for 3, one exact gradient step."""
    import torch

    from simfl.algorithms import build_aggregator
    from simfl.core.records import Arrival, ClientUpdate, RoundOutcome

    targets = (0.0, 1.0)
    agg = build_aggregator(algorithm, gamma)
    x = {"w": torch.zeros(1, dtype=torch.float64)}
    state = agg.init(x, np.array([10, 10]))
    for r in range(rounds):
        i = 0 if r % 4 == 0 else 1
        delta = -gamma * 2.0 * (x["w"] - targets[i])
        outcome = RoundOutcome(round=r, t_open_s=float(r), t_deadline_s=r + 1.0,
                               t_close_s=r + 1.0, n_available=1, selected=(i,),
                               received=(Arrival(i, r, r + 0.5, 10),), missing=())
        x, state, _ = agg.aggregate(state, x, outcome, [ClientUpdate(i, r, 10, {"w": delta})])
    return float(x["w"][0])


def boundary_limit(gamma: float, t1: int = 1, t2: int = 3, e1: float = 0.0, e2: float = 1.0):
    q = 1.0 - 2.0 * gamma
    return (q ** t2 * (e1 - e2) + e2 - q ** (t1 + t2) * e1) / (1.0 - q ** (t1 + t2))


def test_example_1_limits_through_the_aggregators():
    from simfl.core.config.server import FedAvg, FedLaAvg

    assert boundary_limit(0.1) == pytest.approx(0.82655827, abs=1e-8)
    assert boundary_limit(0.05) == pytest.approx(0.271 / 0.3439, abs=1e-12)
    assert boundary_limit(1e-7) == pytest.approx(0.75, abs=1e-5)  # (t1 e1 + t2 e2)/(t1 + t2)
    fedavg = FedAvg(weighting="uniform")
    assert example_1(fedavg, 100) == pytest.approx(0.82655827, abs=1e-8)
    assert example_1(fedavg, 240, gamma=0.05) == pytest.approx(boundary_limit(0.05), abs=1e-8)
    assert example_1(FedLaAvg(), 400) == pytest.approx(0.5, abs=1e-8)
    assert not math.isclose(example_1(fedavg, 102), 0.5, abs_tol=0.1)  # it oscillates


def blocks(language: str) -> list[tuple[str, str]]:
    """(page name, code) of every fenced ``language`` block of the README and docs."""
    found = []
    for page in EXAMPLE_PAGES:
        for code in re.findall(rf"```{language}\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            found.append((page.relative_to(ROOT).as_posix(), code))
    return found


#: runs each example in a fresh namespace and folder, calling a ``scenario()`` it defines
RUNNER = """
import json, os, sys
examples = json.load(sys.stdin)
for i, code in enumerate(examples):
    os.makedirs(str(i)); os.chdir(str(i))
    space = {"__name__": "__main__"}
    exec(compile(code, f"example {i}", "exec"), space)
    if callable(space.get("scenario")):
        space["scenario"]()
    os.chdir("..")
    print(f"example {i} ran", flush=True)
"""


def test_every_python_example_runs(tmp_path):
    examples = [(page, code) for page, code in blocks("python")
                if not any(marker in code for marker in NOT_RUN)]
    names = {page for page, _ in examples}
    assert {"docs/extending.md", "docs/own-model.md", "docs/scenarios.md"} <= names
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ran = subprocess.run([sys.executable, "-c", RUNNER], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=600,
                         input=json.dumps([code for _, code in examples]))
    done = ran.stdout.count(" ran\n")
    assert ran.returncode == 0, f"{examples[done][0]}, example {done}: {ran.stderr[-2000:]}"
    assert done == len(examples)
    for i, (_, code) in enumerate(examples):
        if "class DampedMomentum" in code:  # the server optimiser ran and was recorded
            configs = list((tmp_path / str(i)).rglob("config.json"))
            assert len(configs) == 1
            optimizer = json.loads(configs[0].read_text())["scenario"]["server"]["optimizer"]
            assert optimizer == {"kind": "damped_momentum", "beta": 0.5, "lr": 0.7}
        if "class TanhNet" in code:  # the module's parameters are what was sent
            config = json.loads(next((tmp_path / str(i)).rglob("config.json")).read_text())
            assert config["scenario"]["task"]["model"] == {"kind": "tanh_net", "hidden": 32}
            assert config["model_bytes"] == 4 * (64 * 32 + 32 + 32 * 10 + 10)


def shell_commands() -> list[tuple[str, list[str]]]:
    """(page, argv) of every ``simfl run|validate|sweep`` line of the shell examples."""
    import shlex

    found = []
    for page, code in blocks("bash") + blocks("console"):
        for line in code.replace("\\\n", " ").splitlines():
            line = line.removeprefix("$ ").strip()
            for part in re.split(r"&&|;", line):
                argv = shlex.split(part, comments=True)
                if argv[:1] == ["simfl"] and argv[1:2] in (["run"], ["validate"], ["sweep"]):
                    found.append((page, argv))
    return found


def test_every_shell_command_validates():
    import simfl

    commands = shell_commands()
    assert len(commands) > 40
    for page, argv in commands:
        if any(".path=" in a for a in argv):
            continue  # names the reader's own files, which this machine may not have
        overrides = [argv[i + 1] for i, a in enumerate(argv) if a == "--set"]
        overrides += [argv[i + 1].split(",")[0] for i, a in enumerate(argv) if a == "--grid"]
        try:
            simfl.apply_overrides(simfl.load_scenario(argv[2]),
                                  [simfl.parse_override(o) for o in overrides])
        except Exception as err:
            raise AssertionError(f"{page}: {' '.join(argv)}: {err}") from None


def test_the_reference_is_current():
    from simfl.core.config.reference import COMMAND, PAGE, reference

    assert (ROOT / PAGE).read_text(encoding="utf-8") == reference(), (
        f"docs/reference.md is stale: regenerate it with `{COMMAND}` in the repository root")
