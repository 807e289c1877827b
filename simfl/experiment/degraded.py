"""Saying when a run did less, or took longer, than its scenario suggests.

Three things a run does without being asked and that change what a user reads from it,
each one line in ``summary.json``'s ``warnings`` (and on stderr), once per run:

* ``run.executor = "batched"`` training one job at a time (a model that cannot be
  stacked, a user loss that gives only the minibatch mean);
* a ``csma_ca`` MAC with ``carrier_sense_range_m`` running rounds with the per-station
  hidden-terminal model, which simulates about ten times slower than the shared DCF;
* a ``csma_ca`` MAC dropping more than a tenth of a round's updates at its retry limit
  (one MPDU that reaches it loses the whole update).
"""

from __future__ import annotations

from typing import Any

from simfl.core.config import Scenario
from simfl.core.config.csma import CsmaCaMac
from simfl.core.records import RoundOutcome

#: a round whose MAC drops more than this share of its updates at the retry limit is told
DROPPED_SHARE = 0.1


def executor_fallback(asked: str, executor: Any) -> list[str]:
    """The line for ``run.executor = asked`` when ``executor`` trains one job at a time
    although the batched executor was asked for."""
    reason = getattr(executor, "one_job_at_a_time", lambda: None)()
    if asked != "batched" or reason is None:
        return []
    return [f"run.executor = 'batched' trained one job at a time: {reason}; the results "
            "are the same, but the run is not faster (set run.executor = 'inline' or "
            "'auto' to silence this)"]


class DegradationWatch:
    """Counts, over a run's rounds, what a ``csma_ca`` MAC (``mac``, the simulation's)
    did without being asked; :meth:`warnings` says it."""

    def __init__(self, scenario: Scenario, mac: Any) -> None:
        cfg = scenario.network.mac
        self.cfg = cfg if isinstance(cfg, CsmaCaMac) else None
        self.mac = mac
        self.n_rounds = 0
        self.dropped_rounds = 0  # rounds over DROPPED_SHARE
        self.n_dropped = self.n_invited = 0  # over those rounds
        self.worst: tuple[float, int, int, int] | None = None  # share, round, dropped, invited

    def observe(self, outcome: RoundOutcome) -> None:
        """Count one round's uploads that the retry limit dropped."""
        self.n_rounds += 1
        if self.cfg is None or self.cfg.retry_limit is None or not outcome.selected:
            return
        dropped = sum(1 for m in outcome.missing if str(m.reason) == "collided")
        invited = len(outcome.selected)
        if dropped <= DROPPED_SHARE * invited:
            return
        self.dropped_rounds += 1
        self.n_dropped += dropped
        self.n_invited += invited
        share = dropped / invited
        if self.worst is None or share > self.worst[0]:
            self.worst = (share, outcome.round, dropped, invited)

    def warnings(self) -> list[str]:
        """One line per degraded mode the run went through."""
        found = []
        hidden = int(getattr(self.mac, "hidden_rounds", 0))
        if self.cfg is not None and hidden:
            found.append(
                f"{hidden} of {self.n_rounds} rounds ran the hidden-terminal model of "
                f"network.mac.carrier_sense_range_m = {self.cfg.carrier_sense_range_m:g} m "
                "(some of their clients were out of carrier-sense range of each other): it "
                "simulates every station event by event and takes about 10 times the wall "
                "time of the shared DCF; set carrier_sense_range_m = null if every station "
                "should hear every other")
        if self.cfg is not None and self.worst is not None:
            share, round, dropped, invited = self.worst
            found.append(
                f"in {self.dropped_rounds} of {self.n_rounds} rounds the csma_ca MAC dropped "
                f"more than {DROPPED_SHARE:.0%} of the round's updates at its retry limit "
                f"({self.n_dropped} of {self.n_invited} updates in those rounds; worst round "
                f"{round}: {dropped} of {invited}, {share:.0%}): an MPDU that reaches "
                f"network.mac.retry_limit = {self.cfg.retry_limit} collisions loses its whole "
                "update; a larger retry_limit or cw_min loses fewer")
        return found
