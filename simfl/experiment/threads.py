"""How many threads torch uses inside one training run.

torch splits each operation over as many threads as the machine has cores. For a small
model an operation is too short to share: the threads spend their time waiting for
each other, and on a machine where other processes are busy every multi-threaded
operation waits for the slowest core. A run whose model has fewer than
:data:`SMALL_MODEL_PARAMS` parameters therefore trains with one thread unless the user
asked for a count (``run.threads``, or the ``OMP_NUM_THREADS`` environment variable,
which torch reads itself). docs/performance.md gives the measurements behind the
threshold.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator

from simfl.core.config import Scenario

#: below this many parameters a run trains with one torch thread by default
SMALL_MODEL_PARAMS = 1_000_000


def choose_threads(n_params: int, requested: int | None, env: str | None) -> int | None:
    """The torch thread count for a run, or None to leave torch's own count.

    Parameters
    ----------
    n_params
        The model's number of parameters.
    requested
        ``run.threads`` (or a caller's forced count); None when not set.
    env
        The ``OMP_NUM_THREADS`` environment variable, None when unset.

    Returns
    -------
    int or None
        ``requested`` when given; None when ``OMP_NUM_THREADS`` is set (torch already
        follows it); 1 for a model below :data:`SMALL_MODEL_PARAMS` parameters; None
        (torch's default, one thread per core) for a larger one.
    """
    if requested is not None:
        return requested
    if env is not None and env.strip():
        return None
    return 1 if n_params < SMALL_MODEL_PARAMS else None


def model_params(scenario: Scenario) -> int:
    """The number of parameters of the scenario's model (no torch needed)."""
    from simfl.train.models import PARAM_BYTES, model_bytes

    task = scenario.task
    return model_bytes(task.model, task.dataset.input_shape(),
                       task.dataset.shape()[1]) // PARAM_BYTES


@contextlib.contextmanager
def torch_threads(scenario: Scenario, forced: int | None = None) -> Iterator[int | None]:
    """torch's intra-op thread count chosen for ``scenario`` during the block.

    Yields the count torch runs with, or None for a timing-only run (torch is then not
    even imported). The previous count is restored afterwards.
    """
    if scenario.run.timing_only:
        yield None
        return
    import torch

    requested = scenario.run.threads if forced is None else forced
    chosen = choose_threads(model_params(scenario), requested, os.environ.get("OMP_NUM_THREADS"))
    before = torch.get_num_threads()
    if chosen is not None:
        torch.set_num_threads(chosen)
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(before)
