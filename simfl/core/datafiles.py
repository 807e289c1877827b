"""Reading data set files with numpy alone: IDX, CIFAR binary, LEAF JSON and npz.

One function per format reads a whole data set (:func:`read_idx`, :func:`read_cifar`,
:func:`read_leaf`, :func:`read_npz`); the ``*_info`` functions read only headers (or
file sizes, or the small label files) so that a data set's shape is known without
loading it. Every reader checks what it reads: a missing, truncated or malformed file
raises :class:`DataFileError`, one line naming the file. Nothing here unpickles: npz
archives are opened with ``allow_pickle=False`` and CIFAR's pickled "python version"
is refused (loading a pickle can run arbitrary code).

Images come back flattened to one float32 row per sample, pixels scaled to [0, 1]
(8-bit values divided by 255), channels first; labels as int64. This module is part of
``simfl.core`` because the config classes read headers through it; it imports neither
torch nor simpy.
"""

from __future__ import annotations

import functools
import gzip
import json
import warnings
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from simfl.core.errors import ConfigError, SimflError


class DataFileError(SimflError):
    """A data file that is missing or malformed; the message names the file."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = str(path)
        super().__init__(f"{path}: {problem}")


@dataclass(frozen=True)
class DataArrays:
    """A data set read from files: its training and test splits, flattened.

    ``groups`` gives each training sample's natural client (LEAF users), else None.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    groups: np.ndarray | None = None


@dataclass(frozen=True)
class FileInfo:
    """What a data set's headers tell: one sample's shape, the classes, the training size."""

    input_shape: tuple[int, ...]
    n_classes: int
    n_train: int


def folder(path: str, holds: str) -> Path:
    """``path`` as an existing folder (``~`` expanded); ``holds`` says what it must contain."""
    if not path:
        raise ConfigError("task.dataset.path", path, f"the folder holding {holds}")
    where = Path(path).expanduser()
    if not where.exists():
        raise DataFileError(where, f"no such folder (it must hold {holds})")
    if not where.is_dir():
        raise DataFileError(where, f"not a folder (it must hold {holds})")
    return where


def _stat_key(path: Path) -> tuple[str, int, int]:
    """A cache key that changes when the file does."""
    stat = path.stat()
    return str(path), stat.st_mtime_ns, stat.st_size


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed when its name ends in ``.gz``."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as f:
                return f.read()
        return path.read_bytes()
    except (OSError, EOFError, zlib.error) as err:
        raise DataFileError(path, f"cannot be read ({err})") from None


def _read_head(path: Path, n_bytes: int) -> bytes:
    """The first ``n_bytes`` of the (decompressed) file; fewer when it is shorter."""
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as f:
            return f.read(n_bytes)
    except (OSError, EOFError, zlib.error) as err:
        raise DataFileError(path, f"cannot be read ({err})") from None


# ---------------------------------------------------------------------------------
# IDX (MNIST, Fashion-MNIST, EMNIST)

#: IDX type codes (the magic number's third byte) and their big-endian numpy types
IDX_TYPES: dict[int, np.dtype[Any]] = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"),
             0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


@dataclass(frozen=True)
class IdxHeader:
    dtype: np.dtype[Any]
    dims: tuple[int, ...]

    @property
    def n_header_bytes(self) -> int:
        return 4 + 4 * len(self.dims)

    @property
    def n_data_bytes(self) -> int:
        return int(np.prod(self.dims, dtype=np.int64)) * self.dtype.itemsize


def parse_idx_header(head: bytes, path: Path) -> IdxHeader:
    """The header at the start of an IDX file: magic 0x0000, a type code, the number of
    dimensions, then each dimension as a big-endian uint32."""
    if len(head) < 4:
        raise DataFileError(path, f"not an IDX file: {len(head)} bytes, shorter than the header")
    if head[0] != 0 or head[1] != 0 or head[2] not in IDX_TYPES or head[3] == 0:
        raise DataFileError(path, f"not an IDX file: magic number 0x{head[:4].hex()} (expected "
                            "0x0000 followed by a type code 08, 09, 0b, 0c, 0d or 0e and the "
                            "number of dimensions)")
    n_dims = head[3]
    if len(head) < 4 + 4 * n_dims:
        raise DataFileError(path, f"truncated IDX header: {n_dims} dimensions announced, "
                            f"{len(head)} bytes in the file")
    dims = tuple(int(d) for d in np.frombuffer(head, dtype=">u4", count=n_dims, offset=4))
    return IdxHeader(IDX_TYPES[head[2]], dims)


def idx_header(path: Path) -> IdxHeader:
    """Read only the header of an IDX file (plain or ``.gz``)."""
    return parse_idx_header(_read_head(path, 4 + 4 * 255), path)


def read_idx_array(path: Path) -> np.ndarray:
    """The whole array of an IDX file (plain or ``.gz``), in native byte order."""
    raw = _read_bytes(path)
    header = parse_idx_header(raw[:4 + 4 * 255], path)
    found = len(raw) - header.n_header_bytes
    if found < header.n_data_bytes:
        raise DataFileError(path, f"truncated: the header announces {header.dims} values "
                            f"({header.n_data_bytes} bytes), the file holds {found}")
    if found > header.n_data_bytes:
        raise DataFileError(path, f"{found - header.n_data_bytes} bytes after the "
                            f"{header.dims} values the header announces")
    data = np.frombuffer(raw, dtype=header.dtype, offset=header.n_header_bytes)
    return data.reshape(header.dims).astype(header.dtype.newbyteorder("="))


#: the four IDX files of a data set: (split, part, number of dimensions)
_IDX_PARTS = (("train", "images", 3), ("train", "labels", 1),
              ("t10k", "images", 3), ("t10k", "labels", 1))


def _idx_contents(prefix: str) -> str:
    names = [f"{prefix}{split}-{part}-idx{n}-ubyte" for split, part, n in _IDX_PARTS]
    return (f"{', '.join(names[:3])} and {names[3]}, each plain or .gz, with 'test' "
            "allowed for 't10k' as in EMNIST")


def _idx_candidates(where: Path, prefix: str, split: str, part: str, n: int) -> list[Path]:
    splits = ("t10k", "test") if split == "t10k" else (split,)
    return [where / f"{prefix}{s}-{part}{sep}idx{n}-ubyte{gz}"
            for s in splits for sep in ("-", ".") for gz in ("", ".gz")]


def _idx_prefix(where: Path, prefix: str) -> str:
    """``prefix``, or when empty and the folder has no unprefixed set, the one prefix
    (``emnist-balanced-``) its files share."""
    if prefix or any(p.is_file() for p in _idx_candidates(where, "", "train", "images", 3)):
        return prefix
    found = sorted({p.name[:p.name.index("train-images")]
                    for p in where.glob("*train-images?idx3-ubyte*")})
    if len(found) > 1:
        raise ConfigError("task.dataset.prefix", prefix,
                          f"one of {', '.join(repr(f) for f in found)}: the folder {where} "
                          "holds several IDX data sets")
    return found[0] if found else prefix


def idx_files(path: str, prefix: str = "") -> tuple[str, dict[tuple[str, str], Path]]:
    """The prefix in use and the four files of an IDX data set, by (split, part)."""
    where = folder(path, _idx_contents(prefix or ""))
    prefix = _idx_prefix(where, prefix)
    files = {}
    for split, part, n in _IDX_PARTS:
        candidates = _idx_candidates(where, prefix, split, part, n)
        found = [p for p in candidates if p.is_file()]
        if not found:
            raise DataFileError(candidates[0].with_name(candidates[0].name + "[.gz]"),
                                f"no such file (the folder must hold {_idx_contents(prefix)})")
        files[(split, part)] = found[0]
    return prefix, files


def _idx_transposed(prefix: str, transpose: bool | None) -> bool:
    return prefix.lower().startswith("emnist") if transpose is None else transpose


def idx_info(path: str, prefix: str = "", transpose: bool | None = None) -> FileInfo:
    """Shape, classes and training size of an IDX data set from its headers and labels."""
    prefix, files = idx_files(path, prefix)
    images = _checked_idx_header(files[("train", "images")], 3)
    n_classes = max(_idx_max_label(*_stat_key(files[(s, "labels")])) for s in ("train", "t10k")) + 1
    _, height, width = images.dims
    if _idx_transposed(prefix, transpose):
        height, width = width, height
    return FileInfo((1, height, width), n_classes, images.dims[0])


def _checked_idx_header(path: Path, n_dims: int) -> IdxHeader:
    header = idx_header(path)
    _check_idx_dims(path, header, n_dims)
    return header


def _check_idx_dims(path: Path, header: IdxHeader, n_dims: int) -> None:
    what = "images (samples, height, width)" if n_dims == 3 else "labels (samples,)"
    if len(header.dims) != n_dims:
        raise DataFileError(path, f"holds a {len(header.dims)}-dimensional array {header.dims}; "
                            f"expected {n_dims}-dimensional {what}")
    if n_dims == 1 and header.dtype.kind not in "iu":
        raise DataFileError(path, f"labels of type {header.dtype.name}; expected integers")
    if n_dims == 3 and header.dtype.kind not in "uf":
        raise DataFileError(path, f"pixels of type {header.dtype.name}; expected unsigned "
                            "bytes (scaled to [0, 1]) or floats")


@functools.lru_cache(maxsize=32)
def _idx_max_label(path: str, mtime_ns: int, size: int) -> int:
    labels = _idx_labels(Path(path))
    return int(labels.max()) if len(labels) else -1


def _idx_labels(path: Path) -> np.ndarray:
    labels = read_idx_array(path)
    _check_idx_dims(path, IdxHeader(labels.dtype, labels.shape), 1)
    if len(labels) and labels.min() < 0:
        raise DataFileError(path, f"negative label {int(labels.min())}")
    return labels.astype(np.int64)


def read_idx(path: str, prefix: str = "", transpose: bool | None = None) -> DataArrays:
    """An IDX data set: the train files are the training split, the t10k (or test) files
    the test split. 8-bit pixels are scaled to [0, 1]; with ``transpose`` (by default for
    prefixes starting with ``emnist``) each image is transposed, undoing EMNIST's
    column-major storage."""
    prefix, files = idx_files(path, prefix)
    flip = _idx_transposed(prefix, transpose)
    arrays = []
    for split in ("train", "t10k"):
        image_file, label_file = files[(split, "images")], files[(split, "labels")]
        images = read_idx_array(image_file)
        _check_idx_dims(image_file, IdxHeader(images.dtype, images.shape), 3)
        labels = _idx_labels(label_file)
        if len(labels) != len(images):
            raise DataFileError(label_file, f"{len(labels)} labels for the {len(images)} "
                                f"images of {image_file.name}")
        if flip:
            images = images.transpose(0, 2, 1)
        x = images.reshape(len(images), -1).astype(np.float32)
        if images.dtype == np.uint8:
            x /= np.float32(255.0)
        arrays += [x, labels]
    shapes = {(a.shape[1]) for a in arrays[::2]}
    if len(shapes) > 1:
        raise DataFileError(files[("t10k", "images")], "test images of another size than the "
                            "training images")
    return DataArrays(*arrays)


# ---------------------------------------------------------------------------------
# CIFAR-10 / CIFAR-100, binary version

@dataclass(frozen=True)
class _CifarLayout:
    sub: str              # the folder the archive unpacks to
    train: tuple[str, ...]
    test: str
    label_bytes: int
    pickled: tuple[str, ...]  # names that mark the pickled "python version"
    archive: str


_CIFAR10 = _CifarLayout("cifar-10-batches-bin", tuple(f"data_batch_{i}.bin" for i in range(1, 6)),
                        "test_batch.bin", 1,
                        ("cifar-10-batches-py", "data_batch_1", "test_batch", "batches.meta"),
                        "cifar-10-binary.tar.gz")
_CIFAR100 = _CifarLayout("cifar-100-binary", ("train.bin",), "test.bin", 2,
                         ("cifar-100-python", "train", "test", "meta"), "cifar-100-binary.tar.gz")
#: pixels per CIFAR image: 1024 red, then 1024 green, then 1024 blue, each row by row
CIFAR_PIXELS = 3 * 32 * 32


def _cifar_layout(hundred: bool) -> _CifarLayout:
    return _CIFAR100 if hundred else _CIFAR10


def _cifar_contents(layout: _CifarLayout) -> str:
    return (f"{', '.join(layout.train)} and {layout.test} from {layout.archive} (or the "
            f"{layout.sub} folder they unpack to)")


def cifar_files(path: str, hundred: bool) -> tuple[list[Path], Path]:
    """The training files and the test file of the binary version of CIFAR-10/100."""
    layout = _cifar_layout(hundred)
    where = folder(path, _cifar_contents(layout))
    if (where / layout.sub).is_dir():
        where = where / layout.sub
    name = "CIFAR-100" if hundred else "CIFAR-10"
    for wanted in (*layout.train, layout.test):
        if not (where / wanted).is_file():
            pickled = [where / p for p in layout.pickled
                       if ((where / p).is_dir() if p.startswith("cifar-") else (where / p).is_file())]
            if pickled:
                raise DataFileError(pickled[0], f"this is {name}'s pickled \"python version\", "
                                    "which simfl refuses to read: unpickling a data file can run "
                                    f"arbitrary code. Download the binary version "
                                    f"({layout.archive}) and set task.dataset.path to the "
                                    f"{layout.sub} folder it unpacks to")
            raise DataFileError(where / wanted, f"no such file (the folder must hold "
                                f"{_cifar_contents(layout)})")
    return [where / f for f in layout.train], where / layout.test


def _cifar_records(path: Path, layout: _CifarLayout) -> int:
    record = layout.label_bytes + CIFAR_PIXELS
    n, rest = divmod(path.stat().st_size, record)
    if rest or n == 0:
        raise DataFileError(path, f"{path.stat().st_size} bytes is not a whole, non-zero "
                            f"number of {record}-byte records: truncated, or not the binary "
                            "version of CIFAR")
    return n


def cifar_info(path: str, hundred: bool, fine: bool = True) -> FileInfo:
    """Shape, classes and training size of a CIFAR folder, from its file sizes."""
    layout = _cifar_layout(hundred)
    train, test = cifar_files(path, hundred)
    n_train = sum(_cifar_records(p, layout) for p in train)
    _cifar_records(test, layout)
    return FileInfo((3, 32, 32), (100 if fine else 20) if hundred else 10, n_train)


def _read_cifar_files(files: list[Path], layout: _CifarLayout, label_at: int,
                      n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    counts = [_cifar_records(p, layout) for p in files]
    x = np.empty((sum(counts), CIFAR_PIXELS), dtype=np.float32)
    y = np.empty(sum(counts), dtype=np.int64)
    start = 0
    for path, n in zip(files, counts):
        raw = _read_bytes(path)
        if len(raw) != n * (layout.label_bytes + CIFAR_PIXELS):
            raise DataFileError(path, "changed while it was read")
        records = np.frombuffer(raw, dtype=np.uint8).reshape(n, -1)
        labels = records[:, label_at]
        if labels.max() >= n_classes:
            bad = int(np.argmax(labels >= n_classes))
            raise DataFileError(path, f"record {bad} has label {int(labels[bad])}; expected "
                                f"0 to {n_classes - 1}: not the binary version of this CIFAR")
        x[start:start + n] = records[:, layout.label_bytes:]
        y[start:start + n] = labels
        start += n
    x /= np.float32(255.0)
    return x, y


def read_cifar(path: str, hundred: bool, fine: bool = True) -> DataArrays:
    """The binary version of CIFAR-10 (``data_batch_1.bin`` ... ``data_batch_5.bin``,
    ``test_batch.bin``: records of one label byte and 3,072 pixel bytes) or CIFAR-100
    (``train.bin``, ``test.bin``: a coarse and a fine label byte, then the pixels).
    Images come out channel-first (3, 32, 32), as stored, scaled to [0, 1]."""
    layout = _cifar_layout(hundred)
    train, test = cifar_files(path, hundred)
    label_at = 1 if hundred and fine else 0
    n_classes = (100 if fine else 20) if hundred else 10
    x_train, y_train = _read_cifar_files(train, layout, label_at, n_classes)
    x_test, y_test = _read_cifar_files([test], layout, label_at, n_classes)
    return DataArrays(x_train, y_train, x_test, y_test)


# ---------------------------------------------------------------------------------
# LEAF JSON (FEMNIST, Shakespeare)

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


def _leaf_users(sub: Path) -> Iterator[tuple[Path, str, list[Any], list[Any]]]:
    """Every user of every JSON file in ``sub`` (files by name, users in file order)."""
    for path in sorted(sub.glob("*.json")):
        try:
            with open(path, "rb") as f:
                doc = json.load(f)
        except json.JSONDecodeError as err:
            raise DataFileError(path, f"not valid JSON ({err.msg} at line {err.lineno})") from None
        except (OSError, UnicodeDecodeError) as err:
            raise DataFileError(path, f"cannot be read ({err})") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("users"), list) \
                or not isinstance(doc.get("user_data"), dict):
            raise DataFileError(path, "not LEAF JSON: expected an object with a 'users' list "
                                "and a 'user_data' object")
        counts = doc.get("num_samples")
        if counts is not None and (not isinstance(counts, list) or len(counts) != len(doc["users"])):
            raise DataFileError(path, "not LEAF JSON: 'num_samples' must list one count per user")
        for i, user in enumerate(doc["users"]):
            entry = doc["user_data"].get(user) if isinstance(user, str) else None
            if not isinstance(entry, dict) or not isinstance(entry.get("x"), list) \
                    or not isinstance(entry.get("y"), list) or len(entry["x"]) != len(entry["y"]):
                raise DataFileError(path, f"not LEAF JSON: user_data[{user!r}] must be an object "
                                    "with equally long 'x' and 'y' lists")
            if counts is not None and counts[i] != len(entry["y"]):
                raise DataFileError(path, f"num_samples says {counts[i]} samples for user "
                                    f"{user!r}, user_data holds {len(entry['y'])}")
            yield path, user, entry["x"], entry["y"]
        del doc


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
        x = np.asarray(xs, dtype=np.float32)
    except (ValueError, TypeError):
        x = np.empty(0, dtype=np.float32)
    if x.ndim != 2 or x.shape[1] != FEMNIST_PIXELS:
        raise DataFileError(path, f"user {user!r}: each x must be a list of {FEMNIST_PIXELS} "
                            "numbers (a 28x28 FEMNIST image)")
    y = np.asarray(ys)
    if y.dtype.kind not in "iu" or y.min() < 0 or y.max() >= FEMNIST_CLASSES:
        raise DataFileError(path, f"user {user!r}: each y must be a class 0 to "
                            f"{FEMNIST_CLASSES - 1}")
    return x, y.astype(np.int64)


_TOKEN_OF = np.full(128, -1, dtype=np.int64)
_TOKEN_OF[[ord(c) for c in LEAF_ALPHABET]] = np.arange(len(LEAF_ALPHABET))


def leaf_tokens(text: str) -> np.ndarray:
    """Each character's position in LEAF's alphabet; -1 for characters outside it."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype="<u4").astype(np.int64)
    tokens = np.full(len(codes), -1, dtype=np.int64)
    ascii_ = codes < 128
    tokens[ascii_] = _TOKEN_OF[codes[ascii_]]
    return tokens


def _shakespeare_arrays(path: Path, user: str, xs: list[Any], ys: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    if not all(isinstance(s, str) and len(s) == SHAKESPEARE_LENGTH for s in xs) \
            or not all(isinstance(c, str) and len(c) == 1 for c in ys):
        raise DataFileError(path, f"user {user!r}: each x must be a string of "
                            f"{SHAKESPEARE_LENGTH} characters and each y one character "
                            "(LEAF Shakespeare)")
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
        if user in order:
            raise DataFileError(file, f"user {user!r} appears twice in the train files")
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


# ---------------------------------------------------------------------------------
# npz

NPZ_KEYS = ("x_train", "y_train", "x_test", "y_test")
_NPZ_CONTENTS = "an .npz archive of the arrays x_train, y_train, x_test and y_test"


def _npz_file(path: str) -> Path:
    if not path:
        raise ConfigError("task.dataset.path", path, _NPZ_CONTENTS)
    where = Path(path).expanduser()
    if not where.is_file():
        raise DataFileError(where, f"no such file (task.dataset.path must name {_NPZ_CONTENTS})")
    return where


def _npz_open(where: Path) -> np.lib.npyio.NpzFile:
    try:
        archive = np.load(where, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise DataFileError(where, f"not an .npz archive ({err})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise DataFileError(where, f"a single .npy array; expected {_NPZ_CONTENTS}")
    missing = [k for k in NPZ_KEYS if k not in archive.files]
    if missing:
        archive.close()
        raise DataFileError(where, f"lacks {', '.join(missing)} (it must hold "
                            f"{', '.join(NPZ_KEYS)}; it holds {', '.join(archive.files) or 'nothing'})")
    return archive


def _npz_array(archive: np.lib.npyio.NpzFile, where: Path, key: str) -> np.ndarray:
    try:
        array: np.ndarray = archive[key]
        return array
    except ValueError as err:
        if "pickle" in str(err):
            raise DataFileError(where, f"{key} is an object array (pickled data), which simfl "
                                "never loads; store numbers") from None
        raise DataFileError(where, f"{key} cannot be read ({err})") from None
    except (OSError, EOFError, zlib.error, zipfile.BadZipFile) as err:
        raise DataFileError(where, f"{key} cannot be read ({err})") from None


def _npz_labels(archive: np.lib.npyio.NpzFile, where: Path) -> tuple[np.ndarray, np.ndarray]:
    out = []
    for key in ("y_train", "y_test"):
        y = _npz_array(archive, where, key)
        if y.ndim != 1 or y.dtype.kind not in "iu" or len(y) == 0 or y.min() < 0:
            raise DataFileError(where, f"{key} must be a non-empty 1-D array of integer classes "
                                f">= 0 (it is {y.dtype.name} of shape {y.shape})")
        out.append(y.astype(np.int64))
    return out[0], out[1]


def _npz_x_shape(archive: np.lib.npyio.NpzFile, where: Path) -> tuple[int, ...]:
    """x_train's shape from its .npy header, without reading its data."""
    try:
        with archive.zip.open("x_train.npy") as f:  # type: ignore[union-attr]
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                return np.lib.format.read_array_header_1_0(f)[0]
            if version == (2, 0):
                return np.lib.format.read_array_header_2_0(f)[0]
    except (OSError, ValueError, EOFError, zlib.error, zipfile.BadZipFile, KeyError):
        pass
    return _npz_array(archive, where, "x_train").shape


def npz_info(path: str) -> FileInfo:
    """One sample's shape (x_train's shape after the first axis), the classes (the largest
    label + 1) and the training size, reading the labels and x_train's header."""
    where = _npz_file(path)
    return _npz_info(*_stat_key(where))


@functools.lru_cache(maxsize=16)
def _npz_info(path: str, mtime_ns: int, size: int) -> FileInfo:
    where = Path(path)
    with _npz_open(where) as archive:
        y_train, y_test = _npz_labels(archive, where)
        shape = tuple(int(d) for d in _npz_x_shape(archive, where))
    if len(shape) < 2:
        raise DataFileError(where, f"x_train has shape {shape}; expected (samples, features...)")
    n_classes = int(max(y_train.max(), y_test.max())) + 1
    return FileInfo(shape[1:], n_classes, len(y_train))


def read_npz(path: str) -> DataArrays:
    """The four arrays of an npz archive. x arrays keep their sample shape (flattened per
    row); unsigned 8-bit values are taken as pixels and scaled to [0, 1], other numbers
    are cast to float32 as they are."""
    where = _npz_file(path)
    with _npz_open(where) as archive:
        y_train, y_test = _npz_labels(archive, where)
        xs = [_npz_array(archive, where, k) for k in ("x_train", "x_test")]
    for key, x, y in zip(("x_train", "x_test"), xs, (y_train, y_test)):
        if x.ndim < 2 or len(x) != len(y):
            raise DataFileError(where, f"{key} has shape {x.shape}; expected {len(y)} samples "
                                "(one per label) of at least one feature")
        if x.dtype.kind not in "biuf":
            raise DataFileError(where, f"{key} holds {x.dtype.name} values; expected numbers")
    if xs[0].shape[1:] != xs[1].shape[1:]:
        raise DataFileError(where, f"x_test samples have shape {xs[1].shape[1:]}, x_train "
                            f"samples {xs[0].shape[1:]}")
    flat = []
    for x in xs:
        rows = x.reshape(len(x), -1).astype(np.float32)
        if x.dtype == np.uint8:
            rows /= np.float32(255.0)
        flat.append(rows)
    return DataArrays(flat[0], y_train, flat[1], y_test)
