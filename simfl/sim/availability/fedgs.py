"""The FedGS availability modes: per-round Bernoulli(p_i(t)) draws, p_i(t) from the
client's data (sizes, labels), a log-normal draw, or the round counter.

Part of the per-round family (:mod:`simfl.sim.availability.rounds`).
"""

from __future__ import annotations

from typing import cast

import numpy as np

from simfl.core.config import (LessDataFirst, LogNormal, MoreDataFirst, SinLogNormal, YCycle,
                               YMaxFirst)
from simfl.core.config.availability import FedGSMode
from simfl.core.rng import RngTree
from simfl.sim.availability.rounds import OptArray, PerRoundModel, labels_held


class FedGSOnline(PerRoundModel):
    """The FedGS availability modes (Wang et al., AAAI 2023; FedGS repository and FLGo).

    Formulas of the FedGS repository's ``utils/systemic_simulator.py`` (``variant =
    "fedgs"``) or of FLGo's default simulator (``"flgo"``: other MDF/LDF defaults and the
    24-round YCycle). n_i is a client's training-set size, Y_i the set of labels it holds
    and |Y| the number of classes (labels 0 .. |Y|-1). The time-varying modes (SLN, YC)
    read a round counter t: the 0-based round index for ``fedgs``, the index + 1 for
    ``flgo`` (FLGo's first round is round 1), so simfl's round r matches FLGo's r + 1.
    """

    def __init__(self, cfg: FedGSMode, n_clients: int, rngs: RngTree, n_samples: OptArray = None,
                 label_counts: OptArray = None) -> None:
        super().__init__(n_clients, rngs)
        self.cfg = cfg
        self.redraw_until_nonempty = cfg.redraw_until_nonempty
        beta = cfg.beta
        assert beta is not None  # every mode's validation sets its variant's default
        if isinstance(cfg, (MoreDataFirst, LessDataFirst)):
            if n_samples is None:
                raise ValueError(f"availability {cfg.kind!r} needs each client's n_samples")
            power = np.asarray(n_samples, dtype=float) ** (beta if isinstance(cfg, MoreDataFirst)
                                                           else -beta)
            self.p: np.ndarray = power / power.max()
        elif isinstance(cfg, (LogNormal, SinLogNormal)):
            self.sigma = -np.log(1.0 - beta - 1e-6)
            draws = rngs.stream("availability/log_normal").lognormal(0.0, self.sigma, n_clients)
            self.p = draws / draws.max()
        elif isinstance(cfg, (YMaxFirst, YCycle)):
            self.held = labels_held(label_counts, cfg.kind)
            self.n_labels = self.held.shape[1]
            self.min_label = np.argmax(self.held, axis=1)
            if isinstance(cfg, YMaxFirst):
                self.p = beta * self.min_label / max(1, self.n_labels - 1) + (1.0 - beta)
            else:
                self.max_label = self.n_labels - 1 - np.argmax(self.held[:, ::-1], axis=1)
        else:
            raise TypeError(f"not a FedGS mode: {cfg!r}")

    def counter(self, round: int) -> int:
        """The round counter the variant's formulas read: the FedGS repository's t is the
        0-based round index; FLGo counts rounds from 1, so its t is the index + 1."""
        return round + 1 if self.cfg.variant == "flgo" else round

    def probabilities(self, round: int, t_s: float) -> np.ndarray:
        cfg = self.cfg
        if isinstance(cfg, SinLogNormal):
            j = self.counter(round) % 24
            varying: np.ndarray = self.p * (0.4 * np.sin(2.0 * np.pi * j / 23.0) + 0.5)
            return varying
        if isinstance(cfg, YCycle):
            beta = cfg.beta
            assert beta is not None
            return beta * self.in_phase(round) + (1.0 - beta)
        return self.p

    def in_phase(self, round: int) -> np.ndarray:
        """YCycle's indicator I_i(t): the client holds a label of the cycle's phase."""
        n, round = self.n_labels, self.counter(round)
        if self.cfg.variant == "fedgs":
            period = 10 * n
            r = (1 + round % period) / period
            labels = np.arange(n)
            phase = (labels / n < r) & (r <= (labels + 1) / n)
            return cast(np.ndarray, self.held[:, phase].any(axis=1))
        r = (1 + round % 24) / 24
        top = max(1, n - 1)
        spans: np.ndarray = (self.min_label / top <= r) & (r <= self.max_label / top)
        return spans
