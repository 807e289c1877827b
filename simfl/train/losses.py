"""The training loss of a task (``task.loss``): cross-entropy, with label smoothing, or a
user function named by its import path ``"package.module:function"``.

A built-in loss gives every sample's loss (the batched executor weighs them); a user
function ``fn(logits, targets) -> scalar`` gives the minibatch's mean at once, so a task
with one trains one job at a time (:class:`MeanLoss`, see
:class:`simfl.train.batched.BatchedExecutor`). Evaluation always scores the data set's own
loss (:func:`simfl.train.local.sample_loss`), so test losses stay comparable.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any, Callable

import torch
import torch.nn.functional as F

from simfl.core.errors import ConfigError


class MeanLoss:
    """A user loss ``fn(logits, targets) -> scalar tensor``: the minibatch mean itself."""

    per_sample = False

    def __init__(self, fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
        self.fn = fn

    def __call__(self, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.fn(out, y)


def smoothed_cross_entropy(out: torch.Tensor, y: torch.Tensor, smoothing: float) -> torch.Tensor:
    """Cross-entropy of every sample against targets smoothed by ``smoothing``
    (torch's ``label_smoothing``: (1 - s) one-hot + s / C)."""
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1), reduction="none",
                           label_smoothing=smoothing).view(out.shape[:-1])


def import_function(path: str, field: str) -> Any:
    """The object at ``"package.module:name"``, or a ConfigError naming ``field``."""
    module_name, _, name = path.partition(":")
    try:
        found = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError, ValueError) as err:
        raise ConfigError(field, path, f"an import path 'package.module:function' that "
                          f"imports ({type(err).__name__}: {err})") from None
    if not callable(found):
        raise ConfigError(field, path, "an import path of a function")
    return found


def training_loss(task: Any, default: Callable) -> Callable:
    """The loss the task's local steps minimise: ``default`` (the data set's per-sample
    loss) unless ``task.loss`` or ``task.label_smoothing`` say otherwise."""
    if task.loss != "cross_entropy":
        return MeanLoss(import_function(task.loss, "task.loss"))
    if task.label_smoothing:
        return functools.partial(smoothed_cross_entropy, smoothing=task.label_smoothing)
    return default
