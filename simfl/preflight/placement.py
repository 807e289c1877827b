"""The clients' positions and powers: a position file reads, a point process holds enough
points, a list of powers has one per client."""

from __future__ import annotations

from simfl.core.config import Scenario
from simfl.core.rng import RngTree


def check_placement(scenario: Scenario) -> None:
    """Place the clients as the run will (same seed and stream), so that a bad position
    file or a too sparse point process is one line before anything runs."""
    placement, radio = scenario.population.placement, scenario.network.radio
    if placement is not None:
        from simfl.sim.radio.placement import place

        place(placement, scenario.task.n_clients, RngTree(scenario.seed).stream("placement"),
              scenario.network.cells)
    if radio is not None:
        from simfl.sim.radio.propagation import max_powers_dbm

        max_powers_dbm(radio, scenario.task.n_clients)
