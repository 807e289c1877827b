"""What simfl checks of a user's ``torch.nn.Module`` (``torch_module``), and the one line
it gives when the module fails in a run.

When the model is built (``simfl validate`` builds it too): a module with lazy
parameters (``nn.LazyLinear``: their shapes come only with the first call), with no
parameters at all, or with a parameter that never reaches its output (autograd would
give it no gradient) is a :class:`ConfigError` on ``task.model.factory``. In a run, an
exception from the module's forward pass becomes one such line naming the samples it
was given (:func:`run_error`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

from simfl.core.errors import ConfigError

if TYPE_CHECKING:
    import torch


def check_parameters(module: Any, factory_path: str, trainable: Sequence[str]) -> None:
    """One line for a module with nothing to train, or with lazy parameters."""
    from torch.nn.parameter import is_lazy

    lazy = [name for name, p in module.named_parameters() if is_lazy(p)]
    if lazy:
        raise ConfigError("task.model.factory", factory_path, "a module whose parameters "
                          f"have their sizes when it is made (parameter {lazy[0]!r} belongs "
                          "to a lazy module such as LazyLinear; give its input size, e.g. "
                          "nn.Linear(in_features, out_features))")
    if not trainable:
        raise ConfigError("task.model.factory", factory_path, "a module with parameters to "
                          "train (its module has none)")


def check_gradients(net: Any, state: dict[str, "torch.Tensor"], dtype: "torch.dtype") -> None:
    """One line for a parameter of ``net`` (a :class:`~simfl.train.torch_net.TorchNet`)
    that its output never reaches, found by one train-mode pass over two samples of
    ``dtype`` (the process's random generator is left as it was)."""
    import torch

    params = {k: v.clone().requires_grad_(k in net.trainable) for k, v in state.items()}
    trained = [params[k] for k in net.trainable]
    with torch.random.fork_rng(devices=[]):  # Dropout's draws: not the run's
        try:
            out = net.train_forward(params, torch.zeros((2, math.prod(net.input_shape)),
                                                        dtype=dtype))
        except ConfigError:
            return  # train mode fails where eval mode did not: the run says so
        grads = (torch.autograd.grad(out.float().sum(), trained, allow_unused=True)
                 if out.requires_grad else [None] * len(trained))
    unused = [name for name, g in zip(net.trainable, grads) if g is None]
    if unused:
        raise ConfigError("task.model.factory", net.factory_path, "a module whose every "
                          f"parameter shapes its output (parameter {unused[0]!r} gets no "
                          "gradient: remove it from the module, or register it as a buffer)")


def run_error(net: Any, x: "torch.Tensor", err: Exception, how: str = "") -> ConfigError:
    """The line for ``net``'s module failing on the samples ``x`` (``how``: in what way
    they were given)."""
    if isinstance(err, ConfigError):
        return err
    samples = x.shape[-2] if x.dim() > 1 else 1
    return net._error(f"it failed on {samples} samples of shape {tuple(net.input_shape)} "
                      f"({str(x.dtype).replace('torch.', '')}){how}", err)
