"""Fashion-MNIST for the full studies: where its IDX files are, and how they get there.

The full studies train on Fashion-MNIST (60,000 training and 10,000 test images of ten
clothing classes, 28x28 grey), read by simfl's ``idx`` data set from the four gzipped
IDX files of the Debian package ``dataset-fashion-mnist``. :func:`fashion_mnist_folder`
looks in ``$SIMFL_FASHION_MNIST`` first, then in the package's folder; when neither holds
the files it installs the package if it may (root, with ``apt-get``), and otherwise
stops with one line that says what to run. The quick mode and the tests never need it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import simfl

#: a folder holding Fashion-MNIST's four IDX files (plain or .gz), looked at first
FASHION_ENV = "SIMFL_FASHION_MNIST"
#: the Debian package and the folder it installs the files into
PACKAGE = "dataset-fashion-mnist"
PACKAGE_FOLDER = Path("/usr/share/datasets/fashion-mnist")
FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
         "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")


class DataMissing(simfl.SimflError):
    """Fashion-MNIST is neither found nor installable here; the message says what to run."""


def holds_idx(folder: Path) -> bool:
    """Whether ``folder`` has the four IDX files, each plain or gzipped."""
    return all((folder / name).is_file() or (folder / f"{name}.gz").is_file()
               for name in FILES)


def can_install() -> bool:
    """Root with ``apt-get`` on the path: the package can be installed from here."""
    return hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get") is not None


def apt_install() -> None:
    """``apt-get install -y dataset-fashion-mnist``, after ``apt-get update`` when the
    package lists do not know it yet."""
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if subprocess.run(["apt-get", "install", "-y", PACKAGE], env=env, **quiet).returncode:
        subprocess.run(["apt-get", "update"], env=env, **quiet)
        subprocess.run(["apt-get", "install", "-y", PACKAGE], env=env, **quiet)


def fashion_mnist_folder(env: dict[str, str] | None = None,
                         package_folder: Path = PACKAGE_FOLDER,
                         installable: Callable[[], bool] = can_install,
                         install: Callable[[], None] = apt_install) -> Path:
    """The folder of Fashion-MNIST's IDX files: ``$SIMFL_FASHION_MNIST``, else the Debian
    package's folder (installing the package when root and apt allow it).

    Raises
    ------
    DataMissing
        When the variable names a folder without the files, or the files are absent and
        cannot be installed here: one line with the command that fixes it.
    """
    env = os.environ if env is None else env
    given = env.get(FASHION_ENV)
    if given:
        if holds_idx(Path(given)):
            return Path(given)
        raise DataMissing(f"${FASHION_ENV} = {given} lacks Fashion-MNIST's IDX files "
                          f"({', '.join(FILES)}, plain or .gz)")
    if not holds_idx(package_folder) and installable():
        install()
    if holds_idx(package_folder):
        return package_folder
    raise DataMissing(f"Fashion-MNIST not found: run `sudo apt-get update && sudo apt-get "
                      f"install -y {PACKAGE}`, or set ${FASHION_ENV} to a folder holding "
                      f"its four IDX files")


def fashion_mnist() -> dict[str, str]:
    """The ``task.dataset`` of the full studies: Fashion-MNIST's ``idx`` files."""
    return {"kind": "idx", "path": str(fashion_mnist_folder())}
