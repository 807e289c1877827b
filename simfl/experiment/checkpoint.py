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
named tuples of the code already loaded (:mod:`~simfl.experiment.checkpoint_codec`);
anything else is refused when saving, with the path to the value that is not allowed.
Reading trusts nothing: every file is read bounded and checked (:func:`load`), and a
resumed run checks the state against itself before using any of it
(:mod:`~simfl.experiment.checkpoint_check`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from simfl.experiment.checkpoint_codec import CheckpointError, Decoder, Encoder

FOLDER = "checkpoint"
LATEST = "LATEST"
STATE, TENSORS, ARRAYS = "state.json", "tensors.pt", "arrays.npz"


# ---- files ---------------------------------------------------------------------------

def save(run_dir: Path, rounds_done: int, state: dict[str, Any]) -> Path:
    """Write ``state`` as the checkpoint after ``rounds_done`` rounds; returns its folder."""
    encode = Encoder()
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
        if old.is_dir() and not old.is_symlink():
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


#: the longest ``LATEST`` file and ``state.json`` read (a checkpoint's names are short;
#: its JSON holds no tensor or array, only a journal of a few numbers per round)
MAX_LATEST_BYTES, MAX_STATE_BYTES = 64, 1 << 30
NAME = re.compile(r"round_[0-9]{6,}")


def latest(run_dir: Path) -> Path | None:
    """The newest complete checkpoint of ``run_dir``, or None when it has none."""
    root = Path(run_dir) / FOLDER
    pointer = root / LATEST
    if not os.path.lexists(pointer):
        return None
    if root.is_symlink():
        raise CheckpointError(f"{root} is a link: a checkpoint folder must be the run's own")
    try:
        name = _read(pointer, MAX_LATEST_BYTES).decode("ascii").strip()
    except UnicodeDecodeError:
        name = ""
    if not NAME.fullmatch(name):
        raise CheckpointError(f"{pointer} does not name a checkpoint (expected a name such as "
                              "round_000012)")
    folder = root / name
    if folder.is_symlink() or not (folder / STATE).is_file():
        raise CheckpointError(f"{pointer} names {name}, which has no {STATE}")
    return folder


def _read(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, which must hold at most ``limit`` of them."""
    _regular(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as err:
        raise CheckpointError(f"cannot read {path}: {err.strerror or err}") from None
    if len(data) > limit:
        raise CheckpointError(f"{path} is larger than a checkpoint's {limit:,} bytes")
    return data


def _regular(path: Path) -> None:
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError as err:
        raise CheckpointError(f"cannot read {path}: {err.strerror or err}") from None
    if not regular:
        raise CheckpointError(f"{path} is not a regular file")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in a checkpoint")


def load(folder: Path, device: Any = None) -> dict[str, Any]:
    """Read the checkpoint in ``folder`` (tensors onto ``device``, default where saved).

    Every file is read bounded and checked before it is used: the JSON strictly, the
    tensors with ``weights_only=True`` (no pickle runs) after their zip's sizes were
    checked against the file, the arrays with ``allow_pickle=False`` after each array's
    declared size was; any problem is one :class:`CheckpointError`.
    """
    folder = Path(folder)
    try:
        tree = json.loads(_read(folder / STATE, MAX_STATE_BYTES).decode("utf-8"),
                          parse_constant=_no_constant)
        tensors = _tensors(folder / TENSORS, device)
        arrays = _arrays(folder / ARRAYS)
        state = Decoder(tensors, arrays)(tree)
    except CheckpointError:
        raise
    except RecursionError:
        raise CheckpointError(f"the checkpoint {folder} is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as err:
        raise CheckpointError(f"cannot read {folder / STATE}: "
                              f"{' '.join(str(err).split())}") from None
    if not isinstance(state, dict):
        raise CheckpointError(f"{folder / STATE} does not hold a checkpoint")
    return state


def _tensors(path: Path, device: Any) -> dict[str, Any]:
    if not os.path.lexists(path):
        return {}
    _check_zip(path, lambda stream, info: None)
    import torch

    try:
        # torch warns before it refuses some files (a TorchScript archive): the refusal
        # below is the one line a tampered checkpoint gets
        with open(path, "rb") as handle, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = torch.load(handle, map_location=device, weights_only=True)
    except Exception as err:  # torch raises many kinds on a damaged file; none is a bug
        raise CheckpointError(f"cannot read {path}: {' '.join(str(err).split())[:200]}") \
            from None
    if not (isinstance(found, dict) and all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                            for k, v in found.items())):
        raise CheckpointError(f"{path} does not hold named tensors")
    return found


def _arrays(path: Path) -> dict[str, np.ndarray]:
    if not os.path.lexists(path):
        return {}
    _check_zip(path, _check_npy)
    try:
        with np.load(path, allow_pickle=False) as stored:
            return {key: stored[key] for key in stored.files}
    except Exception as err:  # numpy and zipfile raise many kinds on a damaged file
        raise CheckpointError(f"cannot read {path}: {' '.join(str(err).split())[:200]}") \
            from None


def _check_zip(path: Path, check_member: Any) -> None:
    """``path`` is a zip whose members together claim no more bytes than the file holds
    (what torch and numpy write: stored, not compressed), each passing ``check_member``."""
    _regular(path)
    size = path.stat().st_size
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if sum(info.file_size for info in members) > size:
                raise CheckpointError(f"{path} claims more bytes than it holds")
            for info in members:
                with archive.open(info) as stream:
                    check_member(stream, info)
    except CheckpointError:
        raise
    except Exception as err:  # zipfile.BadZipFile, a truncated member, a bad header...
        raise CheckpointError(f"cannot read {path}: {' '.join(str(err).split())[:200]}") \
            from None


def _check_npy(stream: Any, info: zipfile.ZipInfo) -> None:
    """An array of plain numbers whose declared size fits in its member."""
    fmt = np.lib.format
    version = fmt.read_magic(stream)
    header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
    shape, _, dtype = header(stream)
    if dtype.hasobject or int(np.prod(shape, dtype=object)) * dtype.itemsize > info.file_size:
        raise CheckpointError(f"arrays.npz: {info.filename} is not an array of numbers that "
                              "fits in the file")
