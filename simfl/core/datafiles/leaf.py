"""LEAF JSON files (FEMNIST, Shakespeare): one client per LEAF user.

A LEAF data folder holds ``train/`` and ``test/`` subfolders of JSON files, each with
``users``, ``num_samples`` and ``user_data``. Shakespeare's characters become tokens,
their positions in :data:`LEAF_ALPHABET`.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from simfl.core.datafiles import common
from simfl.core.datafiles.common import (DataArrays, DataFileError, check_finite, check_size,
                                         folder, open_regular)
from simfl.core.errors import ConfigError, echo


#: LEAF's 80-character alphabet for Shakespeare: a character's token is its position
LEAF_ALPHABET = ("\n !\"&'(),-.0123456789:;>?ABCDEFGHIJKLMNOPQRSTUVWXYZ[]"
                 "abcdefghijklmnopqrstuvwxyz}")
#: LEAF's Shakespeare samples: 80 characters, the label the character that follows
SHAKESPEARE_LENGTH = 80
FEMNIST_PIXELS = 28 * 28
FEMNIST_CLASSES = 62
_LEAF_CONTENTS = ("train/ and test/ subfolders of LEAF JSON files (*.json with 'users', "
                  "'num_samples' and 'user_data')")


def leaf_folder(path: str) -> Path:
    """The folder holding ``train/`` and ``test/``: ``path`` itself or its ``data/``."""
    where = folder(path, _LEAF_CONTENTS)
    if not (where / "train").is_dir() and (where / "data" / "train").is_dir():
        where = where / "data"
    for split in ("train", "test"):
        sub = where / split
        if not sub.is_dir():
            raise DataFileError(sub, f"no such folder (task.dataset.path must hold "
                                f"{_LEAF_CONTENTS})")
        if not any(sub.glob("*.json")):
            raise DataFileError(sub, "holds no .json files (LEAF writes one JSON file per "
                                "group of users)")
    return where


def _leaf_json(path: Path) -> Any:
    """The JSON value of a regular file of at most
    :data:`~simfl.core.datafiles.MAX_JSON_BYTES`, one line on error."""
    cap = common.MAX_JSON_BYTES
    with open_regular(path) as f:
        check_size(path, os.fstat(f.fileno()).st_size, "a JSON file", cap)
        try:
            raw = f.read(cap + 1)
        except OSError as err:
            raise DataFileError(path, f"cannot be read ({err.strerror})") from None
    check_size(path, len(raw), "a JSON file", cap)
    try:
        return json.loads(raw.decode("utf-8"))
    except json.JSONDecodeError as err:
        raise DataFileError(path, f"not valid JSON ({err.msg} at line {err.lineno})") from None
    except UnicodeDecodeError:
        raise DataFileError(path, "not UTF-8 text (LEAF JSON is UTF-8)") from None
    except RecursionError:
        raise DataFileError(path, "not LEAF JSON: nested too deeply") from None
    except ValueError as err:  # an integer of thousands of digits
        raise DataFileError(path, f"not valid JSON ({echo(err)})") from None


def _leaf_doc(path: Path) -> tuple[list[str], dict[str, Any]]:
    """A LEAF file's users (in order) and its user_data, their agreement checked."""
    doc = _leaf_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("users"), list) \
            or not isinstance(doc.get("user_data"), dict):
        raise DataFileError(path, "not LEAF JSON: expected an object with a 'users' list "
                            "and a 'user_data' object")
    users, data = doc["users"], doc["user_data"]
    if not all(isinstance(u, str) for u in users):
        raise DataFileError(path, "not LEAF JSON: 'users' must list user names (strings)")
    if len(set(users)) != len(users):
        twice = next(u for i, u in enumerate(users) if u in users[:i])
        raise DataFileError(path, f"user {echo(twice)} appears twice in 'users'")
    listed = set(users)
    unlisted = [u for u in data if u not in listed]
    if unlisted:
        raise DataFileError(path, f"user_data holds {len(unlisted)} users that 'users' does "
                            f"not list, such as {echo(unlisted[0])}")
    counts = doc.get("num_samples")
    if counts is not None and (not isinstance(counts, list) or len(counts) != len(users)):
        raise DataFileError(path, "not LEAF JSON: 'num_samples' must list one count per user")
    for i, user in enumerate(users):
        entry = data.get(user)
        if not isinstance(entry, dict) or not isinstance(entry.get("x"), list) \
                or not isinstance(entry.get("y"), list) or len(entry["x"]) != len(entry["y"]):
            raise DataFileError(path, f"not LEAF JSON: user_data[{echo(user)}] must be an "
                                "object with equally long 'x' and 'y' lists")
        if counts is not None and counts[i] != len(entry["y"]):
            raise DataFileError(path, f"num_samples says {echo(counts[i])} samples for user "
                                f"{echo(user)}, user_data holds {len(entry['y'])}")
    return users, data


def _leaf_users(sub: Path) -> Iterator[tuple[Path, str, list[Any], list[Any]]]:
    """Every user of every JSON file in ``sub`` (files by name, users in file order); a
    user named twice in one split is refused."""
    seen: set[str] = set()
    for path in sorted(sub.glob("*.json")):
        users, data = _leaf_doc(path)
        for user in users:
            if user in seen:
                raise DataFileError(path, f"user {echo(user)} appears twice in the "
                                    f"{sub.name} files")
            seen.add(user)
            yield path, user, data[user]["x"], data[user]["y"]
        del users, data


def _leaf_selected(where: Path, n_users: int) -> Iterator[tuple[Path, str, list[Any], list[Any]]]:
    """The first ``n_users`` users with training samples, with their training data."""
    found = 0
    for path, user, xs, ys in _leaf_users(where / "train"):
        if ys:
            found += 1
            yield path, user, xs, ys
            if found == n_users:
                return
    raise ConfigError("task.n_clients", n_users, f"at most {found}: the LEAF files in "
                      f"{where / 'train'} hold {found} users with training samples (one client "
                      "per user)")


def leaf_counts(path: str, n_users: int) -> np.ndarray:
    """Training samples of each of the first ``n_users`` users (reads the train files)."""
    return np.array([len(ys) for _, _, _, ys in _leaf_selected(leaf_folder(path), n_users)],
                    dtype=np.int64)


def _femnist_arrays(path: Path, user: str, xs: list[Any], ys: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    try:
        with np.errstate(over="ignore"):  # beyond float32's range: refused below
            x = np.asarray(xs, dtype=np.float32)
    except (ValueError, TypeError, OverflowError):
        x = np.empty(0, dtype=np.float32)
    if x.ndim != 2 or x.shape[1] != FEMNIST_PIXELS:
        raise DataFileError(path, f"user {echo(user)}: each x must be a list of "
                            f"{FEMNIST_PIXELS} numbers (a 28x28 FEMNIST image)")
    check_finite(path, f"user {echo(user)}'s x", x)
    if not all(type(c) is int and 0 <= c < FEMNIST_CLASSES for c in ys):
        raise DataFileError(path, f"user {echo(user)}: each y must be a class 0 to "
                            f"{FEMNIST_CLASSES - 1}")
    return x, np.asarray(ys, dtype=np.int64)


_TOKEN_OF = np.full(128, -1, dtype=np.int64)
_TOKEN_OF[[ord(c) for c in LEAF_ALPHABET]] = np.arange(len(LEAF_ALPHABET))


def leaf_tokens(text: str) -> np.ndarray:
    """Each character's position in LEAF's alphabet; -1 for characters outside it."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.int64)
    tokens = np.full(len(codes), -1, dtype=np.int64)
    ascii_ = codes < 128
    tokens[ascii_] = _TOKEN_OF[codes[ascii_]]
    return tokens


def _shakespeare_arrays(path: Path, user: str, xs: list[Any], ys: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    if not all(isinstance(s, str) and len(s) == SHAKESPEARE_LENGTH for s in xs) \
            or not all(isinstance(c, str) and len(c) == 1 for c in ys):
        raise DataFileError(path, f"user {echo(user)}: each x must be a string of "
                            f"{SHAKESPEARE_LENGTH} characters and each y one character "
                            "(LEAF Shakespeare)")
    for name, texts, length in (("x", xs, SHAKESPEARE_LENGTH), ("y", ys, 1)):
        try:  # JSON may escape a lone surrogate (\\ud800): valid JSON, but no character
            "".join(texts).encode("utf-8")
        except UnicodeEncodeError as err:
            raise DataFileError(path, f"user {echo(user)}: {name}[{err.start // length}] holds "
                                "a lone surrogate escape (\\ud800 to \\udfff), which is not "
                                "a character") from None
    x = leaf_tokens("".join(xs)).reshape(len(xs), SHAKESPEARE_LENGTH)
    y = leaf_tokens("".join(ys))
    return x, y


def read_leaf(path: str, benchmark: str, n_users: int) -> DataArrays:
    """The first ``n_users`` LEAF users with training samples (train files by name, users
    in each file's order): their training samples grouped by user, and their test
    samples (from the test files) as the test split.

    FEMNIST rows are 784 pixel values (float32); Shakespeare rows are 80 character
    tokens (int64, positions in :data:`LEAF_ALPHABET`), the label the next character's
    token. Characters outside the alphabet become the space token (LEAF's own mapping
    gives them -1, which no model can embed).
    """
    where = leaf_folder(path)
    convert = _shakespeare_arrays if benchmark == "shakespeare" else _femnist_arrays
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    order: dict[str, int] = {}
    for file, user, x, y in _leaf_selected(where, n_users):
        order[user] = len(order)
        x_arr, y_arr = convert(file, user, x, y)
        xs.append(x_arr)
        ys.append(y_arr)
    groups = np.repeat(np.arange(len(ys)), [len(y) for y in ys])
    test_x, test_y, seen = [], [], set()
    for file, user, x, y in _leaf_users(where / "test"):
        if user in order and y:
            x_arr, y_arr = convert(file, user, x, y)
            test_x.append(x_arr)
            test_y.append(y_arr)
            seen.add(user)
            if len(seen) == len(order):
                break
    if not test_y:
        raise DataFileError(where / "test", f"holds no test samples of the first {n_users} "
                            "users of the train files")
    arrays = [np.concatenate(a) for a in (xs, ys, test_x, test_y)]
    unknown = sum(int((a < 0).sum()) for a in arrays) if benchmark == "shakespeare" else 0
    if unknown:
        warnings.warn(f"{where}: {unknown} characters outside LEAF's 80-character alphabet "
                      "read as spaces", stacklevel=2)
        for a in arrays:
            a[a < 0] = LEAF_ALPHABET.index(" ")
    return DataArrays(arrays[0], arrays[1], arrays[2], arrays[3], groups=groups)
