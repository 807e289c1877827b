"""What the loops ask of the model side of a run, and the null model side.

The loops (:mod:`~simfl.experiment.loop` for rounds, :mod:`~simfl.experiment.async_loop`
for the asynchronous modes) decide in simulated time and then hand the model side what
arrived through :class:`Trainer` alone: a round's outcome (:meth:`Trainer.train`) or an
asynchronous server step's updates (:meth:`Trainer.apply`), and the times evaluations
may fall due. They read the model (``params``) but never change it.
:class:`NullTrainer` is the model side of timing-only runs (nothing trained or scored,
torch never imported), so no loop has a branch on whether a run trains;
:class:`~simfl.experiment.training.ModelTrainer` is the real one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence

import numpy as np

from simfl.core.records import RoundOutcome
from simfl.metrics.recorder import RunRecorder
from simfl.sim.rounds.server_steps import Update


class Trainer(Protocol):
    """What the loops ask of the model side of a run."""

    @property
    def params(self) -> Any: ...  # the global model (None without one)

    @property
    def accuracy(self) -> float | None: ...  # the latest evaluation's

    @property
    def device(self) -> Any: ...  # where the model lives (a torch device; None without one)

    def begin_round(self, round: int, t_s: float) -> None: ...  # a session may start

    def train(self, round: int, outcome: RoundOutcome,
              late_running: Mapping[int, int]) -> tuple[int, int]:
        """Train and aggregate a round's arrivals: (updates trained, updates aggregated);
        the models of the rounds in ``late_running`` (device -> round) are kept."""

    def apply(self, version: int, updates: Sequence[Update], staleness: Sequence[float],
              versions: Mapping[int, Any]) -> tuple[int, int]:
        """Train an asynchronous step's updates from their ``versions`` and apply them
        with their staleness factors: (updates trained, updates applied)."""

    def evaluate_due(self, recorder: RunRecorder, t_close_s: float, completed: int,
                     before_close: bool) -> None: ...

    def evaluate_last(self, recorder: RunRecorder, t_s: float, completed: int) -> None: ...

    def evaluate(self, recorder: RunRecorder, t_s: float, completed: int) -> None: ...

    def client_losses(self, clients: np.ndarray) -> np.ndarray: ...

    def client_features(self, kind: str, clients: np.ndarray, noise_batch: int) -> np.ndarray: ...

    def warnings(self, n_arrived: int, n_rounds: int) -> list[str]: ...

    def save_models(self, out_dir: Path) -> None: ...  # model.pt, model_best.pt

    def snapshot(self) -> dict[str, Any]: ...

    def restore(self, state: dict[str, Any]) -> None: ...


class NullTrainer:
    """Timing-only runs: no model, nothing trained, aggregated or evaluated.

    The probe's answers are 0 (losses, learned features), so samplers fall back to their
    tie rules.
    """

    params = None
    accuracy: float | None = None
    device = None

    def begin_round(self, round: int, t_s: float) -> None:
        pass

    def train(self, round: int, outcome: RoundOutcome,
              late_running: Mapping[int, int]) -> tuple[int, int]:
        return 0, 0

    def apply(self, version: int, updates: Sequence[Update], staleness: Sequence[float],
              versions: Mapping[int, Any]) -> tuple[int, int]:
        return 0, 0

    def evaluate_due(self, recorder: RunRecorder, t_close_s: float, completed: int,
                     before_close: bool) -> None:
        pass

    def evaluate_last(self, recorder: RunRecorder, t_s: float, completed: int) -> None:
        pass

    def evaluate(self, recorder: RunRecorder, t_s: float, completed: int) -> None:
        pass

    def client_losses(self, clients: np.ndarray) -> np.ndarray:
        return np.zeros(len(clients))

    def client_features(self, kind: str, clients: np.ndarray, noise_batch: int) -> np.ndarray:
        return np.zeros((len(clients), 1))

    def warnings(self, n_arrived: int, n_rounds: int) -> list[str]:
        return []

    def save_models(self, out_dir: Path) -> None:
        pass

    def snapshot(self) -> dict[str, Any]:
        return {}

    def restore(self, state: dict[str, Any]) -> None:
        pass
