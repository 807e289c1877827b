"""Server rules of the asynchronous modes: FedAsync mixing and the FedBuff buffer.

Pure functions on parameter mappings (name -> tensor or array; only ``+``, ``-`` and
``*`` by a float are used, so torch tensors and NumPy arrays both work), and an
Optax-like pair per rule: ``init(params) -> state`` and ``update(state, params, ...) ->
(params, state, stepped)`` with the state explicit (docs/algorithms.md §10).

* FedAsync (Xie et al. 2019, Algorithm 1): an update trained from version w_base and
  arriving tau versions later is mixed in at once,
  w <- (1 - a) w + a w_client with a = alpha * s(tau) and w_client = w_base + delta.
* FedBuff (Nguyen et al. 2022, Algorithm 1): each arrival adds s(tau) * delta to a
  buffer; at the K-th arrival w <- w + eta_g * (1/K) * sum of the buffer, the buffer
  empties and the server's version advances.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

Params = Mapping[str, Any]


def mix(params: Params, client_params: Params, weight: float) -> dict[str, Any]:
    """(1 - weight) * params + weight * client_params, name by name."""
    return {name: params[name] + (client_params[name] - params[name]) * weight
            for name in params}


def client_model(base: Params, delta: Params) -> dict[str, Any]:
    """The client's local model: the version it was sent plus its delta."""
    return {name: base[name] + delta[name] for name in base}


class FedAsyncRule:
    """FedAsync's server step, one arrival at a time; the state is the version count."""

    def __init__(self, alpha: float) -> None:
        self.alpha = alpha

    def init(self, params: Params) -> int:
        return 0

    def update(self, state: int, params: Params, base: Params, delta: Params,
               staleness_weight: float) -> tuple[dict[str, Any], int, bool]:
        """Mix the client model (``base`` + ``delta``) in with weight alpha * s(tau)."""
        weight = self.alpha * staleness_weight
        return mix(params, client_model(base, delta), weight), state + 1, True


@dataclass(frozen=True)
class Buffer:
    """FedBuff's buffer: the sum of s(tau_i) * delta_i so far (None when empty) and its count."""

    total: dict[str, Any] | None = None
    count: int = 0


def buffer_add(buffer: Buffer, delta: Params, staleness_weight: float) -> Buffer:
    """``buffer`` with s(tau) * delta added."""
    scaled = {name: delta[name] * staleness_weight for name in delta}
    if buffer.total is None:
        return Buffer(scaled, 1)
    return Buffer({name: buffer.total[name] + scaled[name] for name in scaled},
                  buffer.count + 1)


def buffer_step(params: Params, buffer: Buffer, server_lr: float) -> dict[str, Any]:
    """w + eta_g * (1/K) * sum of the buffer, K = the buffer's count (at least 1)."""
    if buffer.total is None or buffer.count == 0:
        raise ValueError("an empty buffer has no step")
    scale = server_lr / buffer.count
    return {name: params[name] + buffer.total[name] * scale for name in params}


class FedBuffRule:
    """FedBuff's server step: buffer each arrival, step at every ``size``-th."""

    def __init__(self, size: int, server_lr: float) -> None:
        self.size = size
        self.server_lr = server_lr

    def init(self, params: Params) -> Buffer:
        return Buffer()

    def update(self, state: Buffer, params: Params, delta: Params,
               staleness_weight: float) -> tuple[Params, Buffer, bool]:
        """Add one arrival; at the ``size``-th, step and empty the buffer (stepped True)."""
        state = buffer_add(state, delta, staleness_weight)
        if state.count < self.size:
            return params, state, False
        return buffer_step(params, state, self.server_lr), Buffer(), True
