"""Per-round availability: one Bernoulli(p_i(t)) draw per client when a round opens.

The draw comes from the stream ``availability/round/{t}`` and holds for the whole round
(nobody goes offline mid-round). The FedGS modes are in
:mod:`simfl.sim.availability.fedgs`; the family is described in
:mod:`simfl.sim.availability.models`.
"""

from __future__ import annotations

import numpy as np

from simfl.core.config import Always, Bernoulli, Diurnal, Ideal, MifaAdversarial
from simfl.core.errors import ConfigError
from simfl.core.rng import RngTree

#: most draws of one round under ``redraw_until_nonempty``
MAX_REDRAWS = 10_000

#: per-client sizes or label counts, for the models that use them
OptArray = np.ndarray | None


class PerRoundModel:
    """Independent Bernoulli(p_i(t)) draws when a round opens; subclasses give p_i(t)."""

    redraw_until_nonempty = False

    def __init__(self, n_clients: int, rngs: RngTree) -> None:
        self.n_clients = n_clients
        self.rngs = rngs

    def probabilities(self, round: int, t_s: float) -> np.ndarray | float:
        raise NotImplementedError

    def online(self, round: int, t_s: float) -> np.ndarray:
        p = self.probabilities(round, t_s)
        rng = self.rngs.stream(f"availability/round/{round}")
        mask = rng.random(self.n_clients) < p
        draws = 1
        while self.redraw_until_nonempty and not mask.any() and draws < MAX_REDRAWS:
            mask = rng.random(self.n_clients) < p
            draws += 1
        return mask

    def offline_at(self, clients: np.ndarray) -> np.ndarray:
        return np.full(len(clients), np.inf)


class AlwaysOnline(PerRoundModel):
    """Every client online at every round (``always`` and FedGS ``ideal``)."""

    def __init__(self, cfg: Always | Ideal | None, n_clients: int, rngs: RngTree,
                 n_samples: OptArray = None, label_counts: OptArray = None) -> None:
        super().__init__(n_clients, rngs)

    def online(self, round: int, t_s: float) -> np.ndarray:
        return np.ones(self.n_clients, dtype=bool)


class BernoulliOnline(PerRoundModel):
    """Client i online with probability p_i, independently at each round."""

    def __init__(self, cfg: Bernoulli, n_clients: int, rngs: RngTree,
                 n_samples: OptArray = None, label_counts: OptArray = None) -> None:
        super().__init__(n_clients, rngs)
        if cfg.p_min is not None:
            self.p = rngs.stream("availability/p").uniform(cfg.p_min, 1.0, size=n_clients)
        elif isinstance(cfg.p, tuple):
            if len(cfg.p) != n_clients:
                raise ConfigError("population.availability.p", cfg.p,
                                  f"one probability or a list of task.n_clients = {n_clients}")
            self.p = np.asarray(cfg.p, dtype=float)
        else:
            self.p = np.full(n_clients, cfg.p)

    def probabilities(self, round: int, t_s: float) -> np.ndarray:
        return self.p


def labels_held(label_counts: OptArray, kind: str) -> np.ndarray:
    """Clients x classes: whether each client holds each label (ValueError without counts)."""
    if label_counts is None:
        raise ValueError(f"availability {kind!r} needs each client's label counts")
    return np.asarray(label_counts) > 0


class MifaAdversarialOnline(PerRoundModel):
    """p_i = p_min + (1 - p_min) min(Y_i) / (|Y| - 1): MIFA's label-adversarial model."""

    def __init__(self, cfg: MifaAdversarial, n_clients: int, rngs: RngTree,
                 n_samples: OptArray = None, label_counts: OptArray = None) -> None:
        super().__init__(n_clients, rngs)
        held = labels_held(label_counts, cfg.kind)
        p_min = cfg.p_min
        assert p_min is not None  # the config's validation sets its default
        self.p: np.ndarray = (p_min + (1.0 - p_min) * np.argmax(held, axis=1)
                              / max(1, held.shape[1] - 1))

    def probabilities(self, round: int, t_s: float) -> np.ndarray:
        return self.p


class DiurnalOnline(PerRoundModel):
    """FedLaAvg's day/night groups by round index, or a sinusoidal rate by time of day.

    Group strategies are deterministic (p is 0 or 1): see :class:`~simfl.core.config.Diurnal`.
    A client's class is its most frequent label (FedLaAvg gives each client one class).
    The ``sine`` strategy thins an independent per-round Bernoulli draw.
    """

    def __init__(self, cfg: Diurnal, n_clients: int, rngs: RngTree,
                 n_samples: OptArray = None, label_counts: OptArray = None) -> None:
        super().__init__(n_clients, rngs)
        self.cfg = cfg
        #: each client's group (every strategy but ``sine``)
        self.group: np.ndarray | None = None
        if cfg.needs_labels:
            counts = np.asarray(label_counts) * labels_held(label_counts, cfg.kind)
            cls, n_labels = np.argmax(counts, axis=1), counts.shape[1]
            first = round(cfg.alpha * n_labels) if cfg.strategy == "number" else n_labels // 2
            group = self.group = (cls >= first).astype(np.int64)
            if cfg.strategy == "mix":
                rng, before = rngs.stream("availability/diurnal/mix"), group.copy()
                for g in (0, 1):
                    members = np.flatnonzero(before == g)
                    n_swap = int(round(cfg.alpha * len(members)))
                    group[rng.choice(members, size=n_swap, replace=False)] = 1 - g
        elif cfg.strategy == "block":
            order = rngs.stream("availability/diurnal/block").permutation(n_clients)
            group = self.group = np.empty(n_clients, dtype=np.int64)
            group[order] = np.arange(n_clients) * cfg.num_blocks // n_clients

    def active_group(self, round: int) -> int:
        """The group online at round ``round`` (strategies other than ``sine``)."""
        cfg, e = self.cfg, self.cfg.period_rounds
        if cfg.strategy == "block":
            return (round % e) * cfg.num_blocks // e
        night = e * cfg.alpha if cfg.strategy == "time" else e
        return int(round % (e + int(night)) >= e)

    def probabilities(self, round: int, t_s: float) -> np.ndarray | float:
        cfg = self.cfg
        if cfg.strategy == "sine":
            phase = 2.0 * np.pi * (t_s - cfg.peak_s) / cfg.period_s
            rate: float = cfg.mean_p * (1.0 + cfg.amplitude * np.cos(phase))
            return rate
        assert self.group is not None  # set for every strategy but sine
        active: np.ndarray = (self.group == self.active_group(round)).astype(float)
        return active
