"""The size of one upload, known before anything trains (``server.compression``).

Every compression kind's payload depends only on the sizes of the update's tensors and
the kind's parameters (:meth:`simfl.core.config.compression.Compression.bits`), so the
timing side takes it from the model's description: its parameter shapes, or, when
``network.model_bytes`` is set, one tensor of ceil(model_bytes / 4) float32 numbers.
"""

from __future__ import annotations

import math

from simfl.core.config import Scenario
from simfl.core.config.compression import NoCompression

#: bytes of one float32 parameter
PARAM_BYTES = 4


def tensor_sizes(scenario: Scenario) -> list[int]:
    """The number of entries of each tensor of an update (no torch for the built-in models)."""
    model_bytes = scenario.network.model_bytes
    if model_bytes is not None:
        return [math.ceil(model_bytes / PARAM_BYTES)]
    from simfl.train.models import param_shapes

    task = scenario.task
    shapes = param_shapes(task.model, task.dataset.input_shape(), task.dataset.shape()[1])
    return [math.prod(shape) for shape in shapes.values()]


def upload_bits(scenario: Scenario) -> int | None:
    """Exact payload bits of one compressed upload; None without compression (the upload
    is then the model's ``model_bytes``, as the downlink's)."""
    compression = scenario.server.compression
    if isinstance(compression, NoCompression):
        return None
    return compression.bits(tensor_sizes(scenario))
