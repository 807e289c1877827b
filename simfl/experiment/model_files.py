"""The trained model in the run folder: ``model.pt`` (final) and ``model_best.pt``.

Both are ``state_dict``s saved with ``torch.save``: for a ``torch_module`` model the
user's module's own (``module.load_state_dict(torch.load(path))`` restores it), for a
built-in model the ``{name: tensor}`` dict of its named parameters. ``model_best.pt``
is the global model of the evaluation with the highest test accuracy (the earliest of
equals). Each file is written to a temporary name and renamed into place. Timing-only
runs train no model and write neither.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from simfl.core.errors import OutputError

FINAL, BEST = "model.pt", "model_best.pt"


def write_models(out_dir: Path, net: Any, final: Any, best: Any) -> None:
    """Write ``model.pt`` (the model ``final``) and ``model_best.pt`` (``best``, the
    model of the best evaluation, :class:`~simfl.experiment.eval_schedule.BestModel`)
    of the run's model ``net`` into ``out_dir``; a model that is None is not written."""
    as_state = getattr(net, "state_dict", None)
    for name, params in ((FINAL, final), (BEST, best)):
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
