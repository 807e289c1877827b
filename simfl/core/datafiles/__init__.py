"""Reading data set files with numpy alone: IDX, CIFAR binary, LEAF JSON and npz.

One function per format reads a whole data set (:func:`read_idx`, :func:`read_cifar`,
:func:`read_leaf`, :func:`read_npz`); the ``*_info`` functions read only headers (or
file sizes, or the small label files) so that a data set's shape is known without
loading it. Every reader checks what it reads: a missing, truncated or malformed file
raises :class:`DataFileError`, one line naming the file. Nothing here unpickles: npz
archives are opened with ``allow_pickle=False`` and CIFAR's pickled "python version"
is refused (loading a pickle can run arbitrary code).

Images come back flattened to one float32 row per sample, pixels scaled to [0, 1]
(8-bit values divided by 255), channels first; labels as int64. This package is part of
``simfl.core`` because the config classes read headers through it; it imports neither
torch nor simpy.

One module per format family (:mod:`~simfl.core.datafiles.idx`,
:mod:`~simfl.core.datafiles.cifar`, :mod:`~simfl.core.datafiles.leaf`,
:mod:`~simfl.core.datafiles.npz`), and :mod:`~simfl.core.datafiles.common` for what they
share; every public name is importable from this package.
"""

from simfl.core.datafiles.common import (MAX_CLASSES, MAX_DATA_BYTES, MAX_JSON_BYTES, DataArrays,
                                         DataFileError, FileInfo, folder)
from simfl.core.datafiles.idx import (IDX_TYPES, IdxHeader, idx_files, idx_header, idx_info,
                                      idx_prefix_problem, parse_idx_header, read_idx,
                                      read_idx_array)
from simfl.core.datafiles.cifar import (CIFAR_PIXELS, cifar_check, cifar_files, cifar_info,
                                        read_cifar)
from simfl.core.datafiles.leaf import (FEMNIST_CLASSES, FEMNIST_PIXELS, LEAF_ALPHABET,
                                       SHAKESPEARE_LENGTH, leaf_counts, leaf_folder, leaf_tokens,
                                       read_leaf)
from simfl.core.datafiles.npz import NPZ_KEYS, npz_info, read_npz

__all__ = [
    "MAX_CLASSES", "MAX_DATA_BYTES", "MAX_JSON_BYTES", "DataArrays", "DataFileError", "FileInfo",
    "folder",
    "IDX_TYPES", "IdxHeader", "idx_files", "idx_header", "idx_info", "idx_prefix_problem",
    "parse_idx_header",
    "read_idx", "read_idx_array",
    "CIFAR_PIXELS", "cifar_check", "cifar_files", "cifar_info", "read_cifar",
    "FEMNIST_CLASSES", "FEMNIST_PIXELS", "LEAF_ALPHABET", "SHAKESPEARE_LENGTH", "leaf_counts",
    "leaf_folder", "leaf_tokens", "read_leaf",
    "NPZ_KEYS", "npz_info", "read_npz",
]
