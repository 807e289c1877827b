"""A round of clients with their own airtimes, in one loop off the clock.

Over the shared radio's links (:class:`~simfl.sim.radio.link.RadioLink`) each client
downloads and uploads at the rate of its own SNR (placement, path loss, shadowing,
power control and, when it fades, its gain at the attempt's start), so the downloads
end one by one, not together as in :mod:`simfl.sim.rounds.fast`. When every attempt
arrives (no outage: the link claims the loop only then) and the MAC has no contention
(it claims the loop in its ``placed_engines``), a client's round is a chain of three
events: its download ends, its local work ends, its upload lands. :class:`PlacedRound`
runs a round in one of two ways, both with the processes' records, energy sums and
close, bit for bit:

- in order at once, when each step holds one power for its whole length (the ideal
  MAC): every time of every chain is known when the round opens (the upload's airtime
  is asked only of those that start it by the deadline, at their start), so the
  events are sorted into the clock's order, (time, order of scheduling), in one
  ``lexsort``, logged in that order, and their energy charged in that order;
- step by step from a heap keyed like the clock's queue, when an upload's radio goes
  on and off (TDMA's slots) or a transfer ends when a shared band has served it
  (OFDMA: the band's own code runs on the loop's heap, :mod:`~simfl.sim.rounds.loop_clock`).
"""

from __future__ import annotations

import functools
import heapq
import itertools
from typing import Any, Protocol, Sequence

import numpy as np

from simfl.core.records import Arrival, EventKind, Missing, MissingReason
from simfl.sim.energy.infinite import InfiniteEnergy
from simfl.sim.links.channel import Bursts, Link
from simfl.sim.rounds.device import Devices
from simfl.sim.rounds.loop_clock import EVENT, LoopClock
from simfl.sim.energy.power_model import PowerModel

# kinds of heap entries, (time, order, kind, position in the round's started clients)
_DOWNLOADED, _COMPUTED, _ARRIVED = range(3)

Outcome = Arrival | Missing


class ClientAirtimes(Protocol):
    """A link whose clients' attempts each take their own airtime."""

    @property
    def time_varying(self) -> bool:
        """Whether an attempt's airtime depends on when it starts."""

    def airtimes_s(self, clients: np.ndarray, n_bytes: int,
                   t_s: float | Sequence[float]) -> list[float]:
        """The airtime of an attempt of each of ``clients`` that starts at ``t_s`` (one
        time, or one per client)."""


class _Sharing(Protocol):
    """A MAC without contention: its sharing rule of an attempt's wall time (a function
    of the client, the start and the airtime within a round, whenever it is asked)."""

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


class _Plan:
    """Each started client's chain in a round: when its download ends, its local work
    ends and its upload would land, and what each step draws (lists by position in the
    round's started clients; an upload that starts after the deadline is never asked)."""

    def __init__(self, d: Devices, started: np.ndarray, t_invite: float,
                 t_deadline: float) -> None:
        down: ClientAirtimes = d.links.downlink  # type: ignore[assignment]
        up: ClientAirtimes = d.links.uplink  # type: ignore[assignment]
        mac: _Sharing = d.mac  # type: ignore[assignment]
        power: PowerModel = d.energy.power
        ids = started.tolist()
        self.dl_bits, self.ul_bits = 8 * d.model_bytes, 8 * d.upload_bytes
        self.dl_s = down.airtimes_s(started, d.model_bytes, t_invite)
        self.t_dl = [t_invite + a_s for a_s in self.dl_s]
        self.t_computed = [t_s + c_s for t_s, c_s in zip(self.t_dl,
                                                          d.compute_s[started].tolist())]
        by_client = power.compute_w_by_client
        self.compute_w = (by_client[started].tolist() if by_client is not None
                          else [power.state_w("compute")[0]] * len(ids))
        due = [i for i, t_s in enumerate(self.t_computed) if t_s <= t_deadline]
        due_ids = started[due]
        t_up = [self.t_computed[i] for i in due]
        airtimes = up.airtimes_s(due_ids, d.upload_bytes, t_up)
        #: of each upload that starts by the deadline: its airtime, wall time and bursts
        self.upload: dict[int, tuple[float, float, Bursts]] = {}
        #: its transmit power, or None where it is metered state by state
        self.tx_w: dict[int, float | None] = {}
        self.plain = True  # every upload holds its power for its airtime, no lump
        for i, client, t_s, airtime_s in zip(due, due_ids.tolist(), t_up, airtimes):
            wall_s, bursts = mac.share(client, t_s, airtime_s)
            tx_w, lump_j = power.state_w("tx", self.ul_bits, airtime_s, client)
            self.upload[i] = (airtime_s, wall_s, bursts)
            plain = lump_j is None and wall_s == airtime_s
            self.tx_w[i] = tx_w if plain else None
            self.plain = self.plain and plain
        self.rx_w: list[float] | None = None  # each download's power, when without a lump
        if d.energy.energy.rx_w is not None:
            self.rx_w = [d.energy.energy.rx_w] * len(ids)
        else:
            pairs = [power.state_w("rx", self.dl_bits, a_s) for a_s in self.dl_s]
            if all(lump_j is None for _, lump_j in pairs):
                self.rx_w = [w for w, _ in pairs]


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
        t_invite = float(self.devices.env.now)
        if _band_of(self.devices.mac) is not None:  # transfers end when a band served them
            return self._on_heap(None, round, started, t_invite, t_invite + deadline_s)
        plan = _Plan(self.devices, started, t_invite, t_invite + deadline_s)
        if plan.plain and plan.rx_w is not None:
            return self._in_order(plan, round, started, t_invite, t_invite + deadline_s)
        return self._on_heap(plan, round, started, t_invite, t_invite + deadline_s)

    def _in_order(self, plan: _Plan, round: int, started: np.ndarray, t_invite: float,
                  t_deadline: float) -> tuple[list[Outcome], float]:
        """Every step holds one power from its start to its end: the round's events are
        sorted at once into the clock's order, and their energy charged in that order."""
        d = self.devices
        meter, log = d.energy, d.log
        assert isinstance(meter, InfiniteEnergy) and plan.rx_w is not None
        n = len(started)
        t_dl = np.asarray(plan.t_dl)
        t_c = np.asarray(plan.t_computed)
        due = np.fromiter(plan.upload, dtype=np.int64, count=len(plan.upload))
        t_up = t_c[due]
        t_arr = t_up + np.array([plan.upload[i][1] for i in due.tolist()])
        tx_w = np.array([plan.tx_w[i] for i in due.tolist()], dtype=float)
        pos = np.arange(n)
        downloaded = np.flatnonzero(t_dl <= t_deadline)
        computed = np.flatnonzero(t_c <= t_deadline)
        landed = np.flatnonzero(t_arr <= t_deadline)  # indices into ``due``
        # the clock's order: by time, then by when each event was scheduled, which is the
        # order of the step that scheduled it (the downloads' ends all at the invitation)
        keys = np.zeros((7, len(downloaded) + len(computed) + len(landed)))
        a, b = len(downloaded), len(downloaded) + len(computed)
        keys[0] = np.concatenate((t_dl[downloaded], t_c[computed], t_arr[landed]))
        keys[1, a:] = 1
        keys[2] = np.concatenate((downloaded, t_dl[computed], t_up[landed]))
        keys[3, b:] = 1
        keys[4, a:] = np.concatenate((computed, t_dl[due[landed]]))
        keys[6, b:] = due[landed]
        order = np.lexsort(keys[::-1])
        step = np.repeat([0, 1, 2], [len(downloaded), len(computed), len(landed)])[order]
        who = np.concatenate((downloaded, computed, due[landed]))[order]
        rx_w, compute_w = np.asarray(plan.rx_w), np.asarray(plan.compute_w)
        spent = np.concatenate((rx_w[downloaded] * (t_dl[downloaded] - t_invite),
                                compute_w[computed] * (t_c[computed] - t_dl[computed]),
                                tx_w[landed] * (t_arr[landed] - t_up[landed])))[order]
        ids = started.tolist()
        outcome: dict[int, Outcome] = {}
        n_samples = d.n_samples
        t_close = t_deadline
        t_event = keys[0][order].tolist()
        for t_s, s, i in zip(t_event, step.tolist(), who.tolist()):
            if s == 1:
                log(t_s, EventKind.COMPUTED, round, ids[i], "")
            elif s == 2:
                client = ids[i]
                log(t_s, EventKind.ARRIVED, round, client, "")
                outcome[client] = Arrival(client, round, t_s, int(n_samples[client]))
        if n and len(outcome) == n:
            t_close = t_event[-1]
        meter.spend_in_order(started[who], spent)
        # still at work at the close, in order: interrupted, in the step they were in
        late = np.flatnonzero(~np.isin(pos, due[landed]))
        since = np.where(t_c[late] <= t_deadline, t_c[late],
                         np.where(t_dl[late] <= t_deadline, t_dl[late], t_invite))
        power_w = np.where(t_c[late] <= t_deadline, _at(tx_w, due, late, n),
                           np.where(t_dl[late] <= t_deadline, compute_w[late], rx_w[late]))
        meter.spend_in_order(started[late], power_w * (t_close - since))
        for i in late.tolist():
            client = ids[i]
            log(t_close, MissingReason.LATE, round, client, "deadline")
            outcome[client] = Missing(client, MissingReason.LATE, t_close)
        meter.t_ref_s[started] = t_close
        meter.t_ref_s[started[due[landed]]] = t_arr[landed]
        return [outcome[c] for c in ids], t_close

    def _on_heap(self, plan: _Plan | None, round: int, started: np.ndarray, t_invite: float,
                 t_deadline: float) -> tuple[list[Outcome], float]:
        """The round's events one by one from a heap, each step metered as the processes
        meter it: uploads whose radio goes on and off (TDMA), or transfers that end when
        the MAC's shared band has served them (``plan`` None: each step is then worked
        out when it happens, the band's own events on the heap, :mod:`loop_clock`)."""
        d = self.devices
        meter, log, mac = d.energy, d.log, d.mac
        assert isinstance(meter, InfiniteEnergy)
        ids = started.tolist()
        n_started = len(ids)
        dl_bits, ul_bits = 8 * d.model_bytes, 8 * d.upload_bytes
        compute_s = d.compute_s[started].tolist()
        heap: list[tuple[float, int, int, Any]] = []
        order = itertools.count()
        clock = LoopClock(heap, order, t_invite)
        band = _band_of(mac)
        outcome: dict[int, Outcome] = {}
        planned: set[int] = set()  # clients whose radio goes on and off in their upload

        def downloaded(i: int, _event: object = None) -> None:
            t_s = clock.now
            meter.switch(ids[i], "compute")
            heapq.heappush(heap, (t_s + compute_s[i], next(order), _COMPUTED, i))

        def computed(i: int, t_s: float) -> None:
            client = ids[i]
            log(t_s, EventKind.COMPUTED, round, client, "")
            if plan is not None:
                airtime_s, wall_s, bursts = plan.upload[i]
            else:
                airtime_s = d.links.uplink.transmit(t_s, d.upload_bytes, None,
                                                    client=client).airtime_s
                wall_s, bursts = mac.share(client, t_s, airtime_s)  # type: ignore[attr-defined]
            served = None if band is None else band.serve(client, ul_bits, airtime_s)
            meter.switch(client, "tx", ul_bits, airtime_s, bursts)
            planned.add(client)
            if served is None:
                heapq.heappush(heap, (t_s + wall_s, next(order), _ARRIVED, i))
            else:
                served.callbacks.append(functools.partial(arrived, i))

        def arrived(i: int, _event: object = None) -> bool:
            client, t_s = ids[i], clock.now
            log(t_s, EventKind.ARRIVED, round, client, "")
            outcome[client] = Arrival(client, round, t_s, int(d.n_samples[client]))
            meter.end(client)
            return len(outcome) == n_started

        self.now_s = t_invite
        meter.time_source = self._now
        envs = _swap_clock(band, clock)
        t_close = t_deadline
        try:
            meter.begin_all(started, [_IN_LOOP] * n_started)
            dl_s = (plan.dl_s if plan is not None
                    else d.links.downlink.airtimes_s(started, d.model_bytes, t_invite))  # type: ignore[attr-defined]
            for i, (client, a_s) in enumerate(zip(ids, dl_s)):
                served = mac.serve_download(client, dl_bits, a_s)
                meter.switch(client, "rx", dl_bits, a_s)
                if served is None:
                    heapq.heappush(heap, (t_invite + a_s, next(order), _DOWNLOADED, i))
                else:
                    served.callbacks.append(functools.partial(downloaded, i))
            while heap and heap[0][0] <= t_deadline:
                t_s, _, kind, what = heapq.heappop(heap)
                self.now_s = clock.now = t_s
                if kind == EVENT:
                    what.run()
                    if len(outcome) == n_started:
                        t_close = t_s
                        break
                elif kind == _DOWNLOADED:
                    downloaded(what)
                elif kind == _COMPUTED:
                    computed(what, t_s)
                elif arrived(what):
                    t_close = t_s
                    break
            self.now_s = clock.now = t_close
            for client in ids:  # still at work at the deadline, in order: interrupted
                if client not in outcome:
                    mac.leave(client)
                    log(t_close, MissingReason.LATE, round, client, "deadline")
                    outcome[client] = Missing(client, MissingReason.LATE, t_close)
                    meter.end(client)
        finally:
            meter.time_source = None
            _swap_clock(band, envs)
        return [outcome[c] for c in ids], t_close


def _band_of(mac: object) -> Any:
    """The MAC's shared band when its transfers end once the band served them (it has
    ``serve``: :class:`~simfl.sim.mac.ofdma.OfdmaAccess`), else None."""
    return mac if callable(getattr(mac, "serve", None)) else None


def _swap_clock(band: Any, clock: Any) -> Any:
    """Give ``band`` (and its downlink's band) the clock ``clock`` (a :class:`LoopClock`,
    or what :func:`_swap_clock` returned before); return the clocks they had."""
    if band is None:
        return None
    bands = [band] + ([band.downloads] if getattr(band, "downloads", None) is not None else [])
    clocks = clock if isinstance(clock, list) else [clock] * len(bands)
    before = [b.env for b in bands]
    for b, c in zip(bands, clocks):
        b.env = c
    return before


def _at(values: np.ndarray, due: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """``values`` (one per ``due`` position) at the positions ``rows`` (nan elsewhere)."""
    full = np.full(n, np.nan)
    full[due] = values
    return np.asarray(full[rows])
