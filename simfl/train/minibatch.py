"""Minibatch planning: which of a client's samples each local step trains on.

A job's plan is drawn from its own stream (``train/client/C/round/R``), so the inline
and the batched executor follow the same plan; :func:`job_plans` draws a whole
submission's plans at once for the batched executor.
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from simfl.core.config import Task
from simfl.core.records import TrainJob
from simfl.core.rng import RngTree


def minibatch_plan(n_samples: int, task: Task, rng: np.random.Generator) -> list[np.ndarray]:
    """Indices (into the client's samples) of each local step's minibatch.

    Epochs: each epoch is a fresh permutation cut into batches of ``batch_size`` (the
    last may be smaller). Steps: ``local_steps`` batches of ``min(batch_size, n)`` taken
    from back-to-back permutations. The plan depends only on the client's stream, so
    every executor follows the same one. It is :func:`plan_order` cut at
    :func:`plan_sizes`.
    """
    order = plan_order(n_samples, task, rng)
    return np.split(order, np.cumsum(plan_sizes(n_samples, task))[:-1]) if len(order) else []


def plan_sizes(n_samples: int, task: Task) -> np.ndarray:
    """The batch size of each local step of a client with ``n_samples`` samples (int64,
    read-only): it depends on the sample count and the task only, not on the client's
    stream."""
    return _plan_sizes(int(n_samples), task.batch_size, task.local_epochs, task.local_steps)


@functools.lru_cache(maxsize=4096)
def _plan_sizes(n_samples: int, b: int, epochs: int, steps: int | None) -> np.ndarray:
    if n_samples == 0:
        sizes = np.zeros(0, dtype=np.int64)
    elif steps is None:
        epoch = [b] * (n_samples // b) + ([n_samples % b] if n_samples % b else [])
        sizes = np.tile(np.array(epoch, dtype=np.int64), epochs)
    else:
        sizes = np.full(steps, min(b, n_samples), dtype=np.int64)
    sizes.flags.writeable = False  # shared between calls
    return sizes


def plan_order(n_samples: int, task: Task, rng: np.random.Generator) -> np.ndarray:
    """The minibatches of a client's plan back to back: positions into its samples,
    ``plan_sizes(n_samples, task).sum()`` of them, in step order (one permutation per
    epoch, or as many back-to-back permutations as ``local_steps`` batches need)."""
    if n_samples == 0:
        return np.zeros(0, dtype=np.int64)
    if task.local_steps is None:
        n_perms = task.local_epochs
        used = n_perms * n_samples
    else:
        used = task.local_steps * min(task.batch_size, n_samples)
        n_perms = -(-used // n_samples)
    if n_perms == 1:
        return rng.permutation(n_samples)[:used]
    return np.concatenate([rng.permutation(n_samples) for _ in range(n_perms)])[:used]


def job_plan(job: TrainJob, n_samples: int, task: Task, rngs: RngTree) -> list[np.ndarray]:
    """The minibatch plan of ``job``, from the stream ``train/client/C/round/R``."""
    return minibatch_plan(n_samples, task, job_stream(job, rngs))


def job_stream(job: TrainJob, rngs: RngTree) -> np.random.Generator:
    """The stream a job's minibatch plan is drawn from: ``train/client/C/round/R``."""
    return rngs.stream(f"train/client/{job.client}/round/{job.round}")


def job_plans(jobs: Sequence[TrainJob], client_indices: Sequence[np.ndarray], task: Task,
              rngs: RngTree) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every job's plan at once, as global sample indices: ``(samples, sizes, n_steps)``.

    ``samples`` holds job 0's minibatches back to back, then job 1's, ...; ``sizes`` the
    batch sizes in the same order and ``n_steps[j]`` job j's number of steps. Job j's
    plan is ``client_indices[client][job_plan(...)]`` exactly (the same stream and draws,
    :func:`plan_order`); the gathers and the cutting are done once for all jobs.
    """
    orders, sizes = [], []
    for job in jobs:
        idx = client_indices[job.client]
        orders.append(idx[plan_order(len(idx), task, job_stream(job, rngs))])
        sizes.append(plan_sizes(len(idx), task))
    n_steps = np.array([len(s) for s in sizes], dtype=np.int64)
    if not orders:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), n_steps
    return (np.concatenate(orders).astype(np.int64, copy=False), np.concatenate(sizes),
            n_steps)
