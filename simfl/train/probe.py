"""What a sampler may learn about clients besides their training updates (the torch side).

The numbers behind the :class:`~simfl.core.protocols.ClientProbe` capability: each
client's loss of a global model on its local training data (Power-of-Choice), and one
feature row per client for the FedGS graph: label histograms, the local update, or the
mean logits of the locally trained model on one Gaussian noise batch (docs/algorithms.md
§4.1). The simulation decides when these exchanges happen; nothing here takes time.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from simfl.core.records import TrainJob
from simfl.core.rng import RngTree
from simfl.train.data import FederatedData
from simfl.train.local import LossFn
from simfl.train.models import Params

#: the base round of the graph-building trainings (their own minibatch streams)
GRAPH_ROUND = -1


def label_histograms(data: FederatedData) -> np.ndarray:
    """Label counts of every client's training set, shape (n_clients, n_classes)."""
    sizes = np.array([len(i) for i in data.client_indices])
    owner = np.repeat(np.arange(len(sizes)), sizes)
    labels = data.y_train[np.concatenate(data.client_indices)].astype(np.int64)
    counts = np.zeros((len(sizes), data.n_classes))
    np.add.at(counts, (owner, labels), 1.0)
    return counts


class ClientStats:
    """Computes the probe's answers with the run's model, executor and loss."""

    def __init__(self, net, executor, loss: LossFn, x_test: np.ndarray, rngs: RngTree) -> None:
        self.net, self.executor, self.loss, self.rngs = net, executor, loss, rngs
        self.x_test = x_test

    def losses(self, params: Params, clients: Sequence[int]) -> np.ndarray:
        """Mean loss of ``params`` over each client's local training samples (0 if none)."""
        parts = [self.executor.client_indices[c] for c in clients]
        sizes = np.array([len(p) for p in parts], dtype=np.int64)
        if sizes.sum() == 0:
            return np.zeros(len(parts))
        device = self.executor.device
        idx = torch.from_numpy(np.concatenate(parts)).to(device)
        owner = torch.from_numpy(np.repeat(np.arange(len(parts)), sizes)).to(device)
        with torch.no_grad():
            per_sample = self.loss(self.net.forward(params, self.executor.x[idx]),
                                   self.executor.y[idx])
            sums = torch.zeros(len(parts), dtype=per_sample.dtype, device=device)
            sums.index_add_(0, owner, per_sample)
        return sums.double().cpu().numpy() / np.maximum(sizes, 1)

    def features(self, kind: str, params: Params, clients: Sequence[int],
                 noise_batch: int) -> np.ndarray:
        """One row per client after one local training from ``params``.

        ``update``: the flattened local update. ``logit``: the mean output of the local
        model on a Gaussian batch of ``noise_batch`` samples whose mean and standard
        deviation are those of the first ``noise_batch`` test samples (one batch, from
        the ``sampler/fedgs/noise`` stream, shared by all clients).
        """
        jobs = [TrainJob(int(c), GRAPH_ROUND, GRAPH_ROUND) for c in clients]
        updates = sorted(self.executor.submit(jobs, {GRAPH_ROUND: params}),
                         key=lambda u: u.client)
        names = sorted(params)
        if kind == "update":
            rows = [torch.cat([u.delta[k].flatten() for k in names]) for u in updates]
            return torch.stack(rows).double().cpu().numpy()
        ref = self.x_test[:noise_batch]
        rng = self.rngs.stream("sampler/fedgs/noise")
        noise = rng.normal(ref.mean(), ref.std(), size=(noise_batch,) + ref.shape[1:])
        first = params[names[0]]
        x = torch.from_numpy(noise).to(dtype=first.dtype, device=first.device)
        with torch.no_grad():
            rows = [self.net.forward({k: params[k] + u.delta[k] for k in names}, x).mean(dim=0)
                    for u in updates]
        return torch.stack(rows).double().cpu().numpy()
