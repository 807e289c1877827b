"""Availability models: which registered clients are online, and when they leave.

Every model answers ``online(round, t_s) -> bool mask`` when a round opens, and
``offline_at(clients) -> times`` for the clients it reported online: the simulated time
at which each of them next goes offline (``inf`` when it stays for the whole round).
The simulation interrupts a device still working for the server at that time with cause
``"offline"``, so its update is missing with reason ``offline``.

Two families
------------
Per-round draws (``always``, ``ideal``, ``bernoulli``, the FedGS modes,
``mifa_adversarial``, ``diurnal``)
    Each client's probability p_i(t) is evaluated for the round index t (or, for the
    sinusoidal ``diurnal`` rate, the round's opening time) and one Bernoulli draw per
    client is made from the stream ``availability/round/{t}``. The draw holds for the
    whole round: nobody goes offline mid-round. With ``redraw_until_nonempty`` (the
    FedGS simulator's loop) a round in which nobody came online is drawn again from the
    same stream, at most :data:`MAX_REDRAWS` times; a model whose every p_i is 0 then
    leaves the round empty.
Continuous time (``markov``, ``trace``)
    Each client's state changes at event times in simulated seconds. The model keeps
    two arrays, the state and the next change time, and when a round opens advances
    every client whose next change has passed, vectorised, as many passes as the
    busiest client needs. Idle clients cost no SimPy process and no Python loop.
    A client that comes online during a round is not invited until the next round
    opens (the server only looks at opening time).

Assumptions and limits: availability is independent of what a client does (training
does not drain it; batteries are a separate model combined by the simulation); no
correlation across clients beyond what a formula or trace puts in.
"""

from __future__ import annotations

import numpy as np

from simfl.core.config import (Always, Availability, Bernoulli, Diurnal, Ideal, LessDataFirst,
                               LogNormal, Markov, MifaAdversarial, MoreDataFirst, SinLogNormal,
                               Trace, YCycle, YMaxFirst)
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


def _labels_held(label_counts: OptArray, kind: str) -> np.ndarray:
    if label_counts is None:
        raise ValueError(f"availability {kind!r} needs each client's label counts")
    return np.asarray(label_counts) > 0


class FedGSOnline(PerRoundModel):
    """The FedGS availability modes (Wang et al., AAAI 2023; FedGS repository and FLGo).

    Formulas of the FedGS repository's ``utils/systemic_simulator.py`` (``variant =
    "fedgs"``) or of FLGo's default simulator (``"flgo"``: other MDF/LDF defaults and the
    24-round YCycle). n_i is a client's training-set size, Y_i the set of labels it holds
    and |Y| the number of classes (labels 0 .. |Y|-1). The time-varying modes (SLN, YC)
    read a round counter t: the 0-based round index for ``fedgs``, the index + 1 for
    ``flgo`` (FLGo's first round is round 1), so simfl's round r matches FLGo's r + 1.
    """

    def __init__(self, cfg, n_clients: int, rngs: RngTree, n_samples: OptArray = None,
                 label_counts: OptArray = None) -> None:
        super().__init__(n_clients, rngs)
        self.cfg = cfg
        self.redraw_until_nonempty = cfg.redraw_until_nonempty
        beta = cfg.beta
        if isinstance(cfg, (MoreDataFirst, LessDataFirst)):
            if n_samples is None:
                raise ValueError(f"availability {cfg.kind!r} needs each client's n_samples")
            power = np.asarray(n_samples, dtype=float) ** (beta if isinstance(cfg, MoreDataFirst)
                                                           else -beta)
            self.p = power / power.max()
        elif isinstance(cfg, (LogNormal, SinLogNormal)):
            self.sigma = -np.log(1.0 - beta - 1e-6)
            draws = rngs.stream("availability/log_normal").lognormal(0.0, self.sigma, n_clients)
            self.p = draws / draws.max()
        elif isinstance(cfg, (YMaxFirst, YCycle)):
            self.held = _labels_held(label_counts, cfg.kind)
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
            return self.p * (0.4 * np.sin(2.0 * np.pi * j / 23.0) + 0.5)
        if isinstance(cfg, YCycle):
            return cfg.beta * self.in_phase(round) + (1.0 - cfg.beta)
        return self.p

    def in_phase(self, round: int) -> np.ndarray:
        """YCycle's indicator I_i(t): the client holds a label of the cycle's phase."""
        n, round = self.n_labels, self.counter(round)
        if self.cfg.variant == "fedgs":
            period = 10 * n
            r = (1 + round % period) / period
            labels = np.arange(n)
            phase = (labels / n < r) & (r <= (labels + 1) / n)
            return self.held[:, phase].any(axis=1)
        r = (1 + round % 24) / 24
        top = max(1, n - 1)
        return (self.min_label / top <= r) & (r <= self.max_label / top)


class MifaAdversarialOnline(PerRoundModel):
    """p_i = p_min + (1 - p_min) min(Y_i) / (|Y| - 1): MIFA's label-adversarial model."""

    def __init__(self, cfg: MifaAdversarial, n_clients: int, rngs: RngTree,
                 n_samples: OptArray = None, label_counts: OptArray = None) -> None:
        super().__init__(n_clients, rngs)
        held = _labels_held(label_counts, cfg.kind)
        self.p = cfg.p_min + (1.0 - cfg.p_min) * np.argmax(held, axis=1) / max(1, held.shape[1] - 1)

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
        self.group = None
        if cfg.needs_labels:
            counts = np.asarray(label_counts) * _labels_held(label_counts, cfg.kind)
            cls, n_labels = np.argmax(counts, axis=1), counts.shape[1]
            first = round(cfg.alpha * n_labels) if cfg.strategy == "number" else n_labels // 2
            self.group = (cls >= first).astype(np.int64)
            if cfg.strategy == "mix":
                rng, before = rngs.stream("availability/diurnal/mix"), self.group.copy()
                for g in (0, 1):
                    members = np.flatnonzero(before == g)
                    n_swap = int(round(cfg.alpha * len(members)))
                    self.group[rng.choice(members, size=n_swap, replace=False)] = 1 - g
        elif cfg.strategy == "block":
            order = rngs.stream("availability/diurnal/block").permutation(n_clients)
            self.group = np.empty(n_clients, dtype=np.int64)
            self.group[order] = np.arange(n_clients) * cfg.num_blocks // n_clients

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
            return cfg.mean_p * (1.0 + cfg.amplitude * np.cos(phase))
        return (self.group == self.active_group(round)).astype(float)


# ---------------------------------------------------------------------------------
# continuous time


class EventTimesModel:
    """Clients whose state flips at event times; kept as arrays, advanced vectorised.

    Subclasses set ``state`` (bool) and ``next_change_s`` (float, ``inf`` = never) and
    implement :meth:`_flip` for the clients whose next change has come.
    """

    state: np.ndarray
    next_change_s: np.ndarray

    def online(self, round: int, t_s: float) -> np.ndarray:
        due = np.flatnonzero(self.next_change_s <= t_s)
        while due.size:
            self._flip(due)
            due = due[self.next_change_s[due] <= t_s]
        return self.state.copy()

    def offline_at(self, clients: np.ndarray) -> np.ndarray:
        return self.next_change_s[clients]

    def _flip(self, clients: np.ndarray) -> None:
        raise NotImplementedError


_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def counter_uniforms(key: int, clients: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Uniforms in (0, 1) indexed by (client, count): the SplitMix64 sequence at
    position ``client * 2**32 + count`` from seed ``key``.

    A counter-based stream: client c's k-th number does not depend on which other
    numbers were asked for, or when, so a client's on/off path is the same whenever
    rounds open (what-if runs that change deadlines keep the same availability).
    """
    index = (clients.astype(np.uint64) << np.uint64(32)) | counts.astype(np.uint64)
    z = np.uint64(key) + index * _GAMMA
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z ^= z >> np.uint64(31)
    return ((z >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0 ** -53


class MarkovOnline(EventTimesModel):
    """Continuous-time on/off chain: off->on at rate alpha, on->off at rate beta.

    Exponential holding times; each client starts in the stationary distribution
    (on with probability alpha / (alpha + beta)) with a fresh exponential residual time,
    which memorylessness makes exact. Oracles: long-run on-fraction alpha/(alpha+beta);
    P(still on after T | on) = exp(-beta T).
    """

    def __init__(self, cfg: Markov, n_clients: int, rngs: RngTree,
                 n_samples: OptArray = None, label_counts: OptArray = None) -> None:
        self.rates = (cfg.on_rate_per_s, cfg.off_rate_per_s)  # leave off, leave on
        self.key = rngs.int_seed("availability/markov")
        clients = np.arange(n_clients, dtype=np.uint32)
        self.count = np.zeros(n_clients, dtype=np.uint32)
        on_fraction = cfg.on_rate_per_s / (cfg.on_rate_per_s + cfg.off_rate_per_s)
        self.state = counter_uniforms(self.key, clients, self.count) < on_fraction
        self.count += 1
        self.next_change_s = self._holding_s(clients)

    def _holding_s(self, clients: np.ndarray) -> np.ndarray:
        rate = np.where(self.state[clients], self.rates[1], self.rates[0])
        u = counter_uniforms(self.key, clients, self.count[clients])
        return -np.log(u) / rate

    def _flip(self, clients: np.ndarray) -> None:
        self.state[clients] = ~self.state[clients]
        self.count[clients] += 1
        self.next_change_s[clients] += self._holding_s(clients)


class TraceOnline(EventTimesModel):
    """Replays per-client on intervals from a trace (see :mod:`simfl.sim.trace`).

    Simulated client c follows the trace's client ``c mod K``. Non-periodic: after its
    last interval a client stays offline. Periodic: trace client k repeats every
    ``period_s[k]``; an interval ending at the period boundary joins one starting at 0
    (no offline instant in between).
    """

    def __init__(self, cfg: Trace, n_clients: int, rngs: RngTree,
                 n_samples: OptArray = None, label_counts: OptArray = None, trace=None) -> None:
        from simfl.sim.trace import load_trace

        self.trace = trace if trace is not None else load_trace(cfg.path, cfg.format, cfg.period_s)
        tr = self.trace
        self.periodic = cfg.periodic
        k = np.arange(n_clients) % tr.n_clients
        self.first, self.stop = tr.offsets[k], tr.offsets[k + 1]
        self.period_s = tr.period_s[k]
        self.pos = self.first.copy()
        self.cycle = np.zeros(n_clients, dtype=np.int64)
        self.state = np.zeros(n_clients, dtype=bool)
        has = self.first < self.stop
        head_s = tr.starts[np.minimum(self.first, len(tr.starts) - 1)]
        self.next_change_s = np.where(has, head_s, np.inf)
        tail_s = tr.ends[np.maximum(self.stop - 1, 0)]
        self.joins = has & self.periodic & (head_s == 0.0) & (tail_s == self.period_s)

    def _shift(self, clients: np.ndarray) -> np.ndarray:
        if not self.periodic:
            return np.zeros(len(clients))
        return self.cycle[clients] * self.period_s[clients]

    def _flip(self, clients: np.ndarray) -> None:
        tr = self.trace
        leaving = clients[self.state[clients]]
        arriving = clients[~self.state[clients]]
        self.state[arriving] = True
        self.next_change_s[arriving] = tr.ends[self.pos[arriving]] + self._shift(arriving)
        self.state[leaving] = False
        self.pos[leaving] += 1
        wrapped = leaving[self.pos[leaving] == self.stop[leaving]]
        if self.periodic:
            self.pos[wrapped] = self.first[wrapped]
            self.cycle[wrapped] += 1
        else:
            self.next_change_s[wrapped] = np.inf
            leaving = leaving[self.pos[leaving] < self.stop[leaving]]
        self.next_change_s[leaving] = tr.starts[self.pos[leaving]] + self._shift(leaving)

    def offline_at(self, clients: np.ndarray) -> np.ndarray:
        off = self.next_change_s[clients].copy()
        # on across the period boundary into the next cycle's first interval
        joined = self.joins[clients] & (self.pos[clients] == self.stop[clients] - 1)
        c = clients[joined]
        single = self.stop[c] - self.first[c] == 1
        next_end_s = self.trace.ends[self.first[c]] + (self.cycle[c] + 1) * self.period_s[c]
        off[joined] = np.where(single, np.inf, next_end_s)
        return off


_MODELS = {Always: AlwaysOnline, Ideal: AlwaysOnline, Bernoulli: BernoulliOnline,
           MoreDataFirst: FedGSOnline, LessDataFirst: FedGSOnline, YMaxFirst: FedGSOnline,
           YCycle: FedGSOnline, LogNormal: FedGSOnline, SinLogNormal: FedGSOnline,
           MifaAdversarial: MifaAdversarialOnline, Diurnal: DiurnalOnline, Markov: MarkovOnline,
           Trace: TraceOnline}


def build_availability(cfg: Availability, n_clients: int, rngs: RngTree,
                       n_samples: OptArray = None, label_counts: OptArray = None):
    """The availability model of ``cfg`` for ``n_clients`` registered clients.

    ``n_samples`` (training-set sizes) and ``label_counts`` (clients x classes) are
    needed only by the models that use them (``cfg.needs_labels`` for the latter).
    """
    return _MODELS[type(cfg)](cfg, n_clients, rngs, n_samples, label_counts)
