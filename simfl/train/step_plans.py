"""Clients' minibatch plans laid out step by step, for training them as one stack.

The batched executor (:mod:`simfl.train.batched`) trains clients whose plans differ in
length and batch sizes; :func:`pad_plans` turns their plans into, per local step, the
active prefix of the stack and its padded sample indices and loss weights.
"""

from __future__ import annotations

import numpy as np
import torch


def pad_plans(samples: np.ndarray, sizes: np.ndarray, n_steps: np.ndarray,
              device: torch.device, dtype: torch.dtype) -> list:
    """Per step: (number of active clients, global indices [K_t, B_t], weights [K_t, B_t]).

    ``samples`` and ``sizes`` are the clients' plans back to back (client 0's batches,
    then client 1's, ...), ``n_steps`` their numbers of batches, sorted longest first,
    so the active clients of a step are a prefix of the stack. A padded slot repeats
    the first sample of its batch and has weight 0.
    """
    total = int(n_steps[0]) if len(n_steps) else 0
    if total == 0:
        return []
    k, width = len(n_steps), int(sizes.max())
    client = np.repeat(np.arange(k), n_steps)  # of each batch
    step = np.arange(len(sizes)) - np.repeat(np.cumsum(n_steps) - n_steps, n_steps)
    first = np.cumsum(sizes) - sizes  # of each batch, into samples
    index = np.zeros((total, k, width), dtype=np.int64)
    weight = np.zeros((total, k, width), dtype=np.float64)
    size = np.zeros((total, k), dtype=np.int64)
    index[step, client] = samples[first][:, None]  # padding: the batch's first sample
    size[step, client] = sizes
    of = np.repeat(np.arange(len(sizes)), sizes)  # the batch of each sample
    slot = np.arange(len(samples)) - first[of]
    index[step[of], client[of], slot] = samples
    weight[step[of], client[of], slot] = 1.0 / sizes[of]
    index_dev = torch.from_numpy(index).to(device)
    weight_dev = torch.from_numpy(weight).to(device=device, dtype=dtype)
    active = (n_steps[None, :] > np.arange(total)[:, None]).sum(axis=1)
    out = []
    for t in range(total):
        k_t = int(active[t])
        b_t = int(size[t, :k_t].max())
        out.append((k_t, index_dev[t, :k_t, :b_t], weight_dev[t, :k_t, :b_t]))
    return out
