"""The learning task: dataset, partition across clients, model and local training."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from simfl.core.config.augment import Augment
from simfl.core.config.dataset import Dataset, Digits, Quadratic
from simfl.core.config.checks import MAX_STEP_SIZE, step_size
from simfl.core.config.local_optimizer import AdamW, LocalOptimizer, Sgd
from simfl.core.config.model import Mlp, Model
from simfl.core.config.node import (MAX_CLIENTS, Choice, Node, at_most, non_negative, positive,
                                    require)
from simfl.core.config.papers import FEDAVG, RANDOM_ACCESS


#: a function's import path, ``package.module:function``
_IMPORT_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


@dataclass(frozen=True)
class Partition(Choice, point="partitions"):
    """How the training samples are split across clients."""


@dataclass(frozen=True)
class Iid(Partition):
    """Shuffle and split the training set into equal parts."""

    kind = "iid"
    paper = f"{FEDAVG} (IID split)"


@dataclass(frozen=True)
class Dirichlet(Partition):
    """Per-class client proportions drawn from Dirichlet(alpha): small alpha, skewed labels."""

    kind = "dirichlet"
    paper = ("Hsu, Qi, Brown, Measuring the Effects of Non-Identical Data Distribution "
             "for Federated Visual Classification, arXiv 1909.06335, 2019")
    alpha: float = 0.5
    min_samples: int = 2

    def validate(self) -> None:
        positive(self, "alpha")
        non_negative(self, "min_samples")


@dataclass(frozen=True)
class Shards(Partition):
    """Sort by label, cut into equal shards and give each client ``per_client`` of them."""

    kind = "shards"
    paper = f"{FEDAVG} (pathological non-IID shards)"
    per_client: int = 2

    def validate(self) -> None:
        positive(self, "per_client")


@dataclass(frozen=True)
class LabelBlocks(Partition):
    """Blocks of consecutive clients, each splitting the samples of its own labels at random.

    Block b is the next ``clients[b]`` client ids and holds the labels ``labels[b]``; its
    clients share those labels' samples in equal random parts (an IID split within the
    block). A label of several blocks has its samples cut into equal parts, one per
    block; a label of no block is not trained on. The blocks' clients add up to
    ``task.n_clients``. Empty (the default): one block of every client and label, the
    ``iid`` split.
    """

    kind = "label_blocks"
    paper = f"{RANDOM_ACCESS} (its code: 27 users on classes 0-7, the 3 rare ones on 8-9)"
    clients: tuple[int, ...] = ()
    labels: tuple[tuple[int, ...], ...] = ()

    def validate(self) -> None:
        require(len(self.labels) == len(self.clients), "labels", self.labels,
                f"one label set per block of clients ({len(self.clients)} blocks)")
        require(all(c >= 1 for c in self.clients), "clients", self.clients,
                "a list of numbers of clients >= 1, one per block")
        require(all(len(ls) > 0 and min(ls) >= 0 for ls in self.labels), "labels",
                self.labels, "a non-empty list of class labels >= 0 per block")


@dataclass(frozen=True)
class Native(Partition):
    """Keep the grouping the data set comes with (e.g. synthetic's per-client draws).

    ``fallback`` is the partition used for a data set without natural clients (so one
    scenario runs on LEAF users and on ``mnist5k``); null makes such a data set an error.
    """

    kind = "native"
    paper = ("Caldas et al., LEAF: A Benchmark for Federated Settings, arXiv 1812.01097, "
             "2018 (natural per-user partitions)")
    fallback: Partition | None = None

    def validate(self) -> None:
        require(not isinstance(self.fallback, Native), "fallback", "native",
                "iid, dirichlet or shards (the split of data without natural clients)")


@dataclass(frozen=True)
class Task(Node):
    """What is learned and how each client trains locally.

    Local work is either ``local_epochs`` passes over the client's data or
    ``local_steps`` minibatch steps; one epoch when neither is given. ``lr`` is in
    (0, 1000] and ``weight_decay`` in [0, 1000]: a larger step overflows training.
    ``weight_decay`` is L2 decay added to the gradient (``torch.optim``'s coupled
    ``weight_decay``); ``optimizer`` is the local optimiser (plain SGD by default,
    :mod:`simfl.core.config.local_optimizer`). ``loss`` is ``cross_entropy`` (with
    ``label_smoothing``) or the import path ``"package.module:function"`` of a function
    ``fn(logits, targets) -> scalar tensor`` (the minibatch's mean loss); ``augment``
    randomly crops and flips the training images (:class:`Augment`).
    """

    exclusive = (("local_epochs", "local_steps"),)
    #: upper bounds that keep a round's work (local_epochs x samples) inside int64
    max_local_epochs: ClassVar[int] = 10**6
    max_local_steps: ClassVar[int] = 10**9
    max_batch_size: ClassVar[int] = 10**9

    dataset: Dataset = Digits()
    partition: Partition = Iid()
    model: Model = Mlp()
    n_clients: int = 100
    batch_size: int = 32
    local_epochs: int | None = None
    local_steps: int | None = None
    lr: float = 0.05
    weight_decay: float = 0.0
    optimizer: LocalOptimizer = Sgd()
    loss: str = "cross_entropy"
    label_smoothing: float = 0.0
    augment: Augment | None = None
    test_fraction: float = 0.2

    def validate(self) -> None:
        positive(self, "n_clients", "batch_size", "local_epochs", "local_steps")
        step_size(self, "lr")
        at_most(self, MAX_CLIENTS, "n_clients")
        at_most(self, self.max_batch_size, "batch_size")
        at_most(self, self.max_local_epochs, "local_epochs")
        at_most(self, self.max_local_steps, "local_steps")
        non_negative(self, "weight_decay")
        at_most(self, MAX_STEP_SIZE, "weight_decay", why="a larger decay overflows training")
        require(not isinstance(self.optimizer, AdamW) or self.weight_decay == 0.0,
                "weight_decay", self.weight_decay, "0 with task.optimizer = 'adamw' (its own "
                "weight_decay is the decoupled decay)")
        require(self.loss == "cross_entropy" or _IMPORT_PATH.fullmatch(self.loss) is not None,
                "loss", self.loss, "cross_entropy or an import path 'package.module:function'")
        require(0.0 <= self.label_smoothing < 1.0, "label_smoothing", self.label_smoothing,
                "a number in [0, 1)")
        require(not self.label_smoothing or (self.loss == "cross_entropy"
                                             and self.dataset.loss == "cross_entropy"),
                "label_smoothing", self.label_smoothing,
                "0 unless the loss is the built-in cross_entropy on class labels")
        require(self.augment is None or (len(self.dataset.input_shape()) == 3
                                         and not self.dataset.tokens), "augment", "a table",
                "none unless the data set's samples are images (C x H x W)")
        require(0.0 < self.test_fraction < 1.0, "test_fraction", self.test_fraction,
                "a fraction in (0, 1)")
        require(self.local_epochs is None or self.local_steps is None, "local_steps",
                self.local_steps, "null when local_epochs is set (set only one of them)")
        require(not isinstance(self.dataset, Quadratic) or isinstance(self.partition, Native),
                "partition", self.partition.kind,
                "native with the quadratic data set (each client keeps its own target)")
        problem = self.model.input_problem(self.dataset.input_shape(), self.dataset.tokens)
        require(problem is None, "model", self.model.kind, problem or "")
        if self.local_epochs is None and self.local_steps is None:
            self._set_default("local_epochs", 1)

    def work_samples(self, n_samples: Any) -> Any:
        """Samples processed by one round of local training on ``n_samples`` samples
        (an int, or an array of every client's size: one vectorised call)."""
        if self.local_steps is not None:
            return self.local_steps * np.minimum(self.batch_size, n_samples)
        return self.local_epochs * n_samples
