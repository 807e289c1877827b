"""A loaded checkpoint checked against the run it is to continue, before any of it is used.

The run's freshly built state is the template: the model side's snapshot gives every
tensor's shape and dtype, every record's class and every field's type; the checkpoint
must match it wherever the template has a value (a model-shaped dict anywhere else must
match the model), hold no NaN or infinite tensor, and carry a journal, a fingerprint and
recorder totals of the right kinds. A resumed run touches no file before this passed.
:func:`saved_scenario` reads the scenario a run folder was started with.
"""

from __future__ import annotations

import dataclasses
import json
import numbers
from pathlib import Path
from typing import Any, Collection, Sequence

import numpy as np

from simfl.core.config import Scenario
from simfl.core.config.code_refs import check_saved_code
from simfl.core.errors import SimflError
from simfl.experiment.checkpoint_codec import CheckpointError

TOP = ("format", "simfl", "scenario", "rounds_done", "fingerprint", "journal", "trainer",
       "recorder")
RECORDER = ("sizes", "eval_rows", "final_accuracy", "best_accuracy", "time_to_target_s")
FORMAT = 1


def _bad(path: str, what: str) -> CheckpointError:
    return CheckpointError(f"the checkpoint's {path} {what}: it does not belong to this run")


def _keys(value: Any, keys: Sequence[str], path: str) -> None:
    if not isinstance(value, dict) or set(value) != set(keys):
        found = sorted(map(str, value)) if isinstance(value, dict) else type(value).__name__
        raise _bad(path, f"must have the keys {sorted(keys)}, not {found}")


def _real(value: Any) -> bool:
    return isinstance(value, (numbers.Real, np.integer, np.floating)) and \
        not isinstance(value, (bool, np.bool_))


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_top(saved: dict[str, Any], rounds_done: int, max_rounds: int | None) -> int:
    """The checkpoint's keys, format and ``rounds_done`` (``rounds_done`` is the round
    its folder is named after); returns it."""
    _keys(saved, TOP, "state")
    if type(saved["format"]) is not int or saved["format"] != FORMAT or not isinstance(saved["simfl"], str) \
            or not isinstance(saved["scenario"], str):
        raise _bad("state", f"must be format {FORMAT} with the simfl version and scenario hash")
    done = saved["rounds_done"]
    if not _count(done) or done != rounds_done or (max_rounds is not None and done > max_rounds):
        raise _bad("rounds_done", f"= {done!r} is not the round its folder is named after "
                   f"({rounds_done}, of at most {max_rounds} rounds)")
    return done


def check_state(saved: dict[str, Any], live_fingerprint: dict[str, Any],
                live_trainer: dict[str, Any], n_clients: int, eval_width: int,
                tables: Sequence[str]) -> None:
    """Fingerprint, journal, model side and recorder against the live run."""
    _keys(saved["fingerprint"], list(live_fingerprint), "fingerprint")
    for key, value in saved["fingerprint"].items():
        if not _real(value):
            raise _bad(f"fingerprint[{key!r}]", f"= {value!r} is not a number")
    _check_journal(saved["journal"], saved["rounds_done"], n_clients)
    _keys(saved["trainer"], list(live_trainer), "trainer")
    params = live_trainer.get("params")
    _Template(params if isinstance(params, dict) else {})(saved["trainer"], live_trainer,
                                                          "trainer")
    recorder = saved["recorder"]
    _keys(recorder, RECORDER, "recorder")
    _keys(recorder["sizes"], tables, "recorder sizes")
    for name, size in recorder["sizes"].items():
        if size is not None and not _count(size):
            raise _bad(f"size of {name}", f"= {size!r} is not a byte count")
    rows = recorder["eval_rows"]
    if not isinstance(rows, list) or len(rows) > 1 or not all(
            isinstance(r, tuple) and len(r) == eval_width and all(map(_real, r)) for r in rows):
        raise _bad("recorder eval_rows", f"must be at most one row of {eval_width} numbers")
    for key in RECORDER[2:]:
        if recorder[key] is not None and not _real(recorder[key]):
            raise _bad(f"recorder {key}", f"= {recorder[key]!r} is not a number")


def _check_journal(journal: Any, rounds_done: int, n_clients: int) -> None:
    if not isinstance(journal, list):
        raise _bad("journal", "must be a list")
    trains = 0
    for i, entry in enumerate(journal):
        kind = entry[0] if isinstance(entry, tuple) and entry else None
        if kind == "train" and len(entry) == 3 and _count(entry[1]) and _count(entry[2]):
            trains += 1
            continue
        if kind in ("losses", "features") and len(entry) == 2 and isinstance(
                entry[1], np.ndarray) and entry[1].ndim == (1 if kind == "losses" else 2) \
                and entry[1].dtype.kind in "fiu" and len(entry[1]) <= n_clients:
            continue
        raise _bad(f"journal entry {i}", "is not a (train, count, count) or a (losses or "
                   "features, array) entry")
    if trains != rounds_done:
        raise _bad("journal", f"records {trains} rounds, not {rounds_done}")


def _is_tensor(value: Any) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "detach")


def _is_record(value: Any) -> bool:
    return (dataclasses.is_dataclass(value) and not isinstance(value, type)) or (
        isinstance(value, tuple) and hasattr(value, "_fields"))


class _Template:
    """Matches a saved tree against the live one (see the module docstring)."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.params = params

    def __call__(self, saved: Any, live: Any, path: str) -> None:
        if live is None:
            if isinstance(saved, str):
                raise _bad(path, "is a string")
            self.loose(saved, path)
        elif _is_tensor(live):
            self.tensor(saved, live, path)
        elif isinstance(live, (np.ndarray, np.generic)):
            if type(saved) is not type(live) or saved.dtype != live.dtype or \
                    saved.shape != live.shape:
                raise _bad(path, f"must be a {live.dtype} array of shape {live.shape}")
        elif _is_record(live):
            if type(saved) is not type(live):
                raise _bad(path, f"must be a {type(live).__name__}")
            names = getattr(live, "_fields") if isinstance(live, tuple) else [
                f.name for f in dataclasses.fields(live)]
            for f in names:
                self(getattr(saved, f), getattr(live, f), f"{path}.{f}")
        elif isinstance(live, dict):
            if not isinstance(saved, dict):
                raise _bad(path, "must be a dict")
            if live and all(isinstance(k, str) for k in live):
                _keys(saved, list(live), path)
                for k, v in live.items():
                    self(saved[k], v, f"{path}[{k!r}]")
            else:
                self.loose(saved, path)
        elif isinstance(live, (list, tuple)):
            if type(saved) is not type(live):
                raise _bad(path, f"must be a {type(live).__name__}")
            if len(saved) == len(live):
                for i, (s, v) in enumerate(zip(saved, live)):
                    self(s, v, f"{path}[{i}]")
            else:
                self.loose(saved, path)
        elif not self.same_kind(saved, live):
            raise _bad(path, f"= {saved!r} is not a {type(live).__name__}")

    @staticmethod
    def same_kind(saved: Any, live: Any) -> bool:
        if isinstance(live, bool) or isinstance(saved, bool):
            return type(saved) is type(live)
        if isinstance(live, numbers.Real):
            return _real(saved) and (isinstance(live, float) or isinstance(saved, int))
        return type(saved) is type(live)

    def tensor(self, saved: Any, live: Any, path: str) -> None:
        import torch

        if not isinstance(saved, torch.Tensor) or saved.shape != live.shape or \
                saved.dtype != live.dtype:
            raise _bad(path, f"must be a {live.dtype} tensor of shape {tuple(live.shape)}")
        if saved.is_floating_point() and not bool(torch.isfinite(saved).all()):
            raise _bad(path, "holds NaN or infinite values")

    def loose(self, saved: Any, path: str) -> None:
        """Where the live state has no value to compare with: a dict shaped like the
        model must match it; every tensor must be finite."""
        if isinstance(saved, dict):
            if self.params and set(saved) == set(self.params):
                for k, v in self.params.items():
                    self.tensor(saved[k], v, f"{path}[{k!r}]")
                return
            for k, v in saved.items():
                self.loose(v, f"{path}[{k!r}]")
        elif dataclasses.is_dataclass(saved) and not isinstance(saved, type):
            for f in dataclasses.fields(saved):
                self.loose(getattr(saved, f.name), f"{path}.{f.name}")
        elif isinstance(saved, (list, tuple)):
            for i, v in enumerate(saved):
                self.loose(v, f"{path}[{i}]")
        elif _is_tensor(saved):
            import torch

            if saved.is_floating_point() and not bool(torch.isfinite(saved).all()):
                raise _bad(path, "holds NaN or infinite values")


def saved_scenario(run_dir: Path, named: Collection[str] = (), trust: bool = False) -> Scenario:
    """The scenario of the run in ``run_dir``, from its ``config.json``.

    Code it names (a factory, a loss) is imported only when ``named`` names it again or
    with ``trust`` (:func:`~simfl.core.config.code_refs.check_saved_code`), checked
    before anything is imported.
    """
    path = Path(run_dir) / "config.json"
    try:
        tree = json.loads(path.read_text(encoding="utf-8"))["scenario"]
        if not isinstance(tree, dict):
            raise TypeError(f"its scenario is a {type(tree).__name__}, not an object")
        check_saved_code(tree, str(path), Path(run_dir), named, trust,
                         "name it again with --set FIELD=VALUE")
        scenario = Scenario.from_dict(tree)
    except SimflError:
        raise
    except (OSError, ValueError, LookupError, TypeError, AttributeError, RecursionError) as err:
        raise CheckpointError(f"cannot read the scenario from {path}: "
                              f"{' '.join(str(err).split())[:200]}") from None
    assert isinstance(scenario, Scenario)
    return scenario
