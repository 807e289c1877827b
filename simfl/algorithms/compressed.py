"""Any aggregator over compressed uploads: it sees each update as the server decodes it.

:class:`Compressed` wraps an aggregator. Each received update's delta is encoded on the
client's side (:mod:`simfl.algorithms.compression`) with the client's own codec state
(top-k's error-feedback residual) and a torch generator of the named stream
``compression/client/<c>/round/<base round>``, decoded, and handed to the wrapped rule
in place of the exact delta. The per-client codec states live in the aggregator's state
(:class:`CompressionState`), so a checkpoint keeps them. A local rule's extras
(SCAFFOLD's control-variate change) travel exact.

``sign`` with ``vote = "majority"`` adds a server step, :func:`majority_vote`: the
aggregator's mean of the clients' unit signs is the vote, and the server moves every
coordinate by ``server_step`` * sign(vote) (a tie moves nothing).
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple, Sequence

import numpy as np

from simfl.algorithms.compression import Codec, build_codec
from simfl.algorithms.server_optimizers import EmptyState, Tensors, Transform, chain
from simfl.core.config import compression as cfg
from simfl.core.records import ClientUpdate, RoundOutcome, SummedUpdates
from simfl.core.rng import RngTree


class CompressionState(NamedTuple):
    """The wrapped aggregator's state, and each client's codec state by client id (only
    clients whose codec keeps one: top-k's residual with error feedback)."""

    inner: Any
    clients: dict[int, Any]


class Compressed:
    """``aggregator`` fed with the decoded updates of ``codec``; random numbers from ``rngs``."""

    #: the wrapped rule's weighted sum, if it needs one, is made here from decoded deltas
    needs = None

    def __init__(self, aggregator: Any, codec: Codec, rngs: RngTree) -> None:
        self.aggregator, self.codec, self.rngs = aggregator, codec, rngs

    def __getattr__(self, name: str) -> Any:
        """The wrapped rule's attributes (``sum_weight``, ...) read through."""
        if name == "aggregator":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.aggregator, name)

    def init(self, params: Any, n_samples: np.ndarray) -> CompressionState:
        return CompressionState(self.aggregator.init(params, n_samples), {})

    def client_payload(self, state: CompressionState, client: int) -> Any:
        return self.aggregator.client_payload(state.inner, client)

    def aggregate(self, state: CompressionState, params: Any, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]
                  ) -> tuple[Any, CompressionState, dict[str, Any]]:
        import torch

        clients = dict(state.clients)
        decoded: list[ClientUpdate] = []
        for update in updates:
            generator = torch.Generator().manual_seed(self.rngs.int_seed(
                f"compression/client/{update.client}/round/{update.base_round}"))
            payload, _, kept = self.codec.encode(update.delta, clients.get(update.client),
                                                 generator)
            if kept is not None:
                clients[update.client] = kept
            decoded.append(dataclasses.replace(update, delta=self.codec.decode(payload)))
        if getattr(self.aggregator, "needs", None) == "sum":
            decoded = _summed(decoded, [self.aggregator.sum_weight(outcome, u.client, u.n_samples)
                                        for u in decoded])
        params, inner, metrics = self.aggregator.aggregate(state.inner, params, outcome, decoded)
        return params, CompressionState(inner, clients), metrics


def _summed(updates: list[ClientUpdate], weights: list[float]) -> SummedUpdates:
    """The updates as an executor that sums them would return them (:class:`SummedUpdates`)."""
    total: dict[str, Any] = {}
    for update, weight in zip(updates, weights):
        for name, value in update.delta.items():
            term = value * weight
            total[name] = term if name not in total else total[name] + term
    bare = [dataclasses.replace(u, delta={}) for u in updates]
    return SummedUpdates(bare, total, weights)


def majority_vote(server_step: float) -> Transform:
    """step = server_step * sign(Delta): each coordinate moves by the vote's sign."""

    def init(params: Tensors) -> EmptyState:
        return EmptyState()

    def update(g: Tensors, state: EmptyState, params: Tensors) -> tuple[dict[str, Any], Any]:
        return {name: value.sign() * server_step for name, value in g.items()}, state

    return Transform(init, update)


def compressed(aggregator: Any, config: cfg.Compression, rngs: RngTree) -> Any:
    """``aggregator`` over ``config``'s uploads (itself when nothing is compressed)."""
    if isinstance(config, cfg.NoCompression):
        return aggregator
    return Compressed(aggregator, build_codec(config), rngs)


def with_vote(config: cfg.Compression, optimizer: Transform | None) -> Transform | None:
    """The server optimiser, after the majority vote's step when ``sign`` votes."""
    if not (isinstance(config, cfg.Sign) and config.vote == "majority"):
        return optimizer
    vote = majority_vote(config.server_step)
    return vote if optimizer is None else chain(vote, optimizer)
