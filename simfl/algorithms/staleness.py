"""Staleness weights s(tau) of the asynchronous server modes (docs/algorithms.md §10).

tau is the number of server versions made since the model a client was sent. The
three functions of FedAsync (Xie et al. 2019, section 5.2 of the paper), each 1 at tau = 0 and
non-increasing in tau:

* ``constant``: s(tau) = 1;
* ``polynomial``: s(tau) = (tau + 1)^-a (FedBuff's 1 / sqrt(1 + tau) is a = 0.5);
* ``hinge``: s(tau) = 1 if tau <= b, else 1 / (a (tau - b) + 1).
"""

from __future__ import annotations

from typing import Callable

#: s(tau): the weight of an update that is tau versions stale
StalenessFn = Callable[[int], float]


def constant(tau: int) -> float:
    """s(tau) = 1: staleness is ignored."""
    return 1.0


def polynomial(tau: int, a: float) -> float:
    """s(tau) = (tau + 1)^-a."""
    return float((tau + 1) ** -a)


def hinge(tau: int, a: float, b: float) -> float:
    """s(tau) = 1 while tau <= b, then 1 / (a (tau - b) + 1)."""
    return 1.0 if tau <= b else 1.0 / (a * (tau - b) + 1.0)


def staleness_fn(kind: str, a: float = 0.5, b: float = 4.0) -> StalenessFn:
    """The function ``kind`` (``constant``, ``polynomial``, ``hinge``) with parameters a, b."""
    if kind == "constant":
        return constant
    if kind == "polynomial":
        return lambda tau: polynomial(tau, a)
    if kind == "hinge":
        return lambda tau: hinge(tau, a, b)
    raise ValueError(f"unknown staleness function {kind!r}")
