"""An executor that trains all jobs of a submission together, as one batched network.

Every job's parameters are stacked into ``[K, ...]`` tensors (K jobs, each from its own
model version) and each local step runs one batched forward and backward pass with
``torch.baddbmm`` and autograd. Nothing here calls ``torch.func``, so training never
imports ``torch._dynamo`` (about a second once per process).

Clients hold different numbers of samples, so their minibatch plans differ in length
and in batch sizes. The executor follows each client's plan exactly
(:func:`simfl.train.local.minibatch_plan`, the same stream as the inline executor):

* jobs are ordered by plan length, longest first, so at step ``t`` the clients still
  training are a prefix ``[:K_t]`` of the stack and only that prefix is computed and
  updated (clients whose plan has ended take no step, not even weight decay);
* each step's batches are padded to the largest real batch among those clients; a
  padded slot repeats one of the client's own samples and has weight 0, a real one
  weight ``1 / n_real``, so each client's loss is the mean over its real samples.

The clients' losses are summed into one scalar; client k's parameters only reach
client k's term, so its gradient equals that of its own mean loss. The step itself is
:class:`simfl.train.local.StepRule`, the code the inline executor runs, so every local
rule (sgd, scaled_sgd, prox, scaffold, cvar) gives the inline results up to float
rounding. The jobs of one submission may differ in their numbers (loss scale, mu,
controls, t) but, for ``scaffold`` and ``cvar``, not in the rule itself (one aggregator
makes every payload of a run).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from simfl.core.records import ClientUpdate, TrainJob
from simfl.train.executor import Executor
from simfl.train.local import StepRule, job_plan
from simfl.train.models import Params


class BatchedExecutor(Executor):
    """Trains all the jobs of one submission at once, clients stacked along a new axis.

    Same constructor and :meth:`submit` contract as
    :class:`simfl.train.executor.InlineExecutor`, and the same results up to float
    rounding. Works on whatever device the data and parameters live on.
    """

    def submit(self, jobs: Sequence[TrainJob], versions: dict[int, Params]) -> list[ClientUpdate]:
        if not jobs:
            return []
        k = len(jobs)
        plans = []
        for job in jobs:
            idx = self.client_indices[job.client]
            plan = job_plan(job, len(idx), self.task, self.rngs)
            plans.append([idx[batch] for batch in plan])  # global sample indices per step
        n_steps = np.array([len(p) for p in plans], dtype=np.int64)
        order = np.argsort(-n_steps, kind="stable")  # longest plan first
        names = list(versions[jobs[0].base_round])
        rounds = {job.base_round for job in jobs}
        if len(rounds) == 1:  # one version: broadcast it instead of copying it K times
            version = versions[rounds.pop()]
            base = {name: version[name].unsqueeze(0).expand(k, *version[name].shape)
                    for name in names}
        else:
            base = {name: torch.stack([versions[jobs[i].base_round][name] for i in order])
                    for name in names}
        steps = self._pad_plans([plans[i] for i in order], n_steps[order])
        rule = StepRule([jobs[i].payload for i in order], base, self.task.lr,
                        self.task.weight_decay)
        local, loss_sum = self._train(base, steps, rule)
        extras = rule.extras(local, n_steps[order].tolist())

        mean_loss = (loss_sum.cpu().numpy() / np.maximum(n_steps[order], 1)).tolist()
        # Each delta gets its own storage (a view of a [K, ...] stack would keep the
        # whole stack alive for as long as any one update is kept, e.g. in a MIFA table).
        local_rows = {name: local[name].unbind(0) for name in names}
        base_rows = {name: base[name].unbind(0) for name in names}
        updates: list[ClientUpdate | None] = [None] * k
        for pos, i in enumerate(order):
            job = jobs[i]
            delta = {name: local_rows[name][pos] - base_rows[name][pos] for name in names}
            n_samples = len(self.client_indices[job.client])
            updates[i] = ClientUpdate(job.client, job.base_round, n_samples, delta,
                                      mean_loss[pos], extras[pos])
        return updates  # type: ignore[return-value]

    def _pad_plans(self, plans: list[list[np.ndarray]], n_steps: np.ndarray):
        """Per step: (number of active clients, global indices [K_t, B_t], weights [K_t, B_t]).

        ``plans`` are sorted by length, longest first, so the active clients of a step
        are a prefix of the stack.
        """
        total = int(n_steps[0]) if len(n_steps) else 0
        if total == 0:
            return []
        width = max(len(b) for plan in plans for b in plan)
        index = np.zeros((total, len(plans), width), dtype=np.int64)
        weight = np.zeros((total, len(plans), width), dtype=np.float32)
        sizes = np.zeros((total, len(plans)), dtype=np.int64)
        for c, plan in enumerate(plans):
            for t, batch in enumerate(plan):
                n = len(batch)
                index[t, c, :n] = batch
                index[t, c, n:] = batch[0]  # pad with one of the client's own samples
                weight[t, c, :n] = 1.0 / n
                sizes[t, c] = n
        index_dev = torch.from_numpy(index).to(self.device)
        weight_dev = torch.from_numpy(weight).to(device=self.device, dtype=self.x.dtype)
        steps = []
        for t in range(total):
            k_t = int(np.count_nonzero(n_steps > t))
            b_t = int(sizes[t, :k_t].max())
            steps.append((k_t, index_dev[t, :k_t, :b_t], weight_dev[t, :k_t, :b_t]))
        return steps

    def _train(self, base: Params, steps, rule: StepRule) -> tuple[Params, torch.Tensor]:
        """The local rule on the stacked parameters; returns them and each client's summed loss."""
        n_layers = len(self.net.widths) - 1
        stacked = {name: p.detach().clone() for name, p in base.items()}
        names = [f"layer{i}.{part}" for i in range(n_layers) for part in ("weight", "bias")]
        k = next(iter(stacked.values())).shape[0]
        loss_sum = torch.zeros(k, dtype=torch.float64, device=next(iter(stacked.values())).device)
        with torch.enable_grad():
            for k_t, index, weight in steps:
                # leaves sharing storage with the active prefix of the stack
                flat = [stacked[name][:k_t].detach().requires_grad_(True) for name in names]
                h = self.x[index]  # [K_t, B_t, features]
                for i in range(n_layers):
                    w, b = flat[2 * i], flat[2 * i + 1]
                    h = torch.baddbmm(b.unsqueeze(1), h, w.transpose(1, 2))
                    if i + 1 < n_layers:
                        h = F.relu(h)
                per_client = (self.loss(h, self.y[index]) * weight).sum(dim=1)
                grads = torch.autograd.grad(per_client.sum(), flat)
                loss_sum[:k_t] += per_client.detach()
                rule.step(list(zip(names, flat, grads)), per_client.detach())  # writes through
        return stacked, loss_sum
