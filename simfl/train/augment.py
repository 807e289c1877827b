"""Random crop with padding and horizontal flip of a job's training samples, on tensors.

:func:`augment_rows` transforms a job's plan samples (rows of flattened images, in plan
order) with draws from the job's stream; the inline and the batched executor both call it
on the same rows with the same stream, so they train on the same images.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from simfl.core.config.augment import Augment
from simfl.core.records import TrainJob
from simfl.core.rng import RngTree


def augment_stream(job: TrainJob, rngs: RngTree) -> np.random.Generator:
    """The stream a job's augmentation is drawn from: ``augment/client/C/round/R``."""
    return rngs.stream(f"augment/client/{job.client}/round/{job.round}")


def augment_rows(rows: torch.Tensor, input_shape: tuple[int, ...], config: Augment,
                 rng: np.random.Generator) -> torch.Tensor:
    """``rows`` ([N, C*H*W]) randomly cropped and flipped: offsets (dy, dx) uniform in
    [0, 2 p] into the image padded by p zeros, then a left-right flip with probability 1/2.
    Draws: the N offsets pairs, then the N flips."""
    n = len(rows)
    channels, height, width = input_shape
    images = rows.reshape(n, channels, height, width)
    p = config.crop_padding
    if p and n:
        offsets = torch.from_numpy(rng.integers(0, 2 * p + 1, size=(n, 2))).to(rows.device)
        padded = F.pad(images, (p, p, p, p))
        r = offsets[:, :1] + torch.arange(height, device=rows.device)  # [N, H]
        c = offsets[:, 1:] + torch.arange(width, device=rows.device)  # [N, W]
        n_idx = torch.arange(n, device=rows.device)[:, None, None]
        images = padded.permute(0, 2, 3, 1)[n_idx, r[:, :, None], c[:, None, :]].permute(
            0, 3, 1, 2)
    if config.horizontal_flip and n:
        flip = torch.from_numpy(rng.random(n) < 0.5).to(rows.device)
        images = torch.where(flip[:, None, None, None], images.flip(-1), images)
    return images.reshape(n, rows.shape[1]).contiguous()
