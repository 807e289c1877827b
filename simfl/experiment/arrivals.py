"""Saying why nothing arrives: a run whose first rounds received no update at all."""

from __future__ import annotations

import statistics

from simfl.core.records import MISSING_REASONS, RoundOutcome

#: the rounds watched: no update in all of them is worth a warning
FIRST_ROUNDS = 3


class ArrivalWatch:
    """Counts the first :data:`FIRST_ROUNDS` rounds' invitations and why they missed.

    ``compute_s(client)`` is a client's computation time for one round (the simulation's).
    """

    def __init__(self, compute_s, deadline_s: float | None) -> None:
        self.compute_s, self.deadline_s = compute_s, deadline_s
        self.n_rounds = self.n_invited = self.n_arrived = 0
        self.reasons = dict.fromkeys(MISSING_REASONS, 0)
        self.times_s: list[float] = []

    def observe(self, outcome: RoundOutcome) -> None:
        """Count one round, while the first rounds are watched."""
        if self.n_rounds >= FIRST_ROUNDS:
            return
        self.n_rounds += 1
        self.n_invited += len(outcome.selected)
        self.n_arrived += len(outcome.received) + len(outcome.late_received)
        for missing in outcome.missing:
            self.reasons[str(missing.reason)] += 1
        self.times_s.extend(self.compute_s(c) for c in outcome.selected)

    def warnings(self) -> list[str]:
        """One line when the watched rounds received nothing, with the numbers."""
        if self.n_rounds == 0 or self.n_arrived:
            return []
        why = ", ".join(f"{n} {reason}" for reason, n in self.reasons.items() if n)
        line = (f"no update arrived in the first {self.n_rounds} rounds: "
                f"{self.n_invited} invited, {why or 'none missed'}")
        if self.times_s and self.deadline_s is not None:
            line += (f"; the invitees' median computation takes "
                     f"{statistics.median(self.times_s):.3g} s of the "
                     f"{self.deadline_s:g} s deadline")
        return [line]
