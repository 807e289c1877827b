"""Data sets read from a local folder (simfl.core.datafiles): every format written here,
in exactly its on-disk layout, read back; missing and malformed files name themselves."""

import gzip
import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simfl.cli import main
from simfl.core.config import Cifar10, Cifar100, Idx, Iid, Leaf, Native, Npz, Task
from simfl.core.datafiles import LEAF_ALPHABET, DataFileError, leaf_tokens
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree
from simfl.train.data import build_data, client_sizes
from simfl.train.datasets import load_samples, sample_counts

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------
# writers: the formats, byte for byte

def write_idx(path: Path, array: np.ndarray, code: int = 0x08) -> Path:
    """An IDX file: 0x0000, the type code, the number of dimensions, the dimensions as
    big-endian uint32, then the values big-endian; gzipped when the name ends in .gz."""
    types = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
    raw = (bytes([0, 0, code, array.ndim]) + np.asarray(array.shape, dtype=">u4").tobytes()
           + np.asarray(array, dtype=types[code]).tobytes())
    path.write_bytes(gzip.compress(raw) if path.suffix == ".gz" else raw)
    return path


def mnist_folder(where: Path, n_train=40, n_test=12, gz=False, prefix="", test="t10k",
                 size=(28, 28), classes=10, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    where.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for split, n in (("train", n_train), (test, n_test)):
        images = rng.integers(0, 256, size=(n, *size), dtype=np.uint8)
        labels = rng.integers(0, classes, size=n).astype(np.uint8)
        labels[0] = classes - 1
        end = ".gz" if gz else ""
        write_idx(where / f"{prefix}{split}-images-idx3-ubyte{end}", images)
        write_idx(where / f"{prefix}{split}-labels-idx1-ubyte{end}", labels)
        arrays[split] = (images, labels)
    return arrays


def cifar_folder(where: Path, hundred=False, per_file=7, seed=0) -> dict:
    """The binary version: records of label byte(s) then 3,072 pixel bytes (R, G, B planes)."""
    rng = np.random.default_rng(seed)
    where.mkdir(parents=True, exist_ok=True)
    names = ["train.bin", "test.bin"] if hundred else \
        [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]
    out = {}
    for name in names:
        images = rng.integers(0, 256, size=(per_file, 3, 32, 32), dtype=np.uint8)
        if hundred:
            labels = np.stack([rng.integers(0, 20, per_file), rng.integers(0, 100, per_file)], 1)
        else:
            labels = rng.integers(0, 10, size=(per_file, 1))
        records = np.concatenate([labels.astype(np.uint8), images.reshape(per_file, -1)], axis=1)
        (where / name).write_bytes(records.tobytes())
        out[name] = (images, labels)
    return out


def leaf_folder(where: Path, users=(3, 5, 4), benchmark="femnist", seed=0, per_file=2) -> dict:
    """LEAF's layout: train/*.json and test/*.json, each {users, num_samples, user_data}."""
    rng = np.random.default_rng(seed)
    data = {"train": {}, "test": {}}
    for split in data:
        (where / split).mkdir(parents=True, exist_ok=True)
    for u, n in enumerate(users):
        name = f"f{u:04d}_{u}"
        for split, count in (("train", n), ("test", max(1, n // 2))):
            if benchmark == "femnist":
                x = rng.random((count, 784)).round(3).tolist()
                y = rng.integers(0, 62, count).tolist()
            else:
                text = "".join(rng.choice(list(LEAF_ALPHABET), 80 + count))
                x = [text[i:i + 80] for i in range(count)]
                y = [text[i + 80] for i in range(count)]
            data[split][name] = {"x": x, "y": y}
    for split, users_data in data.items():
        names = list(users_data)
        for k in range(0, len(names), per_file):
            chunk = names[k:k + per_file]
            doc = {"users": chunk, "num_samples": [len(users_data[n]["y"]) for n in chunk],
                   "user_data": {n: users_data[n] for n in chunk}}
            (where / split / f"all_data_{k // per_file}_{split}.json").write_text(json.dumps(doc))
    return data


def write_npz(path: Path, compressed=False, **arrays) -> Path:
    (np.savez_compressed if compressed else np.savez)(path, **arrays)
    return path


def npz_arrays(seed=0, shape=(1, 6, 6), n=(30, 10), classes=4, dtype=np.float32):
    rng = np.random.default_rng(seed)
    out = {}
    for split, count in zip(("train", "test"), n):
        x = rng.random((count, *shape))
        out[f"x_{split}"] = (x * 255).astype(np.uint8) if dtype == np.uint8 else x.astype(dtype)
        out[f"y_{split}"] = rng.integers(0, classes, count)
    out["y_train"][0] = classes - 1
    return out


# ---------------------------------------------------------------------------------
# IDX

@pytest.mark.parametrize("gz", [False, True])
def test_idx_reads_mnist_files_plain_or_gzipped_with_their_test_split(tmp_path, gz):
    arrays = mnist_folder(tmp_path, gz=gz)
    cfg = Idx(path=str(tmp_path))
    samples = load_samples(cfg, 4, RngTree(0))
    images, labels = arrays["train"]
    assert samples.x.shape == (40, 784) and samples.x.dtype == np.float32
    assert np.array_equal(samples.x, images.reshape(40, -1) / np.float32(255.0))
    assert np.array_equal(samples.y, labels) and samples.y.dtype == np.int64
    test_images, test_labels = arrays["t10k"]
    assert np.array_equal(samples.test.x, test_images.reshape(12, -1) / np.float32(255.0))
    assert np.array_equal(samples.test.y, test_labels)
    assert cfg.shape() == (784, 10) and cfg.input_shape() == (1, 28, 28)
    assert sample_counts(cfg, 4, RngTree(0)) == 40


def test_idx_finds_an_emnist_prefix_and_transposes_its_images(tmp_path):
    arrays = mnist_folder(tmp_path, prefix="emnist-letters-", test="test", size=(4, 6),
                          classes=27)
    cfg = Idx(path=str(tmp_path))
    samples = load_samples(cfg, 4, RngTree(0))
    images = arrays["train"][0]
    assert cfg.input_shape() == (1, 6, 4) and cfg.shape() == (24, 27)
    assert np.array_equal(samples.x, images.transpose(0, 2, 1).reshape(40, -1) / np.float32(255))
    kept = load_samples(Idx(path=str(tmp_path), transpose=False), 4, RngTree(0))
    assert np.array_equal(kept.x, images.reshape(40, -1) / np.float32(255))
    assert Idx(path=str(tmp_path), transpose=False).input_shape() == (1, 4, 6)


def test_idx_accepts_dotted_names(tmp_path):
    arrays = mnist_folder(tmp_path)
    for f in tmp_path.iterdir():
        f.rename(f.with_name(f.name.replace("s-idx", "s.idx")))  # train-images.idx3-ubyte
    samples = load_samples(Idx(path=str(tmp_path)), 4, RngTree(0))
    assert np.array_equal(samples.y, arrays["train"][1])


def test_idx_asks_for_a_prefix_when_a_folder_holds_several_sets(tmp_path):
    mnist_folder(tmp_path, prefix="emnist-digits-", test="test")
    mnist_folder(tmp_path, prefix="emnist-mnist-", test="test")
    with pytest.raises(ConfigError, match="task.dataset.prefix.*emnist-digits-.*emnist-mnist-"):
        Idx(path=str(tmp_path)).shape()
    assert Idx(path=str(tmp_path), prefix="emnist-mnist-").shape() == (784, 10)


def test_idx_reads_float_pixels_as_they_are(tmp_path):
    x = np.random.default_rng(0).random((5, 3, 3))
    write_idx(tmp_path / "train-images-idx3-ubyte", x, code=0x0D)
    write_idx(tmp_path / "t10k-images-idx3-ubyte", x[:2], code=0x0D)
    write_idx(tmp_path / "train-labels-idx1-ubyte", np.arange(5), code=0x0C)
    write_idx(tmp_path / "t10k-labels-idx1-ubyte", np.arange(2), code=0x0C)
    samples = load_samples(Idx(path=str(tmp_path)), 2, RngTree(0))
    assert np.allclose(samples.x, x.reshape(5, 9), atol=1e-7)
    assert np.array_equal(samples.y, np.arange(5))


def test_idx_missing_file_names_it_and_what_the_folder_must_hold(tmp_path):
    mnist_folder(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte").unlink()
    with pytest.raises(DataFileError) as err:
        load_samples(Idx(path=str(tmp_path)), 4, RngTree(0))
    message = str(err.value)
    assert str(tmp_path / "t10k-labels-idx1-ubyte") in message and "\n" not in message
    assert "train-images-idx3-ubyte" in message and ".gz" in message
    with pytest.raises(DataFileError, match="no such folder"):
        Idx(path=str(tmp_path / "nowhere")).shape()
    with pytest.raises(ConfigError, match="task.dataset.path"):
        Idx().shape()


@pytest.mark.parametrize("damage, words", [
    (lambda raw: b"\x00\x00\x07\x03" + raw[4:], "magic number 0x00000703"),
    (lambda raw: b"\x01\x02\x08\x03" + raw[4:], "not an IDX file"),
    (lambda raw: raw[:-10], "truncated"),
    (lambda raw: raw[:9], "truncated IDX header"),
    (lambda raw: raw + b"\x00", "1 bytes after"),
])
def test_idx_malformed_images_file_is_named(tmp_path, damage, words):
    mnist_folder(tmp_path)
    path = tmp_path / "train-images-idx3-ubyte"
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(DataFileError, match=words) as err:
        load_samples(Idx(path=str(tmp_path)), 4, RngTree(0))
    assert str(err.value).startswith(str(path))


def test_idx_truncated_gzip_and_mismatched_labels_are_named(tmp_path):
    mnist_folder(tmp_path, gz=True)
    path = tmp_path / "train-images-idx3-ubyte.gz"
    path.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(DataFileError, match="cannot be read") as err:
        load_samples(Idx(path=str(tmp_path)), 4, RngTree(0))
    assert str(err.value).startswith(str(path))
    mnist_folder(tmp_path, gz=True)
    write_idx(tmp_path / "train-labels-idx1-ubyte.gz", np.zeros(39, dtype=np.uint8))
    with pytest.raises(DataFileError, match="39 labels for the 40 images"):
        load_samples(Idx(path=str(tmp_path)), 4, RngTree(0))
    write_idx(tmp_path / "train-labels-idx1-ubyte.gz", np.zeros((40, 2), dtype=np.uint8))
    with pytest.raises(DataFileError, match="2-dimensional"):
        Idx(path=str(tmp_path)).shape()


def test_idx_shape_reads_headers_and_checks_them_against_the_file_sizes(tmp_path):
    mnist_folder(tmp_path)
    assert Idx(path=str(tmp_path)).shape() == (784, 10)
    task = Task(dataset=Idx(path=str(tmp_path)), partition=Iid(), n_clients=6)
    assert list(client_sizes(task, RngTree(0))) == [7, 7, 7, 7, 6, 6]  # all 40 train
    path = tmp_path / "t10k-images-idx3-ubyte"
    path.write_bytes(path.read_bytes()[:100])  # pixels cut off: the header check notices
    with pytest.raises(DataFileError, match="truncated"):
        Idx(path=str(tmp_path)).shape()


@pytest.mark.parametrize("make, cfg", [
    (lambda p: mnist_folder(p), lambda p: Idx(path=str(p))),
    (lambda p: cifar_folder(p), lambda p: Cifar10(path=str(p))),
    (lambda p: write_npz(p / "d.npz", **npz_arrays()), lambda p: Npz(path=str(p / "d.npz")))])
def test_files_test_split_is_kept_and_the_size_model_agrees(tmp_path, make, cfg):
    make(tmp_path)
    task = Task(dataset=cfg(tmp_path), partition=Iid(), n_clients=5, test_fraction=0.5)
    data = build_data(task, RngTree(1))
    samples = load_samples(task.dataset, 5, RngTree(1))
    assert np.array_equal(data.x_test, samples.test.x) and data.n_samples.sum() == len(samples.y)
    assert np.array_equal(client_sizes(task, RngTree(1)), data.n_samples)
    assert data.input_shape == task.dataset.input_shape()


# ---------------------------------------------------------------------------------
# CIFAR binary

def test_cifar10_binary_batches_read_channel_first_in_unit_range(tmp_path):
    written = cifar_folder(tmp_path / "cifar-10-batches-bin")
    samples = load_samples(Cifar10(path=str(tmp_path)), 4, RngTree(0))  # the parent folder
    images = np.concatenate([written[f"data_batch_{i}.bin"][0] for i in range(1, 6)])
    labels = np.concatenate([written[f"data_batch_{i}.bin"][1][:, 0] for i in range(1, 6)])
    assert samples.x.shape == (35, 3072) and samples.x.dtype == np.float32
    assert np.array_equal(samples.x, images.reshape(35, -1) / np.float32(255.0))
    assert np.array_equal(samples.y, labels)
    assert np.array_equal(samples.test.y, written["test_batch.bin"][1][:, 0])
    # channel-first: the first 1,024 values of a row are the red plane
    assert np.array_equal(samples.x[0, :1024].reshape(32, 32) * 255, images[0, 0])
    cfg = Cifar10(path=str(tmp_path / "cifar-10-batches-bin"))
    assert cfg.shape() == (3072, 10) and cfg.input_shape() == (3, 32, 32)
    assert sample_counts(cfg, 4, RngTree(0)) == 35


@pytest.mark.parametrize("label, column, n_classes", [("fine", 1, 100), ("coarse", 0, 20)])
def test_cifar100_reads_fine_or_coarse_labels(tmp_path, label, column, n_classes):
    written = cifar_folder(tmp_path, hundred=True)
    cfg = Cifar100(path=str(tmp_path), label=label)
    samples = load_samples(cfg, 2, RngTree(0))
    assert np.array_equal(samples.y, written["train.bin"][1][:, column])
    assert np.array_equal(samples.test.y, written["test.bin"][1][:, column])
    assert np.array_equal(samples.x, written["train.bin"][0].reshape(7, -1) / np.float32(255))
    assert cfg.shape() == (3072, n_classes)


class _Booby:
    """Unpickling this creates a file: proof that a data file was unpickled."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return Path.touch, (Path(self.marker),)


@pytest.mark.parametrize("layout", ["flat", "folder"])
def test_cifar_python_version_is_refused_unread(tmp_path, layout):
    marker = tmp_path / "unpickled"
    where = tmp_path if layout == "flat" else tmp_path / "cifar-10-batches-py"
    where.mkdir(exist_ok=True)
    for name in ["data_batch_1", "test_batch", "batches.meta"]:
        (where / name).write_bytes(pickle.dumps(_Booby(marker)))
    with pytest.raises(DataFileError, match="pickled \"python version\".*binary version") as err:
        load_samples(Cifar10(path=str(tmp_path)), 4, RngTree(0))
    assert "cifar-10-binary.tar.gz" in str(err.value) and "\n" not in str(err.value)
    assert not marker.exists()
    (tmp_path / "train").write_bytes(pickle.dumps(_Booby(marker)))
    with pytest.raises(DataFileError, match="CIFAR-100's pickled"):
        load_samples(Cifar100(path=str(tmp_path)), 4, RngTree(0))
    assert not marker.exists()


def test_cifar_truncated_or_foreign_files_are_named(tmp_path):
    cifar_folder(tmp_path)
    path = tmp_path / "data_batch_3.bin"
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(DataFileError, match="3073-byte records") as err:
        sample_counts(Cifar10(path=str(tmp_path)), 2, RngTree(0))
    assert str(err.value).startswith(str(path))
    cifar_folder(tmp_path)
    raw = bytearray(path.read_bytes())
    raw[3073 * 2] = 10  # the third record's label
    path.write_bytes(bytes(raw))
    with pytest.raises(DataFileError, match="record 2 has label 10"):
        load_samples(Cifar10(path=str(tmp_path)), 2, RngTree(0))
    path.unlink()
    with pytest.raises(DataFileError, match="data_batch_3.bin: no such file.*test_batch.bin"):
        load_samples(Cifar10(path=str(tmp_path)), 2, RngTree(0))


# ---------------------------------------------------------------------------------
# LEAF

def test_leaf_femnist_users_are_clients_with_their_own_test_samples(tmp_path):
    written = leaf_folder(tmp_path / "data", users=(3, 5, 4, 6))
    cfg = Leaf(path=str(tmp_path))  # the folder above data/
    samples = load_samples(cfg, 3, RngTree(0))  # the first three users
    names = list(written["train"])[:3]
    assert np.array_equal(np.bincount(samples.groups), [3, 5, 4])
    expected = np.concatenate([written["train"][n]["x"] for n in names]).astype(np.float32)
    assert np.array_equal(samples.x, expected) and samples.x.dtype == np.float32
    assert np.array_equal(samples.y, np.concatenate([written["train"][n]["y"] for n in names]))
    assert np.array_equal(samples.test.y, np.concatenate([written["test"][n]["y"] for n in names]))
    assert cfg.shape() == (784, 62) and cfg.input_shape() == (1, 28, 28) and not cfg.tokens
    assert np.array_equal(sample_counts(cfg, 3, RngTree(0)), [3, 5, 4])


def test_leaf_native_partition_keeps_users_and_ignores_test_fraction(tmp_path):
    leaf_folder(tmp_path, users=(3, 5, 4, 6))
    task = Task(dataset=Leaf(path=str(tmp_path)), partition=Native(), n_clients=4,
                test_fraction=0.5)
    data = build_data(task, RngTree(0))
    assert list(data.n_samples) == [3, 5, 4, 6]
    assert len(data.y_test) == 1 + 2 + 2 + 3
    assert np.array_equal(client_sizes(task, RngTree(0)), data.n_samples)
    iid = build_data(Task(dataset=Leaf(path=str(tmp_path)), partition=Iid(), n_clients=3),
                     RngTree(0))
    assert sorted(iid.n_samples) == [4, 4, 4]  # the first three users' 12 samples, re-split


def test_leaf_shakespeare_maps_characters_to_leafs_alphabet(tmp_path):
    written = leaf_folder(tmp_path, users=(2, 3), benchmark="shakespeare")
    cfg = Leaf(path=str(tmp_path), benchmark="shakespeare")
    samples = load_samples(cfg, 2, RngTree(0))
    first = written["train"][list(written["train"])[0]]
    assert samples.x.dtype == np.int64 and samples.x.shape == (5, 80)
    assert "".join(LEAF_ALPHABET[t] for t in samples.x[0]) == first["x"][0]
    assert LEAF_ALPHABET[samples.y[0]] == first["y"][0]
    assert cfg.tokens and cfg.shape() == (80, 80) and cfg.input_shape() == (80,)
    assert list(leaf_tokens("\n }a")) == [0, 1, 79, 53] and len(LEAF_ALPHABET) == 80


def test_leaf_shakespeare_reads_unknown_characters_as_spaces_with_a_warning(tmp_path):
    leaf_folder(tmp_path, users=(2,), benchmark="shakespeare")
    path = sorted((tmp_path / "train").glob("*.json"))[0]
    doc = json.loads(path.read_text())
    user = doc["users"][0]
    doc["user_data"][user]["x"][0] = "é|" + doc["user_data"][user]["x"][0][2:]
    path.write_text(json.dumps(doc))
    with pytest.warns(UserWarning, match="2 characters outside"):
        samples = load_samples(Leaf(path=str(tmp_path), benchmark="shakespeare"), 1, RngTree(0))
    assert list(samples.x[0, :2]) == [1, 1]


def test_leaf_more_clients_than_users_is_a_config_error(tmp_path):
    leaf_folder(tmp_path, users=(3, 5, 4))
    with pytest.raises(ConfigError, match="task.n_clients = 4 .*at most 3"):
        load_samples(Leaf(path=str(tmp_path)), 4, RngTree(0))


@pytest.mark.parametrize("damage, words", [
    (lambda doc: "{not json", "not valid JSON"),
    (lambda doc: json.dumps([1, 2]), "not LEAF JSON"),
    (lambda doc: json.dumps({**doc, "num_samples": [1]}), "one count per user"),
    (lambda doc: json.dumps({**doc, "user_data": {}}), "user_data"),
    (lambda doc: json.dumps({**doc, "user_data": {u: {"x": d["x"][:-1], "y": d["y"]}
                                                   for u, d in doc["user_data"].items()}}),
     "equally long"),
    (lambda doc: json.dumps({**doc, "user_data": {u: {"x": [r[:-1] for r in d["x"]], "y": d["y"]}
                                                   for u, d in doc["user_data"].items()}}),
     "784 numbers"),
    (lambda doc: json.dumps({**doc, "user_data": {u: {"x": d["x"], "y": [99] * len(d["y"])}
                                                   for u, d in doc["user_data"].items()}}),
     "class 0 to 61"),
])
def test_leaf_malformed_json_is_named(tmp_path, damage, words):
    leaf_folder(tmp_path, users=(3, 5))
    path = sorted((tmp_path / "train").glob("*.json"))[0]
    path.write_text(damage(json.loads(path.read_text())))
    with pytest.raises(DataFileError, match=words) as err:
        load_samples(Leaf(path=str(tmp_path)), 2, RngTree(0))
    assert str(err.value).startswith(str(path)) and "\n" not in str(err.value)


def test_leaf_missing_folders_are_named(tmp_path):
    with pytest.raises(DataFileError, match="train: no such folder.*test/"):
        load_samples(Leaf(path=str(tmp_path)), 2, RngTree(0))
    leaf_folder(tmp_path, users=(3,))
    for f in (tmp_path / "test").glob("*.json"):
        f.unlink()
    with pytest.raises(DataFileError, match="test: holds no .json files"):
        load_samples(Leaf(path=str(tmp_path)), 1, RngTree(0))


# ---------------------------------------------------------------------------------
# npz

@pytest.mark.parametrize("compressed", [False, True])
def test_npz_reads_four_arrays_keeping_the_sample_shape(tmp_path, compressed):
    arrays = npz_arrays()
    cfg = Npz(path=str(write_npz(tmp_path / "d.npz", compressed, **arrays)))
    samples = load_samples(cfg, 3, RngTree(0))
    assert np.array_equal(samples.x, arrays["x_train"].reshape(30, 36))
    assert np.array_equal(samples.test.y, arrays["y_test"])
    assert cfg.shape() == (36, 4) and cfg.input_shape() == (1, 6, 6)
    assert sample_counts(cfg, 3, RngTree(0)) == 30


def test_npz_8_bit_arrays_are_pixels(tmp_path):
    arrays = npz_arrays(dtype=np.uint8)
    samples = load_samples(Npz(path=str(write_npz(tmp_path / "d.npz", **arrays))), 3, RngTree(0))
    assert np.array_equal(samples.x, arrays["x_train"].reshape(30, -1) / np.float32(255))


def test_npz_problems_are_named(tmp_path):
    arrays = npz_arrays()
    missing = write_npz(tmp_path / "m.npz", **{k: v for k, v in arrays.items() if k != "y_test"})
    with pytest.raises(DataFileError, match="lacks y_test"):
        Npz(path=str(missing)).shape()
    marker = tmp_path / "unpickled"
    objects = write_npz(tmp_path / "o.npz", **{**arrays, "x_train": np.array(
        [_Booby(marker)] * 30, dtype=object)})
    with pytest.raises(DataFileError, match="object array"):
        load_samples(Npz(path=str(objects)), 3, RngTree(0))
    assert not marker.exists()
    pickled = tmp_path / "p.npz"
    pickled.write_bytes(pickle.dumps(_Booby(marker)))
    with pytest.raises(DataFileError, match="not an .npz archive"):
        Npz(path=str(pickled)).shape()
    assert not marker.exists()
    truncated = tmp_path / "t.npz"
    truncated.write_bytes(write_npz(tmp_path / "full.npz", **arrays).read_bytes()[:200])
    with pytest.raises(DataFileError) as err:
        load_samples(Npz(path=str(truncated)), 3, RngTree(0))
    assert str(err.value).startswith(str(truncated))
    wrong = write_npz(tmp_path / "w.npz", **{**arrays, "y_train": arrays["y_train"][:-1]})
    with pytest.raises(DataFileError, match="x_train has shape"):
        load_samples(Npz(path=str(wrong)), 3, RngTree(0))
    with pytest.raises(DataFileError, match="no such file"):
        Npz(path=str(tmp_path / "none.npz")).shape()


# ---------------------------------------------------------------------------------
# the command line, end to end

TWO_ROUNDS = ["--quiet", "--set", "run.rounds=2", "--set", "task.model=mlp",
              "--set", "task.model.hidden=[16]", "--set", "server.clients_per_round=3"]


def test_simfl_runs_on_a_generated_idx_folder(tmp_path, capsys):
    mnist_folder(tmp_path / "mnist", n_train=60, n_test=20, gz=True)
    out = tmp_path / "run"
    code = main(["run", "quickstart", *TWO_ROUNDS, "--out", str(out),
                 "--set", "task.dataset=idx", "--set", f"task.dataset.path={tmp_path / 'mnist'}",
                 "--set", "task.n_clients=6"])
    assert code == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rounds"] == 2 and summary["final_accuracy"] is not None
    config = json.loads((out / "config.json").read_text())
    assert config["model_bytes"] == 4 * (784 * 16 + 16 + 16 * 10 + 10)


def test_simfl_runs_on_a_generated_leaf_folder_with_native_clients(tmp_path, capsys):
    leaf_folder(tmp_path / "femnist" / "data", users=(6, 8, 5, 7, 9))
    out = tmp_path / "run"
    code = main(["run", "quickstart", *TWO_ROUNDS, "--out", str(out),
                 "--set", "task.dataset=leaf", "--set", f"task.dataset.path={tmp_path / 'femnist'}",
                 "--set", "task.partition=native", "--set", "task.n_clients=5"])
    assert code == 0, capsys.readouterr().err
    clients = (out / "clients.csv").read_text().splitlines()
    assert len(clients) == 1 + 5
    timing = main(["run", "quickstart", *TWO_ROUNDS, "--out", str(tmp_path / "timing"),
                   "--timing-only", "--set", "task.dataset=leaf",
                   "--set", f"task.dataset.path={tmp_path / 'femnist'}",
                   "--set", "task.partition=native", "--set", "task.n_clients=5"])
    assert timing == 0


def test_a_missing_data_folder_exits_2_naming_it(tmp_path):
    missing = tmp_path / "no_mnist"
    done = subprocess.run([sys.executable, "-m", "simfl", "run", "quickstart", "--quiet",
                           "--set", "task.dataset=idx", "--set", f"task.dataset.path={missing}",
                           "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2
    assert str(missing) in done.stderr and "train-images-idx3-ubyte" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------
# the scenarios that read files: on generated files and on the embedded data

needs_cnn = pytest.mark.skipif(not hasattr(__import__("simfl"), "Cnn"),
                               reason="the scenarios build simfl.Cnn")
QUICK = ["--quiet", "--set", "run.rounds=2", "--set", "task.model=mlp",
         "--set", "task.model.hidden=[8]", "--set", "run.eval_every_rounds=1"]


@needs_cnn
@pytest.mark.parametrize("name, write, extra", [
    ("femnist", lambda p: leaf_folder(p, users=tuple(range(3, 13))), ["task.n_clients=10"]),
    ("cifar10", lambda p: cifar_folder(p, per_file=20), ["task.n_clients=10"]),
    ("femnist", None, []), ("cifar10", None, [])])
def test_file_scenarios_run_on_generated_files_and_on_mnist5k(tmp_path, capsys, name, write,
                                                             extra):
    if write is None:
        sets = ["task.dataset=mnist5k"]
    else:
        write(tmp_path / "files")
        sets = [f"task.dataset.path={tmp_path / 'files'}", *extra]
    args = [a for s in sets for a in ("--set", s)]
    assert main(["run", name, *QUICK, *args, "--out", str(tmp_path / "run")]) == 0, \
        capsys.readouterr().err
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["rounds"] == 2
