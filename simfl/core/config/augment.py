"""Image augmentation of the training samples (``task.augment``)."""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.node import Node, at_most, non_negative

#: the widest padding of a random crop (pixels)
MAX_CROP_PADDING = 64


@dataclass(frozen=True)
class Augment(Node):
    """Random crop with zero padding and random horizontal flip of every training sample.

    Each sample of a job's minibatches is padded by ``crop_padding`` pixels on every side
    and cropped back to its size at a uniformly drawn offset, then mirrored left to right
    with probability 1/2 when ``horizontal_flip``. The draws come from the job's own
    stream (``augment/client/C/round/R``), so a run is reproducible bit for bit and two
    clients see different draws. Images only (data sets whose samples are C x H x W).
    """

    crop_padding: int = 4
    horizontal_flip: bool = True

    def validate(self) -> None:
        non_negative(self, "crop_padding")
        at_most(self, MAX_CROP_PADDING, "crop_padding", why="pixels of padding")
