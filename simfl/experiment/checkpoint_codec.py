"""The checkpoint's tree codec: a run's state as plain JSON, its tensors and arrays by
reference, and back.

The encoder writes numbers, strings, lists, tuples, dicts, numpy arrays, torch tensors
and dataclasses or named tuples of the code already loaded; anything else is refused
with the path to the value. The decoder trusts nothing: every node must have exactly
the keys of its kind with values of the right types, every reference must name a stored
tensor or array, a record must name a loaded dataclass (nothing is imported) and give
exactly its fields, and a dict key must be hashable; anything else is a
:class:`CheckpointError` naming where in the file it is.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from typing import Any

import numpy as np

from simfl.core.errors import SimflError


class CheckpointError(SimflError):
    """A checkpoint that cannot be written, read, or used for this run."""


#: the non-finite floats, as ``repr`` writes them (finite floats are plain JSON numbers)
NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class Encoder:
    """Encodes a state tree; the tensors and arrays it met are in :attr:`tensors` and
    :attr:`arrays`, under the keys the tree refers to them by."""

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


def record_class(name: str) -> type:
    """A dataclass or named tuple of a module already loaded; never imports anything."""
    module_name, _, qualname = name.partition(":")
    obj: Any = sys.modules.get(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if not isinstance(obj, type) or not (dataclasses.is_dataclass(obj) or
                                         (issubclass(obj, tuple) and hasattr(obj, "_fields"))):
        raise CheckpointError(f"the checkpoint names {name}, which is not a loaded dataclass")
    return obj


def _init_fields(cls: type) -> set[str]:
    if dataclasses.is_dataclass(cls):
        return {f.name for f in dataclasses.fields(cls) if f.init}
    return set(getattr(cls, "_fields"))


class Decoder:
    """Decodes a tree written by :class:`Encoder`, given the tensors and arrays it
    refers to; see the module docstring for what it refuses."""

    def __init__(self, tensors: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        self.tensors, self.arrays = tensors, arrays

    def __call__(self, node: Any, path: str = "state") -> Any:
        if isinstance(node, list):
            return [self(v, f"{path}[{i}]") for i, v in enumerate(node)]
        if not isinstance(node, dict):
            return node
        marks = [k for k in node if k.startswith("$")]
        if not marks:
            return {k: self(v, f"{path}[{k!r}]") for k, v in node.items()}
        kind = marks[0]
        keys = {"$array": {"$array", "scalar"}, "$record": {"$record", "fields"}}.get(
            kind, {kind})
        if set(node) != keys:
            raise CheckpointError(f"the checkpoint's {path} is not a valid node: it has the "
                                  f"keys {sorted(node)}, expected {sorted(keys)}")
        decode = getattr(self, "_" + kind[1:], None)
        if decode is None:
            raise CheckpointError(f"unknown node in the checkpoint at {path}: {kind}")
        return decode(node, path)

    def _bad(self, path: str, what: str) -> CheckpointError:
        return CheckpointError(f"the checkpoint's {path} is not valid: {what}")

    def _float(self, node: dict, path: str) -> float:
        text = node["$float"]
        if not isinstance(text, str) or text not in NON_FINITE:
            raise self._bad(path, f"$float must be one of {sorted(NON_FINITE)}")
        return NON_FINITE[text]

    def _array(self, node: dict, path: str) -> Any:
        key, scalar = node["$array"], node["scalar"]
        if not isinstance(key, str) or key not in self.arrays:
            raise self._bad(path, f"it refers to the array {key!r}, which arrays.npz lacks")
        array = self.arrays[key]
        if not isinstance(scalar, bool) or (scalar and array.shape != ()):
            raise self._bad(path, "'scalar' must be true (for a 0-d array) or false")
        return array[()] if scalar else array

    def _tensor(self, node: dict, path: str) -> Any:
        key = node["$tensor"]
        if not isinstance(key, str) or key not in self.tensors:
            raise self._bad(path, f"it refers to the tensor {key!r}, which tensors.pt lacks")
        return self.tensors[key]

    def _tuple(self, node: dict, path: str) -> tuple:
        items = node["$tuple"]
        if not isinstance(items, list):
            raise self._bad(path, "$tuple must be a list")
        return tuple(self(items, path))

    def _dict(self, node: dict, path: str) -> dict:
        pairs = node["$dict"]
        if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2
                                                  for p in pairs):
            raise self._bad(path, "$dict must be a list of [key, value] pairs")
        found = {}
        for i, (k, v) in enumerate(pairs):
            key = self(k, f"{path} key {i}")
            key = key.item() if isinstance(key, np.generic) else key
            try:
                hash(key)
            except TypeError:
                raise self._bad(path, f"key {i} is a {type(key).__name__}, which cannot be "
                                "a dict key") from None
            found[key] = self(v, f"{path}[{key!r}]")
        return found

    def _record(self, node: dict, path: str) -> Any:
        name, fields = node["$record"], node["fields"]
        if not isinstance(name, str) or not isinstance(fields, dict):
            raise self._bad(path, "$record must be a name and 'fields' an object")
        cls = record_class(name)
        expected = _init_fields(cls)
        if set(fields) != expected:
            raise self._bad(path, f"{name} has the fields {sorted(expected)}, the checkpoint "
                            f"gives {sorted(fields)}")
        values = {k: self(v, f"{path}.{k}") for k, v in fields.items()}
        try:
            return cls(**values)
        except (TypeError, ValueError) as err:
            raise self._bad(path, f"{name}: {' '.join(str(err).split())}") from None
