"""Training jobs and their results: what the trainer is asked to compute and what it returns.

A :class:`TrainJob` names a client and the model it starts from; its result is a
:class:`ClientUpdate`, or, for an aggregator that reads only the weighted sum of the
deltas, :class:`SummedUpdates`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from simfl.core.payloads import LocalResult


@dataclass(frozen=True)
class TrainJob:
    """One client update to compute: train ``client`` from the model of ``base_round``.

    ``payload`` is the aggregator's :class:`LocalPayload` (None: plain SGD).
    """

    client: int
    base_round: int
    round: int
    payload: Any = None


@dataclass(frozen=True)
class ClientUpdate:
    """The result of a TrainJob.

    ``delta`` maps parameter names to ``y_i - w_base`` (local model minus the model it
    started from); ``extra`` is the local rule's :class:`LocalResult` (e.g. SCAFFOLD's
    control-variate change), or any mapping with the same keys.
    """

    client: int
    base_round: int
    n_samples: int
    delta: Any
    train_loss: float = float("nan")
    extra: Mapping[str, Any] = field(default_factory=LocalResult)


class SummedUpdates(list["ClientUpdate"]):
    """The updates of a submission whose deltas were summed as they were made.

    A list of :class:`ClientUpdate` in job order, each with its client, base round,
    sample count, loss and extras but an empty ``delta``, plus

    * ``weighted_sum``: ``{name: sum_k weights[k] * delta_k[name]}``, the deltas being
      the ones the executor would otherwise have returned;
    * ``weights``: each update's weight (from the aggregator's ``weigh``), in list order;
    * ``n_summed``: how many deltas went into the sum (the executor's own count).

    Summing as they are made saves writing K fresh delta tensors per round; an
    aggregator whose step reads only this sum (``needs = "sum"``, e.g. FedAvg) asks
    for it.
    """

    def __init__(self, updates: Sequence[ClientUpdate], weighted_sum: dict[str, Any],
                 weights: Sequence[float], n_summed: int | None = None) -> None:
        super().__init__(updates)
        self.weighted_sum = weighted_sum
        self.weights = [float(w) for w in weights]
        self.n_summed = len(self.weights) if n_summed is None else n_summed

    def __getitem__(self, item: Any) -> Any:
        """An update, or for a slice the records and weights it selects with the same sum
        and ``n_summed`` (taking records out does not take their deltas out of the sum)."""
        if isinstance(item, slice):
            return SummedUpdates(list.__getitem__(self, item), self.weighted_sum,
                                 self.weights[item], self.n_summed)
        return list.__getitem__(self, item)
