"""The clients' positions: a position file reads, and a point process holds enough points."""

from __future__ import annotations

from simfl.core.config import Scenario
from simfl.core.rng import RngTree


def check_placement(scenario: Scenario) -> None:
    """Place the clients as the run will (same seed and stream), so that a bad position
    file or a too sparse point process is one line before anything runs."""
    placement = scenario.population.placement
    if placement is not None:
        from simfl.sim.radio.placement import place

        place(placement, scenario.task.n_clients, RngTree(scenario.seed).stream("placement"))
