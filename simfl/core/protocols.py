"""The extension-point contracts through which sim, train, algorithms and metrics meet."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence

import numpy as np

from simfl.core.records import ClientUpdate, RoundOutcome, TrainJob


@dataclass(frozen=True)
class PopulationView:
    """What the server knows when it picks a round's clients.

    ``available`` holds the ids of the clients it believes online (sorted);
    ``n_samples`` the training-set size of every registered client.
    """

    round: int
    t_s: float
    n_clients: int
    available: np.ndarray
    n_samples: np.ndarray


class Sampler(Protocol):
    """Picks clients. State is explicit: ``observe`` returns the new state."""

    def init(self, n_samples: np.ndarray) -> Any: ...

    def select(self, state: Any, view: PopulationView, k: int,
               rng: np.random.Generator) -> np.ndarray: ...

    def observe(self, state: Any, outcome: RoundOutcome) -> Any: ...


class Aggregator(Protocol):
    """Turns received updates into new global parameters; never mutates its inputs."""

    def init(self, params: Any, n_samples: np.ndarray) -> Any: ...

    def client_payload(self, state: Any, client: int) -> Any: ...

    def aggregate(self, state: Any, params: Any, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]) -> tuple[Any, Any, dict[str, float]]: ...


class Executor(Protocol):
    """Trains exactly the given jobs, each from the model version it names."""

    def submit(self, jobs: Sequence[TrainJob], versions: dict[int, Any]) -> list[ClientUpdate]: ...
