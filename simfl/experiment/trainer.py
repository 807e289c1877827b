"""What the round loop asks of the model side of a run, and the null model side.

:class:`NullTrainer` is the model side of timing-only runs (nothing trained or scored,
torch never imported), so the round loop has no branch on whether a run trains;
:class:`~simfl.experiment.training.ModelTrainer` is the real one.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol

import numpy as np

from simfl.core.records import RoundOutcome
from simfl.metrics.recorder import RunRecorder


class Trainer(Protocol):
    """What the round loop asks of the model side of a run."""

    @property
    def params(self) -> Any: ...  # the global model (None without one)

    @property
    def accuracy(self) -> float | None: ...  # the latest evaluation's

    @property
    def device(self) -> Any: ...  # where the model lives (a torch device; None without one)

    def begin_round(self, round: int, t_s: float) -> None: ...

    def train(self, round: int, outcome: RoundOutcome,
              late_running: Mapping[int, int]) -> tuple[int, int]: ...

    def evaluate_due(self, recorder: RunRecorder, t_close_s: float, completed: int,
                     before_close: bool) -> None: ...

    def evaluate_last(self, recorder: RunRecorder, t_s: float, completed: int) -> None: ...

    def evaluate(self, recorder: RunRecorder, t_s: float, completed: int) -> None: ...

    def client_losses(self, clients: np.ndarray) -> np.ndarray: ...

    def client_features(self, kind: str, clients: np.ndarray, noise_batch: int) -> np.ndarray: ...

    def warnings(self, n_arrived: int, n_rounds: int) -> list[str]: ...

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

    def snapshot(self) -> dict[str, Any]:
        return {}

    def restore(self, state: dict[str, Any]) -> None:
        pass
