"""The energy source without a store: round work is metered, no device is ever stopped.

Besides the calls of every :class:`~simfl.sim.energy.source.EnergyMeter`, it offers the
bulk calls of a loop that runs a round's events itself (the fast and cohort loops).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from simfl.core.config.energy import Energy
from simfl.sim.energy.power_model import PowerModel
from simfl.sim.energy.source import EnergyMeter, Work


class InfiniteEnergy(EnergyMeter):
    """Infinite energy: round work is metered (each state priced by ``energy`` and
    ``tx_rate_bps`` as :class:`PowerModel` does) and no device is ever stopped."""

    def __init__(self, n_clients: int, energy: Energy, tx_rate_bps: float = 0.0) -> None:
        super().__init__(n_clients, PowerModel(energy, tx_rate_bps))

    def spend(self, client: int, energy_j: float) -> None:
        """Charge ``client`` (at work) ``energy_j`` now, over its state's power (a MAC's lump)."""
        self._spend_now(client, energy_j)

    # ---- for a loop that runs a round's events itself (no lumps, no waits, its own time)

    def move(self, client: int, now_s: float, power_w: float) -> None:
        """:meth:`switch` of ``client`` (at work) at ``now_s`` to a state of ``power_w``
        that costs no lump and no wait."""
        spent = self._busy_w[client] * (now_s - self.t_ref_s[client])
        self.used_j[client] += spent
        self._round_j += spent
        self.t_ref_s[client] = now_s
        self._busy_w[client] = power_w

    def stop(self, client: int, now_s: float) -> None:
        """:meth:`end` of ``client``'s round work at ``now_s``."""
        self.move(client, now_s, 0.0)
        del self._busy_w[client], self._proc[client]

    def finish_all(self, clients: np.ndarray, t_switch_s: np.ndarray, then_j: np.ndarray,
                   t_end_s: np.ndarray) -> None:
        """End the round work of ``clients`` (distinct ids, all at work): each stays in
        its state until ``t_switch_s``, then spends ``then_j`` more, and stops at
        ``t_end_s`` (a whole cohort's remaining work summed at once)."""
        ids, busy = clients.tolist(), self._busy_w
        power_w = np.array([busy.pop(c) for c in ids])
        spent = power_w * (t_switch_s - self.t_ref_s[clients]) + then_j
        self.used_j[clients] += spent
        self._round_j += float(spent.sum())
        self.t_ref_s[clients] = t_end_s
        for c in ids:
            del self._proc[c]

    # ---- a cohort at once: the same numbers as one call per client, in client order

    def begin_all(self, clients: np.ndarray, works: Sequence[Work]) -> None:
        """:meth:`begin` for each of ``clients`` (distinct ids, none at work), ``works[i]``
        being client i's work."""
        self.t_ref_s[clients] = self.now_s()  # idle time is not metered
        self._proc.update(zip(clients.tolist(), works))

    def switch_all(self, clients: np.ndarray, state: str, n_bits: float = 0.0,
                   airtime_s: float = 0.0) -> None:
        """:meth:`switch` of each of ``clients`` (distinct ids, all at work) in turn, with
        the radio on throughout a transfer: the energy added to each
        client's meter and to the round's total in the same order as the single calls."""
        now, ids, busy = self.now_s(), clients.tolist(), self._busy_w
        power_w = np.array([busy.get(c, np.nan) for c in ids])
        spent = power_w * (now - self.t_ref_s[clients])  # nan: idle until now (not metered)
        settled = ~np.isnan(spent)
        self.used_j[clients[settled]] += spent[settled]
        new_w, lump_j = self.power.state_w(state, n_bits, airtime_s)
        terms = spent
        if lump_j is not None:
            self.used_j[clients] += lump_j
            terms = np.column_stack([spent, np.full(len(ids), lump_j)]).ravel()
        terms = terms[~np.isnan(terms)]
        if terms.size:  # a running sum, one term after the other
            self._round_j = float(np.add.accumulate(np.concatenate(([self._round_j], terms)))[-1])
        self.t_ref_s[clients] = now
        by_client = self.power.compute_w_by_client if state == "compute" else None
        busy.update(zip(ids, by_client[clients].tolist()) if by_client is not None
                    else dict.fromkeys(ids, new_w))

    def spend_in_order(self, clients: np.ndarray, spent_j: np.ndarray) -> None:
        """Charge ``spent_j[k]`` to ``clients[k]``, in the order given: each client's meter
        and the round's total add the terms one after the other, as one :meth:`move` per
        term would (a loop that knows a round's work in advance meters it at once)."""
        np.add.at(self.used_j, clients, spent_j)
        if spent_j.size:  # a running sum, one term after the other
            self._round_j = float(np.add.accumulate(np.concatenate(([self._round_j], spent_j)))[-1])
