"""The trained model in the run folder: ``model.pt`` (final) and ``model_best.pt``.

Both are ``state_dict``s saved with ``torch.save``: for a ``torch_module`` model the
user's module's own (``module.load_state_dict(torch.load(path))`` restores it), for a
built-in model the ``{name: tensor}`` dict of its named parameters. ``model_best.pt``
is the global model of the evaluation with the highest test accuracy (the earliest of
equals). Each file is written to a temporary name and renamed into place. Timing-only
runs train no model and write neither.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from simfl.core.errors import OutputError

FINAL, BEST = "model.pt", "model_best.pt"


class BestModel:
    """The global model of the best evaluation so far, copied when one beats it."""

    def __init__(self) -> None:
        self.accuracy: float | None = None
        self.params: Any = None

    def offer(self, accuracy: float, params: Any) -> None:
        """Keep a copy of ``params`` if ``accuracy`` beats every earlier one."""
        if params is None or not math.isfinite(accuracy):
            return
        if self.accuracy is None or accuracy > self.accuracy:
            self.accuracy = accuracy
            self.params = {k: v.detach().clone() for k, v in params.items()}

    def snapshot(self) -> dict[str, Any]:
        return {"accuracy": self.accuracy, "params": self.params}

    def restore(self, state: dict[str, Any]) -> None:
        self.accuracy, self.params = state["accuracy"], state["params"]


def write_models(out_dir: Path, trainer: Any) -> None:
    """Write ``model.pt`` and ``model_best.pt`` of ``trainer`` (a model trainer, or one
    wrapped in a journal) into ``out_dir``; nothing for a run without a model."""
    inner = getattr(trainer, "inner", trainer)
    compute, best = getattr(inner, "compute", None), getattr(inner, "best", None)
    if compute is None or inner.params is None:
        return
    as_state = getattr(compute.net, "state_dict", None)
    for name, params in ((FINAL, inner.params), (BEST, best.params if best else None)):
        if params is None:
            continue
        state = (as_state(params) if as_state is not None else
                 {k: v.detach().cpu().clone() for k, v in params.items()})
        save_atomic(Path(out_dir) / name, state)


def save_atomic(path: Path, state: dict[str, Any]) -> None:
    """``torch.save(state, path)`` through a temporary file renamed into place."""
    import torch

    tmp = path.with_name(f".{path.name}.partial")
    try:
        with open(tmp, "wb") as handle:
            torch.save(state, handle)
        os.replace(tmp, path)
    except OSError as err:
        raise OutputError(f"cannot write {path}: {err.strerror or err}") from None
