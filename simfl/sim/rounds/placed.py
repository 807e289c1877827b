"""A round of clients with their own airtimes, in one loop off the clock.

Over the shared radio's links (:class:`~simfl.sim.radio.link.RadioLink`) each client
downloads and uploads at the rate of its own SNR (placement, path loss, shadowing,
power control and, when it fades, its gain at the attempt's start), so the downloads
end one by one, not together as in :mod:`simfl.sim.rounds.fast`. When every attempt
arrives (no outage: the link claims the loop only then) and the MAC has no contention
(the ideal MAC, which claims it in its ``placed_engines``), a client's round is a
chain of three events: its download ends, its local work ends (it asks for its
upload's airtime at that instant), its upload lands (after the wall time of the MAC's
sharing rule). :class:`PlacedRound` runs these chains from one heap keyed like the
clock's queue, (time, order of scheduling), so the records, energy sums and close are
those of the processes, bit for bit.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Protocol

import numpy as np

from simfl.core.records import Arrival, EventKind, Missing, MissingReason
from simfl.sim.energy.infinite import InfiniteEnergy
from simfl.sim.links.channel import Bursts, Link
from simfl.sim.rounds.device import Devices

# kinds of heap entries, (time, order, kind, position in the round's started clients)
_DOWNLOADED, _COMPUTED, _ARRIVED = range(3)

Outcome = Arrival | Missing


class ClientAirtimes(Protocol):
    """A link whose clients' attempts each take their own airtime."""

    @property
    def time_varying(self) -> bool:
        """Whether an attempt's airtime depends on when it starts."""

    def airtimes_s(self, clients: np.ndarray, n_bytes: int, t_s: float) -> list[float]:
        """The airtime of an attempt of each of ``clients`` that starts at ``t_s``."""


class _Sharing(Protocol):
    """A MAC without contention: its sharing rule of an attempt's wall time."""

    def share(self, client: int, t_s: float, airtime_s: float) -> tuple[float, Bursts]:
        """Wall seconds of an attempt of ``airtime_s`` from ``t_s``, and its bursts."""


class _InLoop:
    """The work of a device whose round runs in the loop (infinite energy never stops it)."""

    is_alive = True

    def interrupt(self, cause: str) -> None:
        raise RuntimeError(f"a device of a loop off the clock cannot be interrupted ({cause})")


_IN_LOOP = _InLoop()


def airtimes_by_client(links: tuple[Link, ...]) -> bool:
    """Whether any of ``links`` gives each client its own airtime (then this loop runs)."""
    return any(link.airtime_by_client for link in links)


class PlacedRound:
    """Runs rounds of ``devices`` whose links give each client its own airtime."""

    def __init__(self, devices: Devices) -> None:
        self.devices = devices
        self.now_s = 0.0

    def _now(self) -> float:
        return self.now_s

    def run(self, round: int, started: np.ndarray, deadline_s: float
            ) -> tuple[list[Outcome], float]:
        """Run ``round``'s work of ``started`` (sorted ids) from now; returns each one's
        outcome (in the order of ``started``) and the time the round closes."""
        d = self.devices
        env, meter, log = d.env, d.energy, d.log
        assert isinstance(meter, InfiniteEnergy)
        down: ClientAirtimes = d.links.downlink  # type: ignore[assignment]
        up: ClientAirtimes = d.links.uplink  # type: ignore[assignment]
        mac: _Sharing = d.mac  # type: ignore[assignment]
        t_invite = float(env.now)
        t_deadline = t_invite + deadline_s
        ids = started.tolist()
        n_started = len(ids)
        dl_bits, ul_bits, ul_bytes = 8 * d.model_bytes, 8 * d.upload_bytes, d.upload_bytes
        dl_s = down.airtimes_s(started, d.model_bytes, t_invite)
        ul_fixed = None if up.time_varying else up.airtimes_s(started, ul_bytes, t_invite)
        compute_s = d.compute_s[started].tolist()
        by_client = meter.power.compute_w_by_client
        compute_w = (by_client[started].tolist() if by_client is not None
                     else [meter.power.state_w("compute")[0]] * n_started)
        power = meter.power
        heap = [(t_invite + a_s, i, _DOWNLOADED, i) for i, a_s in enumerate(dl_s)]
        heapq.heapify(heap)
        order = itertools.count(n_started)
        outcome: dict[int, Outcome] = {}
        planned: set[int] = set()  # clients whose radio goes on and off in their upload
        self.now_s = t_invite
        meter.time_source = self._now
        t_close = t_deadline
        try:
            meter.begin_all(started, [_IN_LOOP] * n_started)
            if meter.energy.rx_w is not None:  # the same power whatever the airtime
                meter.switch_all(started, "rx", dl_bits)
            else:
                for client, a_s in zip(ids, dl_s):
                    meter.switch(client, "rx", dl_bits, a_s)
            while heap and heap[0][0] <= t_deadline:
                t_s, _, kind, i = heapq.heappop(heap)
                self.now_s = t_s
                client = ids[i]
                if kind == _DOWNLOADED:
                    meter.move(client, t_s, compute_w[i])
                    heapq.heappush(heap, (t_s + compute_s[i], next(order), _COMPUTED, i))
                elif kind == _COMPUTED:
                    log(t_s, EventKind.COMPUTED, round, client, "")
                    airtime_s = (ul_fixed[i] if ul_fixed is not None else
                                 d.links.uplink.transmit(t_s, ul_bytes, None,
                                                         client=client).airtime_s)
                    wall_s, bursts = mac.share(client, t_s, airtime_s)
                    tx_w, lump_j = power.state_w("tx", ul_bits, airtime_s, client)
                    if lump_j is None and wall_s == airtime_s:
                        meter.move(client, t_s, tx_w)
                    else:
                        meter.switch(client, "tx", ul_bits, airtime_s, bursts)
                        planned.add(client)
                    heapq.heappush(heap, (t_s + wall_s, next(order), _ARRIVED, i))
                else:
                    log(t_s, EventKind.ARRIVED, round, client, "")
                    outcome[client] = Arrival(client, round, t_s, int(d.n_samples[client]))
                    if client in planned:
                        meter.end(client)
                    else:
                        meter.stop(client, t_s)
                    if len(outcome) == n_started:
                        t_close = t_s
                        break
            self.now_s = t_close
            for client in ids:  # still at work at the deadline, in order: interrupted
                if client not in outcome:
                    log(t_close, MissingReason.LATE, round, client, "deadline")
                    outcome[client] = Missing(client, MissingReason.LATE, t_close)
                    meter.end(client)
        finally:
            meter.time_source = None
        return [outcome[c] for c in ids], t_close
