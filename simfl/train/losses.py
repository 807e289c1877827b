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
import inspect
from typing import Any, Callable

import torch
import torch.nn.functional as F

from simfl.core.errors import ConfigError


class MeanLoss:
    """A user loss ``fn(logits, targets) -> scalar tensor``: the minibatch mean itself.

    ``path`` names it in the one line that says what it did wrong: raised, or returned
    anything but one floating-point number as a tensor.
    """

    per_sample = False

    def __init__(self, fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
                 path: str = "") -> None:
        self.fn, self.path = fn, path

    def __call__(self, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        try:
            value = self.fn(out, y)
        except Exception as err:  # the user's function may fail in any way
            reason = " ".join(str(err).split())[:300]
            raise self._bad(out, y, f"raised {type(err).__name__}"
                            f"{': ' + reason if reason else ''}") from None
        if not isinstance(value, torch.Tensor):
            kind = type(value).__name__
            raise self._bad(out, y, f"returned {'an' if kind[0] in 'aeiou' else 'a'} {kind}, "
                            "not a tensor")
        if value.numel() != 1 or not value.is_floating_point():
            raise self._bad(out, y, f"returned a {str(value.dtype).replace('torch.', '')} "
                            f"tensor of shape {list(value.shape)}")
        return value

    def _bad(self, out: torch.Tensor, y: torch.Tensor, what: str) -> ConfigError:
        return ConfigError("task.loss", self.path, "a function fn(logits, targets) that returns "
                           "the minibatch's mean loss as a tensor holding one floating-point "
                           f"number (called with logits {list(out.shape)} and targets "
                           f"{list(y.shape)}, it {what})")


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


def takes_two(fn: Callable, path: str, field: str) -> Callable:
    """``fn``, when it can be called with two positional arguments (logits, targets); a
    ConfigError naming ``field`` otherwise (a function whose signature Python cannot read
    is let through: its first call says)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn
    try:
        signature.bind(None, None)
    except TypeError:
        raise ConfigError(field, path, "a function fn(logits, targets) that returns the "
                          f"minibatch's mean loss (it takes {signature})") from None
    return fn


def training_loss(task: Any, default: Callable) -> Callable:
    """The loss the task's local steps minimise: ``default`` (the data set's per-sample
    loss) unless ``task.loss`` or ``task.label_smoothing`` say otherwise."""
    if task.loss != "cross_entropy":
        return MeanLoss(takes_two(import_function(task.loss, "task.loss"), task.loss,
                                  "task.loss"), task.loss)
    if task.label_smoothing:
        return functools.partial(smoothed_cross_entropy, smoothing=task.label_smoothing)
    return default


def check_task_loss(task: Any) -> None:
    """The checks ``task.loss`` gets before any training: it imports, and it takes
    (logits, targets); what it returns only a training step shows."""
    if task.loss != "cross_entropy":
        takes_two(import_function(task.loss, "task.loss"), task.loss, "task.loss")
