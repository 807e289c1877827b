"""Continuous-time availability: client states flip at event times in simulated seconds.

The model keeps two arrays, the state and the next change time, and when a round opens
advances every client whose next change has passed, vectorised, as many passes as the
busiest client needs (:class:`EventTimesModel`). ``markov`` draws exponential holding
times from a counter-based stream; ``trace`` replays on intervals from a file.
"""

from __future__ import annotations

import numpy as np

from simfl.core.config import Markov, Trace
from simfl.core.rng import RngTree
from simfl.sim.availability.rounds import OptArray
from simfl.sim.traces.data import TraceData


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
        state: np.ndarray = self.state.copy()
        return state

    def offline_at(self, clients: np.ndarray) -> np.ndarray:
        at_s: np.ndarray = self.next_change_s[clients]
        return at_s

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
    uniforms: np.ndarray = ((z >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0 ** -53
    return uniforms


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
        holding_s: np.ndarray = -np.log(u) / rate
        return holding_s

    def _flip(self, clients: np.ndarray) -> None:
        self.state[clients] = ~self.state[clients]
        self.count[clients] += 1
        self.next_change_s[clients] += self._holding_s(clients)


class TraceOnline(EventTimesModel):
    """Replays per-client on intervals from a trace (see :mod:`simfl.sim.traces.formats`).

    Simulated client c follows the trace's client ``c mod K``. Non-periodic: after its
    last interval a client stays offline. Periodic: trace client k repeats every
    ``period_s[k]``; an interval ending at the period boundary joins one starting at 0
    (no offline instant in between).
    """

    def __init__(self, cfg: Trace, n_clients: int, rngs: RngTree,
                 n_samples: OptArray = None, label_counts: OptArray = None,
                 trace: TraceData | None = None) -> None:
        from simfl.sim.traces.formats import load_trace

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
        shift_s: np.ndarray = self.cycle[clients] * self.period_s[clients]
        return shift_s

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
        off: np.ndarray = self.next_change_s[clients].copy()
        # on across the period boundary into the next cycle's first interval
        joined = self.joins[clients] & (self.pos[clients] == self.stop[clients] - 1)
        c = clients[joined]
        single = self.stop[c] - self.first[c] == 1
        next_end_s = self.trace.ends[self.first[c]] + (self.cycle[c] + 1) * self.period_s[c]
        off[joined] = np.where(single, np.inf, next_end_s)
        return off
