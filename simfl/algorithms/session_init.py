"""Session initialisers: the global model a new session starts from (docs/algorithms.md §3).

Chang, Han, Parasnis, Hosseinalipour, Brinton, "dynamic client arrival and departure:
initial model construction", arXiv 2410.05662, and the authors' public code. Sessions
0..P-1 form the pilot stage and continue from one another; at the start of the first
session >= P every initialiser restarts from the initial (random) model; from then on:

* ``previous``: the last global model;
* ``average``: the mean of the final models W_j of the finished sessions j >= P;
* ``similarity``: W_pilot = mean of the pilot sessions' final models. At the start of
  every session s >= P, V rounds of FL from W_pilot with s's clients give F_s and
  Gamma_s = F_s - W_pilot. With the finished sessions j >= P, d_j is the mean over the
  non-bias tensors l of || Gamma_j^l/||Gamma_j^l|| - Gamma_s^l/||Gamma_s^l|| ||_2,
  omega = softmax(-R d) and the start is sum_j omega_j W_j (pilot models never blended);
* ``continuous``: ``previous``, and local training distils towards W_{s-1}
  (the teacher, handed to the executor; see :mod:`simfl.train.distill`).

The rule works on parameter dicts only and is independent of the aggregator; the
aggregator's state is restarted at every session start by the caller (as the code
resets SCAFFOLD's server variables). A tensor of zero norm is left at zero when
normalised (the code would divide by zero). The code's per-session polynomial
learning-rate decay is ``server.lr_schedule`` of kind ``polynomial`` with its period set
to the session's rounds. Not modelled: the ``inner_product`` similarity variant.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence, cast

import numpy as np
import torch

from simfl.core.config import Average, Continuous, Sessions, Similarity

Params = dict[str, torch.Tensor]
#: (start model, session) -> the model after V gradient rounds with that session's clients
GradientRounds = Callable[[Params, int], Params]


@dataclass(frozen=True)
class SessionState:
    """What the initialiser remembers; replaced, never mutated.

    ``finished``/``gradients``: final model W_j and Gamma_j of each finished session
    j >= P (aligned); ``pilots``: final models of the pilot sessions; ``pending``:
    Gamma of the running session (None under the rules other than ``similarity``, which
    compute no Gamma: their ``gradients`` hold None); ``weights``: the last similarity
    weights.
    """

    initial: Params
    session: int | None = None
    pilots: tuple[Params, ...] = ()
    finished: tuple[Params, ...] = ()
    gradients: tuple[Params | None, ...] = ()
    pending: Params | None = None
    teacher: Params | None = None
    weights: np.ndarray | None = None


def mean_model(models: tuple[Params, ...] | list[Params]) -> Params:
    return blend(models, np.full(len(models), 1.0 / len(models)))


def blend(models: Sequence[Params], weights: np.ndarray) -> Params:
    """sum_j weights_j * models_j, tensor by tensor (``models`` is not empty)."""
    return {name: cast(torch.Tensor, sum(float(w) * m[name] for w, m in zip(weights, models)))
            for name in models[0]}


def _unit(t: torch.Tensor) -> torch.Tensor:
    t = t.detach().double().flatten()
    norm = torch.linalg.vector_norm(t)
    return t / norm if norm > 0 else t


def gradient_distances(past: Sequence[Params], current: Params) -> np.ndarray:
    """d_j: mean over non-bias tensors of the distance between layer-normalised Gammas."""
    names = [name for name in current if "bias" not in name]
    return np.array([np.mean([float(torch.linalg.vector_norm(_unit(g[n]) - _unit(current[n])))
                              for n in names]) for g in past])


def similarity_weights(past: Sequence[Params], current: Params, scale: float) -> np.ndarray:
    """omega = softmax(-R d) over the finished non-pilot sessions."""
    logits = -scale * gradient_distances(past, current)
    e = np.exp(logits - logits.max())
    weights: np.ndarray = e / e.sum()
    return weights


class SessionInitialiser:
    """Builds each session's starting model from the finished sessions (explicit state)."""

    def __init__(self, cfg: Sessions) -> None:
        self.cfg = cfg
        self.rule = cfg.init

    def init(self, params: Params) -> SessionState:
        return SessionState(initial=params)

    def start(self, state: SessionState, session: int, params: Params,
              gradient_rounds: GradientRounds) -> tuple[Params, SessionState]:
        """Close the running session with final model ``params``; open ``session``."""
        p = self.cfg.pilot_sessions
        if state.session is not None:
            if state.session < p:
                state = replace(state, pilots=state.pilots + (params,))
            else:
                state = replace(state, finished=state.finished + (params,),
                                gradients=state.gradients + (state.pending,))
        state = replace(state, session=session, pending=None, teacher=None)
        if session < p:
            return params, state
        if isinstance(self.rule, Similarity):
            pilot = mean_model(state.pilots)
            result = gradient_rounds(pilot, session)
            state = replace(state, pending={n: result[n] - pilot[n] for n in pilot})
        if not state.finished:  # first application session: from the initial model
            return state.initial, state
        if isinstance(self.rule, Average):
            return mean_model(state.finished), state
        if isinstance(self.rule, Similarity):
            # every session >= P opened under this rule computed its Gamma (pending)
            assert state.pending is not None
            gradients = cast("tuple[Params, ...]", state.gradients)
            weights = similarity_weights(gradients, state.pending, self.rule.scale)
            return blend(state.finished, weights), replace(state, weights=weights)
        if isinstance(self.rule, Continuous):
            state = replace(state, teacher=state.finished[-1])
        return params, state
