"""The data set's files: headers, declared sizes and labels checked without reading the
samples, so that ``simfl validate`` refuses a malformed file that a run would refuse.

The readers of :mod:`simfl.core.datafiles` do the checking; this module only picks what
to call per kind. IDX files: all four headers, their sizes against the files, the label
files. CIFAR: the file sizes and every record's label (through a memory map). npz: every
member's ``.npy`` header, the labels. LEAF: the JSON files are parsed whole to check
anything, so ``whole_files`` (what ``simfl validate`` asks for) reads the selected
users' training and test samples; a run reads them once, when it loads them.
"""

from __future__ import annotations

from simfl.core import datafiles
from simfl.core.config import Scenario
from simfl.core.config.dataset import Cifar10, Cifar100, Idx, Leaf, Npz


def check_files(scenario: Scenario, whole_files: bool = False) -> None:
    """Refuse a data file that is malformed, too large or out of range (one line, naming it)."""
    dataset = scenario.task.dataset
    if isinstance(dataset, Idx):
        dataset.info()
    elif isinstance(dataset, Cifar10):
        datafiles.cifar_check(dataset.path, hundred=False)
    elif isinstance(dataset, Cifar100):
        datafiles.cifar_check(dataset.path, hundred=True, fine=dataset.label == "fine")
    elif isinstance(dataset, Npz):
        datafiles.npz_info(dataset.path)
    elif isinstance(dataset, Leaf) and whole_files:
        datafiles.read_leaf(dataset.path, dataset.benchmark, scenario.task.n_clients)
