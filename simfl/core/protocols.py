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


class ClientProbe(Protocol):
    """What a sampler may learn about clients beyond the view: an explicit capability.

    Implemented by the composition root. The simulation decides when the exchange
    happens and charges it in simulated time (it advances the clock before the round's
    invitations); the trainer computes the numbers. Exchanges are counted apart from
    training. ``losses`` returns the clients that answered (sorted) and the global
    model's mean local loss of each. ``features`` returns one row per client (all
    clients): ``"oracle"`` label histograms or ``"optimum"`` each client's optimal
    linear-softmax parameters (both free, no exchange), or, after every client
    trained once from the current model, ``"logit"`` (mean logits on one Gaussian noise
    batch) or ``"update"`` (the flattened local update); clients that did not answer
    get a row of NaN.
    """

    def losses(self, round: int, clients: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def features(self, kind: str, noise_batch: int) -> np.ndarray: ...


class Sampler(Protocol):
    """Picks clients. State is explicit: ``observe`` returns the new state."""

    def init(self, n_samples: np.ndarray) -> Any: ...

    def select(self, state: Any, view: PopulationView, k: int,
               rng: np.random.Generator) -> np.ndarray: ...

    def observe(self, state: Any, outcome: RoundOutcome) -> Any: ...


class Aggregator(Protocol):
    """Turns received updates into new global parameters; never mutates its inputs.

    ``updates`` are those of ``outcome.received``, plus, only for an aggregator whose
    config ``wants_late``, those of ``outcome.late_received`` (``base_round`` before
    ``outcome.round``).
    """

    def init(self, params: Any, n_samples: np.ndarray) -> Any: ...

    def client_payload(self, state: Any, client: int) -> Any: ...

    def aggregate(self, state: Any, params: Any, outcome: RoundOutcome,
                  updates: Sequence[ClientUpdate]) -> tuple[Any, Any, dict[str, float]]: ...


class Executor(Protocol):
    """Trains exactly the given jobs, each from the model version it names."""

    def submit(self, jobs: Sequence[TrainJob], versions: dict[int, Any]) -> list[ClientUpdate]: ...
