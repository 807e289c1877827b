"""Sessions: client groups that arrive and leave, and how each new session's model starts.

docs/algorithms.md §3 (Chang et al., arXiv 2410.05662). The registered clients are cut into
``groups`` equal blocks of consecutive ids (group g holds clients
``[g*N/G, (g+1)*N/G)``, rounded down). Sessions follow one another; session s admits
only the clients of group ``order[s % len(order)]`` (by default 0, 1, ..., G-1 and
again, so two groups alternate A, B, A, B, ...). A session lasts ``rounds_per_session``
rounds, or ``session_s`` simulated seconds; in the second case the session of a round
is the one in force when the round opens (membership is decided when a round opens,
so a client that leaves mid-round finishes that round: departures are not modelled
as failures).

With ``split_labels`` each group gets its own label set (label overlap below) and the
global model is evaluated on the test samples of the current session's labels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simfl.core.config.node import Choice, Node, non_negative, positive, require


@dataclass(frozen=True)
class SessionInit(Choice, point="initialisers"):
    """How the global model of a new session is built from the finished sessions."""


@dataclass(frozen=True)
class Previous(SessionInit):
    """Start each session from the last global model (plain continuation)."""

    kind = "previous"
    paper = "Chang et al., arXiv 2410.05662 (dynamic arrival/departure): Previous baseline"


@dataclass(frozen=True)
class Average(SessionInit):
    """Start each session from the mean of the final models of the finished sessions."""

    kind = "average"
    paper = "Chang et al., arXiv 2410.05662 (dynamic arrival/departure): Average baseline"


@dataclass(frozen=True)
class Similarity(SessionInit):
    """Blend finished sessions' models by gradient similarity to the new session (pilot + V rounds).

    ``gradient_rounds`` is V (rounds of FL from the pilot model with the new session's
    clients, local lr halved), ``scale`` is R in softmax(-R d). Needs
    ``population.sessions.pilot_sessions >= 1``.
    """

    kind = "similarity"
    paper = "Chang et al., arXiv 2410.05662, initial model construction (docs/algorithms.md §3)"
    gradient_rounds: int = 1
    scale: float = 10.0

    def validate(self) -> None:
        positive(self, "gradient_rounds")
        non_negative(self, "scale")


@dataclass(frozen=True)
class Continuous(SessionInit):
    """Previous, plus local distillation towards the last session's final model.

    Local loss CE + ``kl_coefficient`` * KL(softmax(teacher(x)) || softmax(student(x))).
    """

    kind = "continuous"
    paper = "Chang et al., arXiv 2410.05662 (dynamic arrival/departure): Continuous baseline"
    kl_coefficient: float = 0.5

    def validate(self) -> None:
        non_negative(self, "kl_coefficient")


@dataclass(frozen=True)
class Sessions(Node):
    """Client groups taking turns in consecutive sessions, and the session initialiser.

    ``pilot_sessions`` (P): sessions 0..P-1 are the pilot stage; at the start of session
    P every initialiser restarts from the initial model, and only sessions >= P are
    blended or averaged. ``label_overlap``: labels shared by consecutive groups.
    """

    exclusive = (("rounds_per_session", "session_s"),)

    groups: int = 2
    order: tuple[int, ...] | None = None
    rounds_per_session: int | None = None
    session_s: float | None = None
    pilot_sessions: int = 0
    split_labels: bool = True
    label_overlap: int = 0
    init: SessionInit = Previous()

    def validate(self) -> None:
        positive(self, "groups", "rounds_per_session", "session_s")
        non_negative(self, "pilot_sessions", "label_overlap")
        require(self.rounds_per_session is None or self.session_s is None, "session_s",
                self.session_s, "null when rounds_per_session is set (set only one of them)")
        if self.rounds_per_session is None and self.session_s is None:
            self._set_default("rounds_per_session", 10)
        if self.order is not None:
            require(len(self.order) > 0 and all(0 <= g < self.groups for g in self.order),
                    "order", self.order, f"a non-empty list of group indices in 0..{self.groups - 1}")
        if isinstance(self.init, Similarity):
            require(self.pilot_sessions >= 1, "pilot_sessions", self.pilot_sessions,
                    "at least 1 with the similarity initialiser (it needs a pilot model)")

    def session_at(self, round: int, t_s: float) -> int:
        """Index of the session in force for a round that opens at ``t_s``."""
        if self.rounds_per_session is not None:
            return round // self.rounds_per_session
        assert self.session_s is not None  # validate: one of the two is set
        return int(math.floor(t_s / self.session_s))

    def group_of(self, session: int) -> int:
        """Group admitted in ``session`` (``order`` repeated; null order: 0, 1, ..., G-1)."""
        if self.order is None:
            return session % self.groups
        return self.order[session % len(self.order)]

    def client_groups(self, n_clients: int) -> np.ndarray:
        """Group of every client: ``groups`` blocks of consecutive ids."""
        require(n_clients >= self.groups, "population.sessions.groups", self.groups,
                f"at most task.n_clients = {n_clients} groups")
        return (np.arange(n_clients) * self.groups) // n_clients

    def label_sets(self, n_classes: int) -> list[tuple[int, ...]]:
        """Labels of each group: contiguous blocks, consecutive ones sharing ``label_overlap``.

        With G groups, C classes and overlap k, the stride is s = (C - k) // G and group
        g holds labels ``[g*s, g*s + s + k)``; the last group also takes every label
        above. For C = 10, G = 2, k = 0: {0..4} and {5..9}; k = 2: {0..5} and {4..9}.
        """
        k = self.label_overlap
        stride = (n_classes - k) // self.groups
        require(stride >= 1 and k < n_classes, "population.sessions.label_overlap", k,
                f"an overlap that leaves each of the {self.groups} groups at least one label of "
                f"its own among the {n_classes} classes")
        sets = [tuple(range(g * stride, g * stride + stride + k)) for g in range(self.groups)]
        sets[-1] = tuple(range((self.groups - 1) * stride, n_classes))
        return sets
