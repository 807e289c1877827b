"""The journal of a run's model side: what the timing side learned from it, in order.

The simulation decides rounds by itself except at two kinds of points: the counts of
updates trained and aggregated in each round (the round's record), and the answers to
the samplers' probes (client losses, learned features). :class:`JournaledTrainer`
records those answers while the run goes on; a resumed run replays its completed rounds
on the same random streams with the journal answering instead of the model, which
rebuilds every piece of the timing side (clock, batteries, availability chains, the
MAC, devices still uploading late, the sampler's state) exactly, without training.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from simfl.core.records import RoundOutcome
from simfl.experiment.checkpoint import CheckpointError
from simfl.experiment.trainer import Trainer
from simfl.metrics.recorder import RunRecorder
from simfl.sim.rounds.server_steps import Update


class JournaledTrainer:
    """``inner`` with a journal; given ``entries``, it first replays them (see
    :meth:`end_replay`): nothing is trained, evaluated or recorded by the model side,
    and every question is answered from the journal."""

    def __init__(self, inner: Trainer, entries: list[tuple[Any, ...]] | None = None) -> None:
        self.inner = inner
        self.entries: list[tuple[Any, ...]] = list(entries or [])
        self.replaying = bool(self.entries)
        self._cursor = 0

    @property
    def params(self) -> Any:
        return self.inner.params

    @property
    def device(self) -> Any:
        return self.inner.device

    @property
    def accuracy(self) -> float | None:
        return None if self.replaying else self.inner.accuracy

    def end_replay(self) -> None:
        """The journal's rounds are replayed; from now on the model side works."""
        if self._cursor != len(self.entries):
            raise CheckpointError(f"the replay used {self._cursor} of the journal's "
                                  f"{len(self.entries)} entries: this run does not replay "
                                  "the same way (another simfl version or scenario?)")
        self.replaying = False

    def _next(self, kind: str) -> tuple[Any, ...]:
        if self._cursor >= len(self.entries) or self.entries[self._cursor][0] != kind:
            found = (self.entries[self._cursor][0] if self._cursor < len(self.entries)
                     else "the journal's end")
            raise CheckpointError(f"the replay asked for {kind} at journal entry "
                                  f"{self._cursor} but found {found}: this run does not replay "
                                  "the same way (another simfl version or scenario?)")
        self._cursor += 1
        return self.entries[self._cursor - 1]

    def begin_round(self, round: int, t_s: float) -> None:
        if not self.replaying:
            self.inner.begin_round(round, t_s)

    def train(self, round: int, outcome: RoundOutcome,
              late_running: Mapping[int, int]) -> tuple[int, int]:
        if self.replaying:
            _, n_trained, n_aggregated = self._next("train")
            return n_trained, n_aggregated
        n_trained, n_aggregated = self.inner.train(round, outcome, late_running)
        self.entries.append(("train", n_trained, n_aggregated))
        return n_trained, n_aggregated

    def apply(self, version: int, updates: Sequence[Update], staleness: Sequence[float],
              versions: Mapping[int, Any]) -> tuple[int, int]:
        if self.replaying:
            _, n_trained, n_applied = self._next("apply")
            return n_trained, n_applied
        n_trained, n_applied = self.inner.apply(version, updates, staleness, versions)
        self.entries.append(("apply", n_trained, n_applied))
        return n_trained, n_applied

    def evaluate_due(self, recorder: RunRecorder, t_close_s: float, completed: int,
                     before_close: bool) -> None:
        if not self.replaying:
            self.inner.evaluate_due(recorder, t_close_s, completed, before_close)

    def evaluate_last(self, recorder: RunRecorder, t_s: float, completed: int) -> None:
        self.inner.evaluate_last(recorder, t_s, completed)

    def evaluate(self, recorder: RunRecorder, t_s: float, completed: int) -> None:
        if not self.replaying:
            self.inner.evaluate(recorder, t_s, completed)

    def client_losses(self, clients: np.ndarray) -> np.ndarray:
        return self._answer("losses", clients, lambda: self.inner.client_losses(clients))

    def client_features(self, kind: str, clients: np.ndarray, noise_batch: int) -> np.ndarray:
        return self._answer("features", clients,
                            lambda: self.inner.client_features(kind, clients, noise_batch))

    def _answer(self, kind: str, clients: np.ndarray, ask: Any) -> np.ndarray:
        if self.replaying:
            answer: np.ndarray = self._next(kind)[1]
            if len(answer) != len(clients):
                raise CheckpointError(f"the replay asked {len(clients)} clients for {kind} "
                                      f"where the run asked {len(answer)}")
            return answer
        answer = np.asarray(ask())
        self.entries.append((kind, answer.copy()))
        return answer

    def warnings(self, n_arrived: int, n_rounds: int) -> list[str]:
        return self.inner.warnings(n_arrived, n_rounds)

    def save_models(self, out_dir: Path) -> None:
        self.inner.save_models(out_dir)

    def snapshot(self) -> dict[str, Any]:
        """The model side's state (for a checkpoint)."""
        return self.inner.snapshot()

    def restore(self, state: dict[str, Any]) -> None:
        self.inner.restore(state)
