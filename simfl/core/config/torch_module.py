"""The ``torch_module`` model kind: any ``torch.nn.Module``, made by a factory function.

The factory is named by an import path ``"package.module:make_net"`` (from a scenario
file or ``--set``), or given as the callable itself from Python; either way the config
holds the path (a callable given directly is remembered under its module and qualified
name, so overrides and ``config.json`` keep naming it). The path is resolved when the
config is made, so a factory that does not import is one line at ``simfl validate``.
How the module trains is :mod:`simfl.train.torch_net`'s work; this module imports no
torch itself (the factory's module may).
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable

from simfl.core.config.model import Model
from simfl.core.errors import ConfigError

#: factories handed over as callables, by the path the config names them with
_GIVEN: dict[str, Callable[..., Any]] = {}

_ALLOWED = ("an import path 'package.module:function' of a callable make_net(input_shape, "
            "n_classes) that returns a torch.nn.Module")


def factory_path(factory: Callable[..., Any]) -> str:
    """The path a callable factory is named by: ``module:qualified_name``."""
    return f"{getattr(factory, '__module__', '?')}:{getattr(factory, '__qualname__', '?')}"


def resolve_factory(path: str) -> Callable[..., Any]:
    """The callable ``path`` names; a :class:`ConfigError` on ``factory`` says why not."""
    if path in _GIVEN:
        return _GIVEN[path]
    module_name, _, name = path.partition(":")
    if not module_name or not name:
        raise ConfigError("factory", path, _ALLOWED)
    try:
        module = _import(module_name)
        found: Any = module
        for part in name.split("."):
            found = getattr(found, part)
    except (Exception, SystemExit) as err:  # the user's module may fail in any way (exit too)
        reason = str(err).strip().splitlines()[0] if str(err).strip() else ""
        raise ConfigError("factory", path, f"{_ALLOWED} (it does not load: "
                          f"{type(err).__name__}{': ' + reason if reason else ''})") from None
    if not callable(found):
        raise ConfigError("factory", path, f"{_ALLOWED} (it names a "
                          f"{type(found).__name__}, which cannot be called)")
    return found  # type: ignore[no-any-return]


def _import(module_name: str) -> Any:
    """Import ``module_name`` from ``sys.path``, then from the current folder."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        here = os.getcwd()
        if err.name != module_name.split(".")[0] or here in sys.path:
            raise
        sys.path.append(here)
        return importlib.import_module(module_name)


@dataclass(frozen=True)
class TorchModule(Model):
    """Any torch nn.Module from a factory (one job at a time; batched when vmap-able: no buffers).

    ``factory`` makes the module: ``make_net(input_shape, n_classes)``, ``input_shape``
    being one sample's shape as the data set gives it ((channels, height, width) for
    images, (length,) for token sequences). Parameters train; floating-point buffers
    (BatchNorm's running statistics) are federated like parameters but never get
    gradients, or stay with each client with ``local_buffers = true`` (FedBN). Training
    runs the module in train mode, evaluation in eval mode.
    """

    kind = "torch_module"
    factory: str = ""
    local_buffers: bool = False

    def __post_init__(self) -> None:
        factory: Any = self.factory
        if callable(factory) and not isinstance(factory, str):
            path = factory_path(factory)
            _GIVEN[path] = factory
            object.__setattr__(self, "factory", path)
        super().__post_init__()

    def validate(self) -> None:
        resolve_factory(self.factory)

    def make(self) -> Callable[..., Any]:
        """The factory function."""
        return resolve_factory(self.factory)

    def input_problem(self, input_shape: tuple[int, ...], tokens: bool) -> str | None:
        return None  # the module says, when it is first built
