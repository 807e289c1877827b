"""The :class:`~simfl.core.protocols.ClientProbe` capability of a run."""

from __future__ import annotations

import numpy as np

from simfl.experiment.trainer import Trainer
from simfl.sim.simulation import Simulation

#: bytes of a client's answer to a loss query (one float64)
LOSS_REPLY_BYTES = 8


class RunProbe:
    """What samplers may learn about clients: the simulation times each exchange
    (:meth:`Simulation.run_query`), the trainer computes the answers about its current
    global model (:mod:`simfl.train.probe`).

    Counted apart from training, in ``summary.json``: ``queried_losses`` (loss answers
    received), ``graph_updates`` (answers to the graph-building exchange: local updates) and
    ``query_time_s`` (simulated time spent waiting for answers). A loss query costs a
    model download, one pass over the local data at training speed (forward passes are
    cheaper: an upper bound) and an 8-byte upload. Timing-only runs have no model (the
    null trainer answers 0 for losses and learned features, so samplers fall back to
    their tie rules) and, unless sessions or availability need it, no data (label
    histograms are 0 too).
    """

    def __init__(self, sim: Simulation, data, trainer: Trainer) -> None:
        self.sim, self.data, self.trainer = sim, data, trainer
        self.counts = {"queried_losses": 0, "graph_updates": 0, "query_time_s": 0.0}
        self.warnings: list[str] = []  # for summary.json: what a sampler had to do without

    def _exchange(self, round: int, clients: np.ndarray, work: np.ndarray, reply_bytes: int,
                  stream: str) -> np.ndarray:
        t_start = self.sim.now_s
        answered = self.sim.run_query(round, clients, work, reply_bytes, stream)
        self.counts["query_time_s"] += self.sim.now_s - t_start
        return answered

    def losses(self, round: int, clients: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        answered = self._exchange(round, np.asarray(clients, dtype=np.int64),
                                  self.sim.n_samples.astype(float), LOSS_REPLY_BYTES, "loss_query")
        self.counts["queried_losses"] += len(answered)
        return answered, self.trainer.client_losses(answered)

    def features(self, kind: str, noise_batch: int) -> np.ndarray:
        n = len(self.sim.n_samples)
        if kind == "oracle":
            if self.data is None:
                return np.zeros((n, 1))
            from simfl.train.probe import label_histograms

            return label_histograms(self.data)
        if kind == "optimum":
            if self.data is None:
                return np.zeros((n, 1))
            from simfl.train.local_optimum import client_optima

            return client_optima(self.data)
        answered = self._exchange(0, np.arange(n), self.sim.work_samples, self.sim.model_bytes,
                                  "graph")
        self.counts["graph_updates"] += len(answered)
        if len(answered) == 0:  # every row NaN: no edges, every pair of clients at distance 1
            self.warnings.append(
                f"no client answered the graph-building exchange within server.deadline_s = "
                f"{self.sim.deadline_s:g} s: the client graph has no edges, so the sampler "
                "chooses by its participation counts alone")
            rows = np.zeros((0, 1))
        else:
            rows = self.trainer.client_features(kind, answered, noise_batch)
        out = np.full((n, rows.shape[1]), np.nan)
        out[answered] = rows
        return out
