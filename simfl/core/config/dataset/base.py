"""The data set extension point: what every data set kind declares about itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from simfl.core.config.node import Choice


@dataclass(frozen=True)
class Dataset(Choice, point="datasets"):
    """A data set; ``shape`` gives (n_features, n_classes) without loading it.

    ``loss`` is the training loss it is meant for: ``cross_entropy`` (classification)
    or ``squared`` (the ``quadratic`` toy objectives).
    """

    loss: ClassVar[str] = "cross_entropy"
    #: True when a sample is a sequence of integer token ids (``x`` is int64), not features
    tokens: ClassVar[bool] = False
    #: True when the data set's files hold their own test split: ``task.test_fraction``
    #: is then not used (the test split of the files is the test set)
    own_test_split: ClassVar[bool] = False

    def shape(self) -> tuple[int, int]:
        raise NotImplementedError

    def input_shape(self) -> tuple[int, ...]:
        """The shape of one sample before flattening: ``(channels, height, width)`` for
        images, ``(length,)`` for token sequences and feature vectors. Loaders return
        samples flattened to ``prod(input_shape)`` numbers per row."""
        return (self.shape()[0],)
