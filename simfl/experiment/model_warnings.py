"""The warnings a training run adds to ``summary.json`` about its global model."""

from __future__ import annotations

from typing import Any


def never_updated(server: Any, n_trained: int, waiting_for: float | None, n_arrived: int,
                  n_rounds: int) -> str:
    """The warning of a run whose global model never moved although updates arrived.

    No round reached ``server.min_updates``, or the aggregator never stepped (e.g. MIFA
    with ``init = "wait_for_all"`` while some client never reports); every evaluation is
    then one of the initial model.
    """
    if n_trained == 0:
        why = (f"no round had the server.min_updates = {server.min_updates} arrivals it "
               "takes to train")
    else:
        why = f"the {server.algorithm.kind} aggregator applied none of them"
        if waiting_for:
            why += f" (it was still waiting for the updates of {int(waiting_for)} clients)"
    return (f"the global model was never updated: {n_arrived} updates arrived in "
            f"{n_rounds} rounds but {why}; every evaluation is of the initial model")


def divergence(diverged: list[float] | None) -> list[str]:
    """The warning for a model that became NaN or infinite: ``diverged`` is
    :attr:`ModelTrainer.diverged`. The run goes on (its timing and energy tables stay
    valid), but every later score is of a broken model."""
    if diverged is None:
        return []
    completed, t_s, loss = diverged
    if completed == 0:
        return [f"the initial model's test loss is {loss}, not a finite number: the data "
                "set holds NaN or infinite values (or the model cannot score it); every "
                "evaluation is meaningless"]
    return [f"the global model diverged: at the evaluation after round {int(completed)} "
            f"(t = {t_s:g} s) its parameters or its test loss ({loss}) were no longer "
            "finite, and every later score is meaningless; lower task.lr or the server's "
            "step size, or look for NaN or infinite values in the data set"]
