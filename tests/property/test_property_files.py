"""Generated hostile data files, per format: each either loads or is refused with one
simfl error line (never another exception, never a hang or a blow-up).

Each example starts from a small valid set (IDX, CIFAR-10, LEAF FEMNIST, npz) and damages
it: bytes cut, flipped or appended, headers rewritten with generated dimensions, type
codes, shapes and dtypes, LEAF documents rebuilt from generated JSON values.
"""

from __future__ import annotations

import io
import json
import tempfile
import warnings
import zipfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from simfl.core import datafiles
from simfl.core.errors import SimflError

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
RNG = np.random.default_rng(0)


def loads_or_one_line(read) -> None:
    """``read()`` returns, or raises a SimflError of one line."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            read()
    except SimflError as err:
        assert "\n" not in str(err)


# damage applied to a file's bytes: (cut at, [(offset, byte)], appended)
damage = st.tuples(st.none() | st.integers(0, 4000),
                   st.lists(st.tuples(st.integers(0, 4000), st.integers(0, 255)), max_size=4),
                   st.binary(max_size=64))


def damaged(raw: bytes, how) -> bytes:
    cut, flips, extra = how
    out = bytearray(raw if cut is None else raw[:cut])
    for offset, byte in flips:
        if out:
            out[offset % len(out)] = byte
    return bytes(out) + extra


def idx_bytes(code: int, dims: list[int], body: bytes) -> bytes:
    return bytes([0, 0, code, len(dims)]) + np.asarray(dims, dtype=">u4").tobytes() + body


@SETTINGS
@given(part=st.sampled_from(["train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                             "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]),
       gz=st.booleans(), how=damage,
       header=st.none() | st.tuples(st.sampled_from([8, 9, 11, 12, 13, 14, 7]),
                                    st.lists(st.integers(0, 2**32 - 1) | st.integers(0, 40),
                                             min_size=1, max_size=4)))
def test_idx_files_load_or_refuse(part, gz, how, header):
    with tempfile.TemporaryDirectory() as where:
        where = Path(where)
        for split, n in (("train", 6), ("t10k", 3)):
            images = RNG.integers(0, 256, (n, 4, 4), dtype=np.uint8)
            labels = RNG.integers(0, 5, n, dtype=np.uint8)
            (where / f"{split}-images-idx3-ubyte").write_bytes(idx_bytes(8, [n, 4, 4],
                                                                         images.tobytes()))
            (where / f"{split}-labels-idx1-ubyte").write_bytes(idx_bytes(8, [n], labels.tobytes()))
        target = where / part
        raw = target.read_bytes()
        if header is not None:
            code, dims = header
            raw = idx_bytes(code, dims, raw[4 + 4 * (3 if "images" in part else 1):])
        raw = damaged(raw, how)
        if gz:
            import gzip
            target.unlink()
            target = target.with_name(part + ".gz")
            raw = gzip.compress(raw)
        target.write_bytes(raw)
        loads_or_one_line(lambda: datafiles.idx_info(str(where)))
        loads_or_one_line(lambda: datafiles.read_idx(str(where)))


@SETTINGS
@given(name=st.sampled_from(["data_batch_1.bin", "test_batch.bin"]), how=damage)
def test_cifar_files_load_or_refuse(name, how):
    with tempfile.TemporaryDirectory() as where:
        where = Path(where)
        for file in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
            records = RNG.integers(0, 256, (1, 3073), dtype=np.uint8)
            records[:, 0] %= 10
            (where / file).write_bytes(records.tobytes())
        (where / name).write_bytes(damaged((where / name).read_bytes(), how))
        loads_or_one_line(lambda: datafiles.cifar_check(str(where), hundred=False))
        loads_or_one_line(lambda: datafiles.read_cifar(str(where), hundred=False))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner,
                                                                 max_size=3),
    max_leaves=12)
pixels = st.builds(lambda value, n: [value] * n,
                   st.floats(width=32) | st.integers(0, 255) | st.integers(2**70) | json_values,
                   st.sampled_from([784, 784, 783]))


lines = st.text(min_size=79, max_size=81)  # Shakespeare's 80 characters, any code point


@st.composite
def leaf_docs(draw):
    users = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3))
    data = {}
    for user in set(users) | set(draw(st.lists(st.sampled_from(["a", "d"]), max_size=1))):
        n = draw(st.integers(0, 2))
        data[user] = {"x": draw(st.lists(pixels | lines | json_values, min_size=n, max_size=n)),
                      "y": draw(st.lists(st.integers(-1, 62) | st.text(max_size=2) | json_values,
                                         min_size=n, max_size=n))}
    doc = {"users": users, "user_data": data}
    if draw(st.booleans()):
        doc["num_samples"] = [len(data[u]["y"]) for u in users]
    return draw(st.just(doc) | json_values.map(lambda v: {"users": v, "user_data": data}))


@SETTINGS
@given(doc=leaf_docs(), split=st.sampled_from(["train", "test"]), how=st.none() | damage,
       benchmark=st.sampled_from(["femnist", "shakespeare"]))
def test_leaf_files_load_or_refuse(doc, split, how, benchmark):
    with tempfile.TemporaryDirectory() as where:
        where = Path(where)
        sample = ([0.5] * 784, 3) if benchmark == "femnist" else ("to be or not " * 6 + "to", "b")
        good = {"users": ["z"], "num_samples": [1],
                "user_data": {"z": {"x": [sample[0]], "y": [sample[1]]}}}
        for sub in ("train", "test"):
            (where / sub).mkdir()
            (where / sub / "1.json").write_text(json.dumps(good))
        raw = json.dumps(doc).encode()
        (where / split / "0.json").write_bytes(raw if how is None else damaged(raw, how))
        loads_or_one_line(lambda: datafiles.leaf_counts(str(where), 1))
        loads_or_one_line(lambda: datafiles.read_leaf(str(where), benchmark, 2))


def npy_bytes(array: np.ndarray, shape, descr) -> bytes:
    buf = io.BytesIO()
    header = {"descr": descr, "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue() + array.tobytes()


@SETTINGS
@given(key=st.sampled_from(datafiles.NPZ_KEYS), compressed=st.booleans(), how=st.none() | damage,
       shape=st.none() | st.lists(st.integers(0, 2**40) | st.integers(0, 12), max_size=3),
       descr=st.sampled_from(["<f4", "<f8", "|u1", "<i8", "<u8", "|b1", "<c8", "|O", "<M8[s]"]),
       big_label=st.none() | st.sampled_from([-1, 2**20, 2**63 - 1]),
       nan=st.booleans())
def test_npz_archives_load_or_refuse(key, compressed, how, shape, descr, big_label, nan):
    arrays = {"x_train": RNG.random((8, 2, 3)), "y_train": RNG.integers(0, 3, 8),
              "x_test": RNG.random((4, 2, 3)), "y_test": RNG.integers(0, 3, 4)}
    if big_label is not None:
        arrays["y_train"][1] = big_label
    if nan:
        arrays["x_test"][1, 1, 1] = np.nan
    method = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    with tempfile.TemporaryDirectory() as where:
        path = Path(where) / "d.npz"
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", method) as zf:
            for name, array in arrays.items():
                raw = npy_bytes(array, array.shape, array.dtype.str)
                if name == key and shape is not None:
                    raw = npy_bytes(array, tuple(shape), descr)
                zf.writestr(f"{name}.npy", raw)
        raw = buf.getvalue()
        path.write_bytes(raw if how is None else damaged(raw, how))
        loads_or_one_line(lambda: datafiles.npz_info(str(path)))
        loads_or_one_line(lambda: datafiles.read_npz(str(path)))
