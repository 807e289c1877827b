"""An executor that trains all jobs of a submission together, as one batched network.

Every job's parameters are stacked into ``[K, ...]`` tensors (K jobs, each from its own
model version) and each local step runs one batched forward and backward pass. How
depends on the model's ``batching`` (:mod:`simfl.train.models`):

* ``"dense"`` (logreg, mlp): ``torch.baddbmm``, the backward written out by hand
  (autograd only for the loss's gradient at the logits). On a CPU the jobs are trained
  in chunks of a few megabytes of parameters (:attr:`BatchedExecutor.cpu_chunk_bytes`),
  so that a chunk's weights stay in the cache between the forward pass and the update.
* ``"stacked"`` (cnn, lenet5): the model's ``stacked_forward`` (grouped convolutions,
  one group per client, and batched matrix products) and autograd on the stack, in
  chunks of :attr:`BatchedExecutor.cpu_stacked_clients` clients on a CPU.
* ``"stacked"`` also for a ``torch_module`` without buffers: its ``stacked_forward`` is
  ``torch.func.vmap`` over the module (:mod:`simfl.train.torch_net`);
* None (char_lstm, a ``torch_module`` with buffers): the jobs are trained one after
  another, as the inline executor does.

Nothing here calls ``torch.func`` (only a ``torch_module`` model does), so training a
built-in model never imports ``torch._dynamo`` (about a second once per process); ``torch.func.vmap`` over ``grad`` was measured for the
convolutional models too and was slower than grouped convolutions (see
:func:`executor_class`).

Clients hold different numbers of samples, so their minibatch plans differ in length
and in batch sizes. The executor follows each client's plan exactly
(:func:`simfl.train.local.minibatch_plan`, the same stream as the inline executor):

* jobs are ordered by plan length, longest first, so at step ``t`` the clients still
  training are a prefix ``[:K_t]`` of the stack and only that prefix is computed and
  updated (clients whose plan has ended take no step, not even weight decay);
* each step's batches are padded to the largest real batch among those clients; a
  padded slot repeats one of the client's own samples and has weight 0, a real one
  weight ``1 / n_real``, so each client's loss is the mean over its real samples.

Client k's parameters only reach client k's loss, so the batched backward pass gives
each client the gradient of its own mean loss. The step itself is
:class:`simfl.train.local.StepRule`, the code the inline executor runs (fused into the
weight-gradient matmul when it is plain ``p -= lr * g``), so every local
rule (sgd, scaled_sgd, prox, scaffold, cvar) gives the inline results up to float
rounding. The jobs of one submission may differ in their numbers (loss scale, lr scale,
mu, controls, t) but, for ``scaffold`` and ``cvar``, not in the rule itself (one aggregator
makes every payload of a run).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from simfl.core.records import ClientUpdate, TrainJob
from simfl.train.executor import Executor, InlineExecutor, SummedUpdates, Weigh
from simfl.train.minibatch import job_plans, plan_sizes
from simfl.train.models import Params
from simfl.train.stacked_steps import ScratchBuffers, train_dense, train_stacked
from simfl.train.step_plans import pad_plans
from simfl.train.step_rule import StepRule


class BatchedExecutor(Executor):
    """Trains all the jobs of one submission at once, clients stacked along a new axis.

    Same constructor and :meth:`submit` contract as
    :class:`simfl.train.executor.InlineExecutor`, and the same results up to float
    rounding. Works on whatever device the data and parameters live on.
    """

    #: on a CPU, clients are trained in chunks whose stacked parameters take about this
    #: many bytes, so a chunk's weights stay in the cache from forward pass to update
    #: (one chunk of 100 clients of an MLP 784-100-10 is 32 MB and every pass over it
    #: went to memory); a GPU trains every job of a submission in one chunk
    cpu_chunk_bytes = 4 << 20
    #: on a CPU, clients of a ``stacked`` model (convolutional) trained together; see
    #: :func:`simfl.train.stacked_steps.train_stacked` for the measurement behind it
    cpu_stacked_clients = 10

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._scratch = ScratchBuffers()

    def one_job_at_a_time(self) -> str | None:
        """Why this executor trains the jobs one after another, or None when it stacks them."""
        if getattr(self.net, "batching", None) is None:
            if self.task.model.kind == "torch_module":
                return ("the torch_module model has buffers (such as BatchNorm's running "
                        "statistics), and a module with buffers cannot be stacked")
            return f"the {self.task.model.kind} model cannot be stacked"
        if getattr(self.loss, "per_sample", True) is False:
            return (f"task.loss = {self.task.loss!r} gives only a minibatch's mean, and "
                    "stacked clients need each sample's loss")
        return None

    def submit(self, jobs: Sequence[TrainJob], versions: dict[int, Params],
               weigh: Weigh | None = None) -> list[ClientUpdate]:
        """Train ``jobs``; with ``weigh``, sum the deltas as they are made
        (:meth:`Executor.submit`)."""
        if not jobs:
            return [] if weigh is None else SummedUpdates([], {}, [])
        # a model that cannot be stacked, or a user loss that gives only the batch mean
        # (padded slots need per-sample weights): one job at a time
        if self.one_job_at_a_time() is not None:
            return InlineExecutor.submit(self, jobs, versions, weigh=weigh)
        if weigh is not None:
            return self._submit_summed(jobs, versions, weigh, self._submit)
        return self._submit(jobs, versions, None)

    def _submit(self, jobs: Sequence[TrainJob], versions: dict[int, Params],
                summed: tuple[Params, np.ndarray] | None) -> list[ClientUpdate]:
        """Train ``jobs`` chunk by chunk; ``summed`` (accumulator, job weights): add each
        delta into the accumulator instead of returning it."""
        # a plan's length depends on the client's sample count only, so the stack order
        # is known before any plan is drawn
        n_steps = np.array([len(plan_sizes(len(self.client_indices[job.client]), self.task))
                            for job in jobs], dtype=np.int64)
        order = np.argsort(-n_steps, kind="stable")  # longest plan first
        chunk = len(jobs)
        if self.device.type == "cpu" and self.net.batching == "stacked":
            chunk = self.cpu_stacked_clients
        elif self.device.type == "cpu":
            client_bytes = sum(v.numel() * v.element_size()
                               for v in versions[jobs[0].base_round].values())
            chunk = max(1, self.cpu_chunk_bytes // client_bytes)
        updates: list[ClientUpdate | None] = [None] * len(jobs)
        for first in range(0, len(jobs), chunk):
            part = order[first:first + chunk]
            ordered = [jobs[i] for i in part]
            samples, sizes, _ = job_plans(ordered, self.client_indices, self.task, self.rngs)
            for i, update in zip(part, self._submit_sorted(
                    ordered, samples, sizes, n_steps[part], versions,
                    None if summed is None else (summed[0], summed[1][part]))):
                updates[i] = update
        return updates  # type: ignore[return-value]

    def _submit_sorted(self, jobs: list[TrainJob], samples: np.ndarray, sizes: np.ndarray,
                       n_steps: np.ndarray, versions: dict[int, Params],
                       summed: tuple[Params, np.ndarray] | None = None) -> list[ClientUpdate]:
        """Train ``jobs`` (sorted by plan length, longest first) as one stack; ``samples``
        and ``sizes`` are their plans back to back (:func:`job_plans`)."""
        k = len(jobs)
        names = list(versions[jobs[0].base_round])
        rounds = {job.base_round for job in jobs}
        if len(rounds) == 1:  # one version: broadcast it instead of copying it K times
            version = versions[rounds.pop()]
            base = {name: version[name].unsqueeze(0).expand(k, *version[name].shape)
                    for name in names}
        else:
            base = {name: torch.stack([versions[job.base_round][name] for job in jobs])
                    for name in names}
        x, y = self.x, self.y
        if self.task.augment is not None:  # each job's plan samples, augmented as inline
            x, y, samples = self._augmented(jobs, samples, sizes, n_steps)
        steps = self._pad_plans(samples, sizes, n_steps)
        slots = [self.kept_state(job.client) for job in jobs]
        rule = StepRule([job.payload for job in jobs], base, self.task.lr, self.task.weight_decay,
                        self.task.optimizer, n_steps.tolist(), slots)
        train = train_dense if self.net.batching == "dense" else train_stacked
        with self._randomness(jobs[0]):
            local, loss_sum = train(self.net, x, y, self.loss, self._scratch, base, steps, rule)
        extras = rule.extras(local, n_steps.tolist())
        if rule.optimizer is not None:
            for pos, slot in enumerate(slots):
                if slot is not None and n_steps[pos] > 0:
                    slot.clear()
                    slot.update(rule.optimizer.client_state(pos))

        mean_loss = (loss_sum.cpu().numpy() / np.maximum(n_steps, 1)).tolist()
        n_samples = [len(self.client_indices[job.client]) for job in jobs]
        if summed is not None:
            # sum_k w_k (local_k - base_k) into the accumulator: the difference in place in
            # the chunk's buffer (still in the cache), then one matrix-vector product
            acc, weights = summed
            w = torch.as_tensor(weights, dtype=local[names[0]].dtype, device=self.device)
            for name in names:
                delta = local[name].sub_(base[name])
                acc[name].view(-1).addmv_(delta.view(k, -1).t(), w)
            return [ClientUpdate(job.client, job.base_round, n_samples[pos], {},
                                 mean_loss[pos], extras[pos])
                    for pos, job in enumerate(jobs)]
        # Each delta gets its own storage (a view of a [K, ...] stack would keep the
        # whole stack alive for as long as any one update is kept, e.g. in a MIFA table).
        local_rows = {name: local[name].unbind(0) for name in names}
        base_rows = {name: base[name].unbind(0) for name in names}
        return [ClientUpdate(job.client, job.base_round, n_samples[pos],
                             {name: local_rows[name][pos] - base_rows[name][pos] for name in names},
                             mean_loss[pos], extras[pos])
                for pos, job in enumerate(jobs)]

    def _augmented(self, jobs: list[TrainJob], samples: np.ndarray, sizes: np.ndarray,
                   n_steps: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
        """The jobs' plan samples augmented job by job (:meth:`Executor.augmenter`, the
        same rows and stream as inline), their labels, and their positions in them."""
        ends = np.cumsum(n_steps)
        bounds = np.concatenate(([0], np.cumsum(sizes)))  # of each batch, into samples
        rows = []
        for job, first, last in zip(jobs, ends - n_steps, ends):
            augment = self.augmenter(job)
            assert augment is not None
            part = samples[bounds[first]:bounds[last]]
            rows.append(augment(self.x[torch.from_numpy(part).to(self.device)]))
        index = torch.from_numpy(samples).to(self.device)
        return torch.cat(rows), self.y[index], np.arange(len(samples), dtype=np.int64)

    def _pad_plans(self, samples: np.ndarray, sizes: np.ndarray, n_steps: np.ndarray):
        """Per step: (number of active clients, global indices [K_t, B_t], weights [K_t, B_t])
        on this executor's device (:func:`simfl.train.step_plans.pad_plans`)."""
        return pad_plans(samples, sizes, n_steps, self.device, self.x.dtype)


def executor_class(name: str, net, device: torch.device) -> type[Executor]:
    """The executor ``run.executor = name`` asks for, for ``net`` on ``device``.

    ``inline`` and ``batched`` are taken as asked (``batched`` trains a model it cannot
    stack one job at a time anyway). ``auto`` decides per model from measurements (one
    CPU thread, one submission of 10 or 100 clients of 40 mnist5k or digits samples,
    batch 32, one epoch; ``benchmarks/bench.py`` repeats them):

    * dense nets (``logreg``, ``mlp``): batched, 2 to 5 times faster than inline from a
      few clients up (the per-step overhead of a small network is shared);
    * convolutional nets (``cnn``, ``lenet5``) on a CPU: inline. Their steps are
      convolutions that already run near the core's arithmetic peak for one client
      (FedAvg's CNN: about 47 ms per client at 61 GFLOP/s, the one-thread matmul peak
      being 91), and the grouped convolutions that stack clients were slower: median
      723 against 469 ms for 10 clients of ``cnn``, 7.0 against 4.8 s for 100
      (``benchmarks/bench.py``, cnn workload). For ``lenet5``, whose convolutions are
      small, the two were level within the noise of a shared machine (batched 0.97 to
      1.31 times inline's speed, ``benchmarks/bench_executors.py --model lenet5``);
      ``torch.func.vmap(grad(...))`` was slower still: one step of 10 clients at batch 32,
      interleaved, on one loaded core: per-client loop 1.7-2.4 s, grouped 2.2-3.0 s,
      vmap 2.7-3.3 s. A profile of inline training (10 clients, one thread) spends 29%
      in convolution backward, 20% in the dense layer's matmuls, 13% in convolution
      forward and 17% in ReLU and pooling over large activations, and under 5% in
      anything a batch could share;
    * convolutional nets on a GPU: batched (small per-client kernels leave a GPU idle;
      not measured here, no GPU was available);
    * models that cannot be stacked (``char_lstm``): inline.
    """
    if name == "inline":
        return InlineExecutor
    if name == "batched":
        return BatchedExecutor
    batching = getattr(net, "batching", None)  # a plug-in model may not say: inline
    if batching == "dense" or (batching == "stacked" and device.type != "cpu"):
        return BatchedExecutor
    return InlineExecutor
