"""Checkpoints: a run's learning state at a round boundary, written safely and atomically.

A checkpoint lives in the run folder::

    checkpoint/LATEST               the name of the newest complete checkpoint
    checkpoint/round_000012/
        state.json                  the state as plain JSON, tensors and arrays by reference
        tensors.pt                  torch tensors (read back with ``weights_only=True``)
        arrays.npz                  numpy arrays (read back with ``allow_pickle=False``)

A checkpoint is written in a temporary folder, renamed into place, and only then named
in ``LATEST`` (replaced with :func:`os.replace`), so a process killed at any instant
leaves the previous checkpoint readable. Nothing is pickled: the state is a tree of
numbers, strings, lists, tuples, dicts, numpy arrays, torch tensors and dataclasses or
named tuples of the code already loaded; anything else is refused when saving, with
the path to the value that is not allowed.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np

from simfl.core.errors import SimflError

FOLDER = "checkpoint"
LATEST = "LATEST"
STATE, TENSORS, ARRAYS = "state.json", "tensors.pt", "arrays.npz"


class CheckpointError(SimflError):
    """A checkpoint that cannot be written, read, or used for this run."""


# ---- the tree codec ------------------------------------------------------------------

class _Encoder:
    def __init__(self) -> None:
        self.tensors: dict[str, Any] = {}
        self.arrays: dict[str, np.ndarray] = {}

    def __call__(self, value: Any, path: str) -> Any:
        if isinstance(value, (np.ndarray, np.generic)):  # first: np.float64 is a float
            if value.dtype.hasobject:
                raise CheckpointError(f"cannot checkpoint {path}: an array of Python objects")
            key = f"a{len(self.arrays)}"
            self.arrays[key] = np.asarray(value)
            return {"$array": key, "scalar": isinstance(value, np.generic)}
        if value is None or isinstance(value, (bool, int, str)):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else {"$float": repr(value)}
        if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
            key = f"t{len(self.tensors)}"
            self.tensors[key] = value.detach()
            return {"$tensor": key}
        if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
            return self._record(value, dict(zip(getattr(value, "_fields"), value)), path)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            return self._record(value, fields, path)
        if isinstance(value, list):
            return [self(v, f"{path}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, tuple):
            return {"$tuple": [self(v, f"{path}[{i}]") for i, v in enumerate(value)]}
        if isinstance(value, dict) and all(isinstance(k, str) and not k.startswith("$")
                                           for k in value):  # readable as a JSON object
            return {k: self(v, f"{path}[{k!r}]") for k, v in value.items()}
        if isinstance(value, dict):
            return {"$dict": [[self(k, f"{path} key"), self(v, f"{path}[{k!r}]")]
                              for k, v in value.items()]}
        raise CheckpointError(f"cannot checkpoint {path}: a {type(value).__name__} (checkpoints "
                              "hold numbers, strings, lists, dicts, arrays, tensors and "
                              "dataclasses of them)")

    def _record(self, value: Any, fields: dict[str, Any], path: str) -> dict[str, Any]:
        cls = type(value)
        return {"$record": f"{cls.__module__}:{cls.__qualname__}",
                "fields": {k: self(v, f"{path}.{k}") for k, v in fields.items()}}


def _record_class(name: str) -> type:
    """A dataclass or named tuple of a module already loaded; never imports anything."""
    module_name, _, qualname = name.partition(":")
    obj: Any = sys.modules.get(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if not isinstance(obj, type) or not (dataclasses.is_dataclass(obj) or
                                         (issubclass(obj, tuple) and hasattr(obj, "_fields"))):
        raise CheckpointError(f"the checkpoint names {name}, which is not a loaded dataclass")
    return obj


def _decode(node: Any, tensors: dict[str, Any], arrays: dict[str, np.ndarray]) -> Any:
    if isinstance(node, list):
        return [_decode(v, tensors, arrays) for v in node]
    if not isinstance(node, dict):
        return node
    if "$float" in node:
        return float(node["$float"])
    if "$array" in node:
        array = arrays[node["$array"]]
        return array[()] if node["scalar"] else array
    if "$tensor" in node:
        return tensors[node["$tensor"]]
    if "$tuple" in node:
        return tuple(_decode(v, tensors, arrays) for v in node["$tuple"])
    if "$dict" in node:
        return {_hashable(_decode(k, tensors, arrays)): _decode(v, tensors, arrays)
                for k, v in node["$dict"]}
    if "$record" in node:
        cls = _record_class(node["$record"])
        return cls(**{k: _decode(v, tensors, arrays) for k, v in node["fields"].items()})
    if any(k.startswith("$") for k in node):
        raise CheckpointError(f"unknown node in the checkpoint: {sorted(node)}")
    return {k: _decode(v, tensors, arrays) for k, v in node.items()}


def _hashable(key: Any) -> Any:
    return key.item() if isinstance(key, np.generic) else key


# ---- files ---------------------------------------------------------------------------

def save(run_dir: Path, rounds_done: int, state: dict[str, Any]) -> Path:
    """Write ``state`` as the checkpoint after ``rounds_done`` rounds; returns its folder."""
    encode = _Encoder()
    tree = encode(state, "state")
    root = Path(run_dir) / FOLDER
    name = f"round_{rounds_done:06d}"
    partial = root / f".{name}.partial"
    if partial.exists():
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    _write(partial / STATE, json.dumps(tree, allow_nan=False).encode("utf-8"))
    if encode.tensors:
        import torch

        with open(partial / TENSORS, "wb") as handle:
            torch.save(encode.tensors, handle)
            _sync(handle)
    if encode.arrays:
        with open(partial / ARRAYS, "wb") as handle:
            np.savez(handle, **encode.arrays)
            _sync(handle)
    final = root / name
    if final.exists():
        shutil.rmtree(final)
    os.replace(partial, final)
    _write(root / f".{LATEST}.partial", name.encode("ascii"))
    os.replace(root / f".{LATEST}.partial", root / LATEST)
    for old in root.iterdir():  # earlier checkpoints, and partial ones of a killed writer
        if old.name in (name, LATEST):
            continue
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink()
    return final


def _write(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        _sync(handle)


def _sync(handle: Any) -> None:
    handle.flush()
    os.fsync(handle.fileno())


def latest(run_dir: Path) -> Path | None:
    """The newest complete checkpoint of ``run_dir``, or None when it has none."""
    pointer = Path(run_dir) / FOLDER / LATEST
    if not pointer.is_file():
        return None
    folder = pointer.parent / pointer.read_text(encoding="ascii").strip()
    if not (folder / STATE).is_file():
        raise CheckpointError(f"{pointer} names {folder.name}, which has no {STATE}")
    return folder


def load(folder: Path, device: Any = None) -> dict[str, Any]:
    """Read the checkpoint in ``folder`` (tensors onto ``device``, default where saved)."""
    try:
        tree = json.loads((folder / STATE).read_text(encoding="utf-8"))
        tensors: dict[str, Any] = {}
        if (folder / TENSORS).exists():
            import torch

            tensors = torch.load(folder / TENSORS, map_location=device, weights_only=True)
        arrays: dict[str, np.ndarray] = {}
        if (folder / ARRAYS).exists():
            with np.load(folder / ARRAYS, allow_pickle=False) as stored:
                arrays = {key: stored[key] for key in stored.files}
    except (OSError, ValueError, RuntimeError) as err:  # json, npz and torch errors
        raise CheckpointError(f"cannot read the checkpoint {folder}: "
                              f"{' '.join(str(err).split())}") from None
    state = _decode(tree, tensors, arrays)
    if not isinstance(state, dict):
        raise CheckpointError(f"{folder / STATE} does not hold a checkpoint")
    return state
