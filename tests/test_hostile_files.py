"""Data files made to hurt: bombs, sparse giants, FIFOs, devices, crafted headers and
malformed content. Each is refused with one DataFileError or ConfigError line naming the
file or field, before anything large is held; ``simfl validate`` finds them too."""

import gzip
import io
import json
import os
import signal
import tracemalloc
import uuid
import zipfile
from pathlib import Path

import numpy as np
import pytest

from test_readers import (cifar_folder, leaf_folder, mnist_folder, npz_arrays, write_idx,
                          write_npz)
from simfl.cli import main
from simfl.core import datafiles
from simfl.core.config import Idx, Npz, apply_overrides, load_scenario, parse_override
from simfl.core.datafiles import DataFileError, leaf_counts, read_leaf
from simfl.core.datafiles import common
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree
from simfl.preflight import check_memory, estimate_memory
from simfl.train.datasets import load_samples


def one_line(err) -> str:
    text = str(err.value)
    assert "\n" not in text
    return text


@pytest.fixture
def alarm():
    """Fail instead of hanging (a FIFO opened for reading blocks until a writer comes)."""
    def hung(*_):
        raise TimeoutError("the reader blocked")
    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(5)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


# ---------------------------------------------------------------------------------
# IDX

def test_idx_gzip_bomb_is_refused_without_decompressing_it(tmp_path):
    mnist_folder(tmp_path, gz=True)
    header = bytes([0, 0, 8, 3]) + np.array([40, 28, 28], dtype=">u4").tobytes()
    bomb = tmp_path / "train-images-idx3-ubyte.gz"
    bomb.write_bytes(gzip.compress(header + bytes(64 * 2**20), compresslevel=1))
    tracemalloc.start()
    try:
        with pytest.raises(DataFileError, match="decompresses to more than") as err:
            load_samples(Idx(path=str(tmp_path)), 4, RngTree(0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert one_line(err).startswith(str(bomb)) and peak < 8 * 2**20


def test_idx_header_claiming_more_than_deflate_can_give_is_refused_from_the_header(tmp_path):
    mnist_folder(tmp_path, gz=True)
    header = bytes([0, 0, 8, 3]) + np.array([1000, 1000, 1000], dtype=">u4").tobytes()
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(gzip.compress(header + bytes(100)))
    with pytest.raises(DataFileError, match="more than deflate can produce"):
        Idx(path=str(tmp_path)).shape()


def test_idx_test_split_with_zero_images_is_one_line(tmp_path):
    mnist_folder(tmp_path)
    write_idx(tmp_path / "t10k-images-idx3-ubyte", np.zeros((0, 28, 28), dtype=np.uint8))
    write_idx(tmp_path / "t10k-labels-idx1-ubyte", np.zeros(0, dtype=np.uint8))
    with pytest.raises(DataFileError, match="at least one sample"):
        load_samples(Idx(path=str(tmp_path)), 4, RngTree(0))


@pytest.mark.parametrize("prefix", ["../", "../mnist/", "sub/x-", "/abs/", "a\\b"])
def test_idx_prefix_with_a_path_separator_is_refused(tmp_path, capsys, prefix):
    mnist_folder(tmp_path / "outside")
    (tmp_path / "data").mkdir()
    assert main(["validate", "quickstart", "--set", "task.dataset=idx",
                 "--set", f"task.dataset.path={tmp_path / 'data'}",
                 "--set", f"task.dataset.prefix={prefix}"]) == 2
    assert "task.dataset.prefix" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="task.dataset.prefix"):
        datafiles.idx_files(str(tmp_path / "data"), "../outside/")


def test_idx_nan_pixels_are_refused_when_read(tmp_path):
    mnist_folder(tmp_path)
    images = np.random.default_rng(0).random((40, 28, 28)).astype(np.float32)
    images[3, 4, 5] = np.nan
    write_idx(tmp_path / "train-images-idx3-ubyte", images, code=0x0D)
    with pytest.raises(DataFileError, match="1 non-finite"):
        load_samples(Idx(path=str(tmp_path)), 4, RngTree(0))


# ---------------------------------------------------------------------------------
# CIFAR

def test_a_sparse_cifar_file_claiming_gigabytes_is_refused_from_its_size(tmp_path):
    cifar_folder(tmp_path)
    with open(tmp_path / "data_batch_2.bin", "r+b") as f:
        f.truncate(3073 * 40_000_000)  # 114 GiB of holes
    with pytest.raises(DataFileError, match="at most 4,294,967,296 bytes") as err:
        datafiles.cifar_info(str(tmp_path), hundred=False)
    assert one_line(err).startswith(str(tmp_path / "data_batch_2.bin"))


def test_memory_preflight_counts_a_cifar_folder_from_its_file_sizes(tmp_path):
    cifar_folder(tmp_path)
    with open(tmp_path / "data_batch_1.bin", "r+b") as f:
        f.truncate(3073 * 650_000)  # 2 GB of holes: under the cap, 8 GB as float32
    scenario = apply_overrides(load_scenario("quickstart"), [parse_override(p) for p in (
        "task.dataset=cifar10", f"task.dataset.path={tmp_path}")])
    field, data_bytes = estimate_memory(scenario).parts["data set"]
    assert field == "task.dataset.path" and data_bytes > 650_000 * 3072 * 4
    with pytest.raises(ConfigError, match="task.dataset.path"):
        check_memory(scenario, available=(4e9, "a test's limit"))


def test_validate_reads_every_cifar_label(tmp_path, capsys):
    cifar_folder(tmp_path)
    raw = bytearray((tmp_path / "test_batch.bin").read_bytes())
    raw[3073 * 2] = 17
    (tmp_path / "test_batch.bin").write_bytes(bytes(raw))
    assert main(["validate", "quickstart", "--set", "task.dataset=cifar10",
                 "--set", f"task.dataset.path={tmp_path}"]) == 2
    assert "record 2 has label 17" in capsys.readouterr().err


# ---------------------------------------------------------------------------------
# LEAF

def _first_train_file(where):
    return sorted((where / "train").glob("*.json"))[0]


@pytest.mark.parametrize("target", ["fifo", "/dev/zero", "/dev/urandom", "folder"])
@pytest.mark.parametrize("split", ["train", "test"])
def test_leaf_json_that_is_not_a_regular_file_is_refused_unread(tmp_path, alarm, target, split):
    leaf_folder(tmp_path, users=(3, 5))
    bad = tmp_path / split / "0.json"
    if target == "fifo":
        os.mkfifo(bad)
    elif target == "folder":
        bad.mkdir()
    else:
        bad.symlink_to(target)
    with pytest.raises(DataFileError, match="not a regular file") as err:
        read_leaf(str(tmp_path), "femnist", 2)
    assert one_line(err).startswith(str(bad))


def test_leaf_json_over_the_cap_is_refused_unread(tmp_path, monkeypatch):
    leaf_folder(tmp_path, users=(3, 5))
    monkeypatch.setattr(common, "MAX_JSON_BYTES", 1000)
    with pytest.raises(DataFileError, match="at most 1,000 bytes"):
        leaf_counts(str(tmp_path), 2)


@pytest.mark.parametrize("edit, words", [
    (lambda doc: doc["user_data"][doc["users"][0]].update(y=[[1, 2], [3]] + [0] * 1),
     "equally long|class 0 to 61"),
    (lambda doc: doc["user_data"][doc["users"][0]].update(
        y=[[1]] * len(doc["user_data"][doc["users"][0]]["y"])), "class 0 to 61"),
    (lambda doc: doc["user_data"][doc["users"][0]].update(
        y=[True] * len(doc["user_data"][doc["users"][0]]["y"])), "class 0 to 61"),
    (lambda doc: doc["user_data"][doc["users"][0]]["x"][0].__setitem__(0, float("nan")),
     "non-finite"),
    (lambda doc: doc["user_data"][doc["users"][0]]["x"][0].__setitem__(0, 10**400),
     "784 numbers"),
])
def test_leaf_malformed_labels_and_pixels_are_one_line(tmp_path, edit, words):
    leaf_folder(tmp_path, users=(3, 5))
    path = _first_train_file(tmp_path)
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(DataFileError, match=words) as err:
        read_leaf(str(tmp_path), "femnist", 2)
    assert one_line(err).startswith(str(path))


def test_leaf_integer_of_5000_digits_is_one_line(tmp_path):
    leaf_folder(tmp_path, users=(3, 5))
    path = _first_train_file(tmp_path)
    path.write_text(path.read_text().replace('"num_samples": [3', '"num_samples": [' + "9" * 5000, 1))
    with pytest.raises(DataFileError, match="not valid JSON") as err:
        leaf_counts(str(tmp_path), 2)
    assert len(one_line(err)) < 600


@pytest.mark.parametrize("field, row", [("x", 0), ("x", 1), ("y", 2)])
def test_leaf_shakespeare_lone_surrogate_is_refused_in_every_mode(tmp_path, capsys, field, row):
    leaf_folder(tmp_path, users=(3, 5), benchmark="shakespeare")
    path = _first_train_file(tmp_path)
    doc = json.loads(path.read_text())
    user = doc["users"][0]
    texts = doc["user_data"][user][field]
    texts[row] = "\udc00" + texts[row][1:]
    path.write_text(json.dumps(doc))  # json writes the lone surrogate as \udc00
    with pytest.raises(DataFileError, match=rf"{field}\[{row}\] holds a lone surrogate"):
        read_leaf(str(tmp_path), "shakespeare", 2)
    for command in (["validate"], ["run", "--timing-only", "--out", str(tmp_path / "run")]):
        assert main([*command, "quickstart", "--set", "task.dataset=leaf", "--set",
                     f"task.dataset.path={tmp_path}", "--set", "task.dataset.benchmark="
                     "shakespeare", "--set", "task.model=char_lstm", "--set",
                     "task.n_clients=2", "--set", "server.clients_per_round=2"]) == 2
        err = capsys.readouterr().err
        assert "lone surrogate" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("edit, words", [
    (lambda doc: doc.update(users=doc["users"][1:], num_samples=doc["num_samples"][1:]),
     "'users' does not list"),
    (lambda doc: doc.update(users=[doc["users"][0]] * 2,
                            num_samples=[doc["num_samples"][0]] * 2), "appears twice"),
])
def test_leaf_users_missing_from_the_list_or_listed_twice_are_refused(tmp_path, edit, words):
    leaf_folder(tmp_path, users=(3, 5))
    path = _first_train_file(tmp_path)
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(DataFileError, match=words):
        leaf_counts(str(tmp_path), 1)


def test_leaf_user_twice_in_the_test_files_is_refused(tmp_path):
    leaf_folder(tmp_path, users=(3, 5, 4), per_file=1)
    files = sorted((tmp_path / "test").glob("*.json"))
    files[1].write_text(files[0].read_text())
    with pytest.raises(DataFileError, match="appears twice in the test files"):
        read_leaf(str(tmp_path), "femnist", 3)


def test_validate_parses_the_leaf_test_files(tmp_path, capsys):
    leaf_folder(tmp_path, users=(3, 5))
    path = sorted((tmp_path / "test").glob("*.json"))[0]
    path.write_text("{not json")
    assert main(["validate", "quickstart", "--set", "task.dataset=leaf",
                 "--set", f"task.dataset.path={tmp_path}", "--set", "task.n_clients=2",
                 "--set", "task.partition=native"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------
# npz

def _npz_with_member(path, name, header, data=b""):
    """An npz whose ``name`` member has a crafted .npy header (the others are genuine)."""
    write_npz(path, **npz_arrays())
    members = {}
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            members[info.filename] = zf.read(info)
    members[name] = _npy_bytes(header) + data
    with zipfile.ZipFile(path, "w") as zf:
        for member, raw in members.items():
            zf.writestr(member, raw)
    return path


def _npy_bytes(header):
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue()


@pytest.mark.parametrize("name, shape, descr", [
    ("y_train.npy", (2**40,), "<i8"),       # 2^40 labels
    ("y_test.npy", (2**30,), "<i8"),        # an 8 GiB label array
    ("x_train.npy", (2**40, 36), "<f4"),
])
def test_npz_header_claiming_a_huge_array_is_refused_from_the_header(tmp_path, name, shape,
                                                                      descr):
    path = _npz_with_member(tmp_path / "d.npz", name,
                            {"descr": descr, "fortran_order": False, "shape": shape})
    with pytest.raises(DataFileError, match=name[:-4]) as err:
        Npz(path=str(path)).shape()
    assert one_line(err).startswith(str(path))


@pytest.mark.parametrize("labels, words", [
    (np.full(30, np.iinfo(np.uint64).max, dtype=np.uint64), "label 18446744073709551615"),
    (np.full(30, 2**40, dtype=np.int64), "label 1099511627776"),
    (np.zeros((30, 1), dtype=np.int64), "1-D"),
    (np.zeros(30, dtype=np.float32), "integer"),
])
def test_npz_labels_out_of_range_or_of_the_wrong_type_are_refused(tmp_path, labels, words):
    path = write_npz(tmp_path / "d.npz", **{**npz_arrays(), "y_train": labels})
    with pytest.raises(DataFileError, match=words):
        Npz(path=str(path)).shape()


def test_npz_with_zero_features_is_refused(tmp_path):
    arrays = npz_arrays()
    path = write_npz(tmp_path / "d.npz", **{**arrays, "x_train": np.zeros((30, 0)),
                                            "x_test": np.zeros((10, 0))})
    with pytest.raises(DataFileError, match="at least one feature"):
        Npz(path=str(path)).shape()


@pytest.mark.parametrize("value", [np.nan, np.inf, 1e300])
def test_npz_non_finite_features_are_refused_when_read(tmp_path, value):
    arrays = npz_arrays(dtype=np.float64)
    arrays["x_test"][2, 0, 1, 1] = value
    path = write_npz(tmp_path / "d.npz", **arrays)
    with pytest.raises(DataFileError, match="x_test holds 1 non-finite"):
        load_samples(Npz(path=str(path)), 3, RngTree(0))


def test_the_limits_stated_in_the_docs_are_the_readers_own():
    page = (Path(__file__).resolve().parents[1] / "docs" / "data-files.md").read_text()
    for name, value in (("MAX_DATA_BYTES", datafiles.MAX_DATA_BYTES),
                        ("MAX_JSON_BYTES", datafiles.MAX_JSON_BYTES),
                        ("MAX_CLASSES", datafiles.MAX_CLASSES)):
        assert f"| `{name}` | {value:,}" in page, name
    assert f"{common.MAX_DEFLATE_RATIO:,} bytes per compressed byte" in page


# ---------------------------------------------------------------------------------
# Run folders that name code: config.json is read back without importing what it names

def _run_folder_naming(folder, field, path):
    from simfl.core.config import load_scenario

    tree = load_scenario("quickstart").to_dict()
    if field == "factory":
        tree["task"]["model"] = {"kind": "torch_module", "factory": path}
    else:
        tree["task"]["loss"] = path
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"scenario": tree}))


def _plant_package(folder, marker):
    """A package inside ``folder`` whose import writes ``marker``."""
    name = f"planted_pkg_{uuid.uuid4().hex[:10]}"
    package = folder / name
    package.mkdir()
    (package / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    (package / "nets.py").write_text("def make(shape, n):\n    raise ValueError('planted')\n")
    return f"{name}.nets:make"


def test_a_config_naming_a_package_inside_its_run_folder_is_read_without_importing_it(
        tmp_path, monkeypatch):
    from simfl.core.config.code_refs import UntrustedCode
    from simfl.experiment.checkpoint_check import saved_scenario

    run, marker = tmp_path / "run", tmp_path / "MARKER"
    run.mkdir()
    path = _plant_package(run, marker)
    _run_folder_naming(run, "factory", path)
    monkeypatch.chdir(run)  # where the factory loader would look last
    with pytest.raises(UntrustedCode, match="not given") as err:
        saved_scenario(run)
    assert path in one_line(err)
    with pytest.raises(UntrustedCode, match="inside") as err:
        saved_scenario(run, named={path})  # named again: still not from the folder
    assert not marker.exists()
    assert saved_scenario(run, trust=True).task.model.factory == path  # trusted: imported
    assert marker.exists()


@pytest.mark.parametrize("field, path", [("loss", "os:system"), ("factory", "builtins:exec"),
                                         ("loss", "subprocess:run")])
def test_a_config_naming_library_code_is_refused_unless_named_again(tmp_path, field, path):
    from simfl.core.config.code_refs import UntrustedCode
    from simfl.experiment.checkpoint_check import saved_scenario

    _run_folder_naming(tmp_path / "run", field, path)
    with pytest.raises(UntrustedCode) as err:
        saved_scenario(tmp_path / "run")
    text = one_line(err)
    named = "task.loss" if field == "loss" else "task.model.factory"
    assert f"{named} = {path!r}" in text and "--trust-code" in text
