"""FedGS: graph-based sampling under arbitrary client availability.

Wang et al., "FedGS: Federated Graph-based Sampling with Arbitrary Client
Availability", AAAI 2023; docs/algorithms.md §4.1-§4.2 (which follows the authors' code
where it differs from the paper's text, §8.2).

**3DG** (:func:`graph_distances`, once, before round 0). From one feature row per client:
cosine similarities s_ij (i != j), min-max normalised with M = max(0, max s_ij) and
m = min(0, min s_ij); an edge of length exp(-s~_ij^2 / sigma) joins i and j when
s~_ij > epsilon; H = all-pairs shortest-path lengths (networkx Floyd-Warshall) divided
by the largest finite one, unreachable pairs 1. A client without features (its answer
was lost, or its feature vector is zero) has no edges.

**Sampling** (:func:`solve`). With A the available clients, M = min(|A|, k) and sample
counts v (over all N clients, mean v_bar), maximise over sets S of A with |S| = M

    alpha * 2 / (M (M - 1)) * sum_{i<j in S} H_ij  -  1/(N-1) * sum_{k in S} z_k,
    z_k = 2 (v_k - v_bar - M/|A|) + 1.

Instead of the code's Gurobi MIQP (5 s limit): exact enumeration when C(|A|, M) <=
``exact_limit`` (ties: the lexicographically smallest set), otherwise greedy
construction (best pair, then best marginal gain) and best-improvement 1-swap local
search for at most ``max_swaps`` swaps (deterministic; ties by lowest ids). M = 1 with
|A| >= 2 (a division by zero in the code) takes the pair term as 0: the least sampled
client. After each round v_k += 1 for every invited client.

Round 0 of the paper (and code) builds the graph without updating the model: all N
clients train once from w_0 and the server keeps only their features. Here that
exchange happens before round 0, from w_0, asking all N clients whatever their
availability (the paper assumes all are available then); it takes simulated time (the
run's ``query_time_s``: model down, local training, answer up, at most
``server.deadline_s``) and its trainings count as ``graph_updates``, not as trained
updates. The sequence of models and the simulated clock are the paper's; only the
round index differs by one: the paper's rounds 1..R are ``run.rounds = R`` here, and
its round 0 is not a row of ``rounds.csv``. Clients whose answer is lost get no edges
(the paper has no losses in round 0).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import networkx as nx
import numpy as np

from simfl.algorithms.samplers import _Stateless
from simfl.core.config import FedGS as FedGSConfig
from simfl.core.protocols import PopulationView
from simfl.core.records import RoundOutcome


@dataclass(frozen=True)
class FedGSState:
    """The 3DG distances H (N x N) and how often each client was invited."""

    distances: np.ndarray
    counts: np.ndarray


class FedGSSampler(_Stateless):
    cfg: FedGSConfig

    def init(self, n_samples: np.ndarray) -> FedGSState:
        if self.probe is None:
            raise RuntimeError("fedgs needs a ClientProbe for the client features")
        features = self.probe.features(self.cfg.feature, self.cfg.noise_batch)
        return FedGSState(graph_distances(features, self.cfg.epsilon, self.cfg.sigma),
                          np.zeros(len(n_samples), dtype=np.int64))

    def select(self, state: FedGSState, view: PopulationView, k: int,
               rng: np.random.Generator) -> np.ndarray:
        return solve(state.distances, state.counts, np.asarray(view.available, dtype=np.int64),
                     k, self.cfg.alpha, self.cfg.exact_limit, self.cfg.max_swaps)

    def observe(self, state: FedGSState, outcome: RoundOutcome) -> FedGSState:
        counts = state.counts.copy()
        counts[list(outcome.selected)] += 1
        return FedGSState(state.distances, counts)


def graph_distances(features: np.ndarray, epsilon: float, sigma: float) -> np.ndarray:
    """Normalised shortest-path distances of the 3DG built from one feature row per client."""
    f = np.asarray(features, dtype=np.float64)
    n = len(f)
    norms = np.linalg.norm(f, axis=1)
    known = np.isfinite(norms) & (norms > 0)
    unit = np.zeros_like(f)
    unit[known] = f[known] / norms[known, None]
    sim = unit @ unit.T
    np.fill_diagonal(sim, 0.0)
    off = ~np.eye(n, dtype=bool)
    top = max(0.0, float(sim[off].max())) if n > 1 else 0.0
    bottom = min(0.0, float(sim[off].min())) if n > 1 else 0.0
    h = np.ones((n, n))
    np.fill_diagonal(h, 0.0)
    if top == bottom:
        return h
    scaled = (sim - bottom) / (top - bottom)
    edges = off & (scaled > epsilon) & known[:, None] & known[None, :]
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    for i, j in zip(*np.nonzero(np.triu(edges))):
        graph.add_edge(int(i), int(j), weight=math.exp(-scaled[i, j] ** 2 / sigma))
    dist = nx.floyd_warshall_numpy(graph, nodelist=range(n), weight="weight")
    finite = np.isfinite(dist)
    largest = dist[finite].max()
    if largest > 0:
        h[finite] = dist[finite] / largest
    return h


def objective_terms(distances: np.ndarray, counts: np.ndarray, pool: np.ndarray, m: int,
                    alpha: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The pair matrix over the pool, the linear gains -z_k/(N-1), and the pair factor."""
    n = len(counts)
    z = 2.0 * (counts[pool] - counts.mean() - m / len(pool)) + 1.0
    linear = -z / max(n - 1, 1)
    pair = alpha * 2.0 / (m * (m - 1)) if m > 1 else 0.0
    return distances[np.ix_(pool, pool)], linear, pair


def solve(distances: np.ndarray, counts: np.ndarray, available: np.ndarray, k: int,
          alpha: float, exact_limit: int, max_swaps: int) -> np.ndarray:
    """The sorted ids FedGS invites among ``available``."""
    pool = np.sort(available)
    m = min(len(pool), k)
    if m == len(pool):
        return pool
    pairs, linear, factor = objective_terms(distances, counts, pool, m, alpha)
    if m == 1:
        return pool[[int(np.argmax(linear))]]  # argmax: first (lowest id) on ties
    if math.comb(len(pool), m) <= exact_limit:
        combos = np.array(list(itertools.combinations(range(len(pool)), m)), dtype=np.int64)
        values = factor * pairs[combos[:, :, None], combos[:, None, :]].sum(axis=(1, 2)) / 2.0
        values = values + linear[combos].sum(axis=1)
        best: np.ndarray = pool[combos[int(np.argmax(values))]]
        return best
    found: np.ndarray = pool[np.sort(local_search(pairs, linear, factor, m, max_swaps))]
    return found


def local_search(pairs: np.ndarray, linear: np.ndarray, factor: float, m: int,
                 max_swaps: int) -> np.ndarray:
    """Greedy construction then best-improvement 1-swaps; positions into the pool."""
    size = len(linear)
    pair_values = factor * pairs + linear[:, None] + linear[None, :]
    pair_values[np.diag_indices(size)] = -np.inf
    first = int(np.argmax(pair_values))  # row-major: lowest (i, j) on ties
    inside = np.zeros(size, dtype=bool)
    inside[[first // size, first % size]] = True
    while inside.sum() < m:
        gain = factor * pairs[:, inside].sum(axis=1) + linear
        gain[inside] = -np.inf
        inside[int(np.argmax(gain))] = True
    for _ in range(max_swaps):
        to_set = pairs[:, inside].sum(axis=1)  # sum of distances to the chosen set
        out_pos, in_pos = np.flatnonzero(inside), np.flatnonzero(~inside)
        # swapping i (inside) for j (outside) changes the objective by
        # factor * (D_j - H_ij - D_i) + linear_j - linear_i
        delta = (factor * (to_set[None, in_pos] - pairs[np.ix_(out_pos, in_pos)]
                           - to_set[out_pos, None])
                 + linear[None, in_pos] - linear[out_pos, None])
        best = int(np.argmax(delta))
        if delta.flat[best] <= 1e-12:
            break
        inside[out_pos[best // len(in_pos)]] = False
        inside[in_pos[best % len(in_pos)]] = True
    return np.flatnonzero(inside)
