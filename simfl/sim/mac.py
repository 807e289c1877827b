"""Medium access on the uplink: who may transmit when, and the relay that forwards uploads.

A device asks its MAC three things about an upload (see :mod:`simfl.sim.device`):
``request(client)`` (an event that succeeds with True once access is granted, False
after the retry limit, or None when access is immediate), ``wall_time_s`` (how long an
attempt of a given airtime occupies the device under the MAC's sharing rule) and
``forwards(client)`` (whether the relay passes the arrived upload on). ``leave`` takes a
device that is interrupted out of contention. ``open_round`` and ``close_round`` bracket
a round. Every kind states its model in its config's docstring
(:mod:`simfl.core.config.network`).

Slotted ALOHA is simulated event by event over *occupied* slots only: each contender
carries the index of the next slot it transmits in (Bernoulli access makes the gap
Geometric(p), memoryless and exact; backoff makes it uniform over the window), so idle
slots cost nothing and a busy slot costs one vectorised numpy step over its
transmitters, not one SimPy event per client per slot. A heap of (slot, client) entries
finds the transmitters of the earliest busy slot without scanning the population; once
a slot has ``DENSE_TX`` or more transmitters, a numpy scan over the round's contenders
replaces it (cheaper when most contenders transmit often). Both give the same numbers.
"""

from __future__ import annotations

import heapq
import math
from typing import Callable

import numpy as np
import simpy

from simfl.core.config.network import IdealMac, Mac, RelayMac, SlottedAlohaMac, TdmaMac
from simfl.core.errors import ConfigError
from simfl.core.records import MacSlots
from simfl.core.rng import RngTree

#: slot index of a client that is not contending
NEVER = np.iinfo(np.int64).max
#: tolerance (in slots) when mapping a time onto the slot grid
_GRID_EPS = 1e-9
#: transmitters in one slot from which slotted ALOHA scans its contenders (numpy)
#: rather than keeping a heap entry per transmission (Python)
DENSE_TX = 16
#: under heavy contention, every client's next slot is scanned (contiguous memory) while
#: this many times the contenders outnumber the population, else only the contenders'
SCAN_ALL_RATIO = 4


def per_client(value: float | tuple[float, ...], n_clients: int, field: str) -> np.ndarray:
    """One value per client from a scalar or a list that must have ``n_clients`` entries."""
    if isinstance(value, tuple):
        if len(value) != n_clients:
            raise ConfigError(field, value, f"one number or a list of task.n_clients = {n_clients}")
        return np.asarray(value, dtype=float)
    return np.full(n_clients, float(value))


#: ``on_transmit(clients, airtime_s)``: contention transmissions of ``airtime_s`` by
#: ``clients`` (sorted ids) just ended (an energy meter charges them)
OnTransmit = Callable[[list[int], float], None]


class IdealAccess:
    """No contention and no relay: access is immediate and airtime is wall time.

    ``on_transmit`` is told about every contention transmission (MACs that contend).
    """

    def __init__(self, cfg: Mac, env: simpy.Environment, rngs: RngTree, n_clients: int,
                 on_transmit: OnTransmit | None = None) -> None:
        self.cfg, self.env, self.rngs, self.n_clients = cfg, env, rngs, n_clients
        self.on_transmit = on_transmit

    def open_round(self, round: int, started: np.ndarray) -> None:
        """The round opens now; ``started`` (sorted ids) are the clients that take part."""

    def close_round(self) -> tuple[MacSlots, ...] | None:
        """The round has closed; returns its contention statistics (one record per number
        of contenders), or None when the MAC does not resolve contention."""
        return None

    def request(self, client: int) -> simpy.Event | None:
        return None

    def leave(self, client: int) -> bool:
        """Take an interrupted ``client`` out of contention; True if it was contending."""
        return False

    def wall_time_s(self, client: int, t_s: float, airtime_s: float) -> float:
        return airtime_s

    def radio_s(self, client: int, airtime_s: float, wall_s: float) -> float:
        """Seconds of an attempt's ``wall_s`` in which the device's radio transmits; it
        waits (at idle power) for the rest. Without sharing: the whole airtime."""
        return airtime_s

    def forwards(self, client: int) -> bool:
        return True

    def share(self, client: int, t_s: float, airtime_s: float) -> tuple[float, float]:
        """(wall, radio) seconds of an upload attempt of ``airtime_s`` starting at ``t_s``
        (:meth:`wall_time_s`, :meth:`radio_s`): the sharing rule for
        :func:`simfl.sim.channel.arq_transfer`."""
        wall_s = self.wall_time_s(client, t_s, airtime_s)
        return wall_s, self.radio_s(client, airtime_s, wall_s)


class TdmaAccess(IdealAccess):
    """Time division (``slots``) or equal bandwidth shares (``shared``) among a round's clients."""

    cfg: TdmaMac

    def open_round(self, round: int, started: np.ndarray) -> None:
        self._t_open_s = self.env.now
        self._n = max(len(started), 1)
        self._rank = {int(c): i for i, c in enumerate(started)}

    def wall_time_s(self, client: int, t_s: float, airtime_s: float) -> float:
        if self.cfg.mode == "shared":
            return airtime_s * self._n
        return tdma_finish_s(t_s - self._t_open_s, airtime_s, self._rank[client], self._n,
                             self.cfg.slot_s) + self._t_open_s - t_s

    def radio_s(self, client: int, airtime_s: float, wall_s: float) -> float:
        """Slots: the radio is on only in the client's own slots (its airtime) and waits
        for them in between; shared: it transmits for the whole, n times longer, attempt."""
        return wall_s if self.cfg.mode == "shared" else airtime_s


def tdma_finish_s(ready_s: float, airtime_s: float, rank: int, n_slots: int,
                  slot_s: float) -> float:
    """When ``airtime_s`` of transmission ends that uses only slot ``rank`` of every frame.

    Frames of ``n_slots * slot_s`` start at time 0; the client may transmit from
    ``ready_s`` on, inside [k F + rank slot_s, k F + (rank + 1) slot_s) for k = 0, 1, ...
    """
    if airtime_s <= 0:
        return ready_s
    frame_s, offset_s = n_slots * slot_s, rank * slot_s
    k = math.floor((ready_s - offset_s) / frame_s)
    here_s = max(0.0, k * frame_s + offset_s + slot_s - ready_s)  # left of the current slot
    if airtime_s <= here_s:
        return ready_s + airtime_s
    rest_s = airtime_s - here_s
    more = max(1, math.ceil(rest_s / slot_s - _GRID_EPS))  # further slots needed
    return (k + more) * frame_s + offset_s + rest_s - (more - 1) * slot_s


class SlottedAloha(IdealAccess):
    """Slotted ALOHA contention for the uplink (see :class:`SlottedAlohaMac`).

    ``tx_slots[i]`` counts client i's transmissions (each costs ``slot_s`` of airtime);
    ``on_transmit(clients, airtime_s)``, if set, is called at the end of every busy slot
    with the clients that transmitted in it (a sorted list of ids), so that energy
    models can charge them.
    ``slot_stats`` maps a number of contenders n to [slots with n contenders, successes
    in them], for the current round; :meth:`close_round` returns them as records.
    """

    cfg: SlottedAlohaMac

    def __init__(self, cfg: SlottedAlohaMac, env: simpy.Environment, rngs: RngTree,
                 n_clients: int, on_transmit: OnTransmit | None = None) -> None:
        super().__init__(cfg, env, rngs, n_clients, on_transmit)
        self.p = per_client(cfg.access_prob, n_clients, "network.mac.access_prob")
        self.next_slot = np.full(n_clients, NEVER, dtype=np.int64)
        self.join_slot = np.zeros(n_clients, dtype=np.int64)
        self.collisions = np.zeros(n_clients, dtype=np.int64)
        self.tx_slots = np.zeros(n_clients, dtype=np.int64)
        self.slot_stats: dict[int, list[int]] = {}
        self._waiting: dict[int, simpy.Event] = {}
        # who transmits next: a heap of (next_slot, client) entries, stale ones included;
        # under heavy contention instead the ids of the round's contenders (_dense) plus
        # those that joined since the last scan (_joined)
        self._queue: list[tuple[int, int]] = []
        self._dense: np.ndarray | None = None
        self._joined: list[int] = []
        self._pending: set[int] = set()
        self._changes: dict[int, int] = {}  # slot -> change of the number of contenders
        self._change_slots: list[int] = []  # heap of the keys of _changes
        self._counted = 0  # slots before this one are accounted in slot_stats
        self._n = 0  # contenders from slot _counted on (before its changes)
        self._rng = rngs.stream("mac/aloha/round/-1")
        self._round = -1
        # serialised data phase: when each data channel is next free, the attempts
        # queued on it (client -> (start, end)) and the channel of each queued client
        self._free_s = [0.0] * cfg.channels
        self._held: list[dict[int, tuple[float, float]]] = [{} for _ in range(cfg.channels)]
        self._channel_of: dict[int, int] = {}

    # ---- the round and the device's calls

    def open_round(self, round: int, started: np.ndarray) -> None:
        self._rng = self.rngs.stream(f"mac/aloha/round/{round}")
        self._round = round
        self.slot_stats = {}
        self._dense, self._joined = None, []  # nobody contends between rounds

    def close_round(self) -> tuple[MacSlots, ...]:
        self._count_to(self._slot_at(self.env.now))
        stats, self.slot_stats = self.slot_stats, {}
        return tuple(MacSlots(self._round, n, slots, wins)
                     for n, (slots, wins) in sorted(stats.items()))

    def request(self, client: int) -> simpy.Event:
        start = math.ceil(self.env.now / self.cfg.slot_s - _GRID_EPS)
        self.join_slot[client] = start
        self.collisions[client] = 0
        self._change(start, +1)
        cfg, p = self.cfg, self.p[client]
        if cfg.backoff == "binary_exponential":  # scalar draws: one request at a time
            first = int(self._rng.integers(0, cfg.cw_min))
        else:
            first = int(self._rng.geometric(p)) - 1 if p > 0 else NEVER - start
        self._transmit_in(client, min(start + first, NEVER))
        event = self._waiting[client] = self.env.event()
        self._schedule(start + first)
        return event

    def wall_time_s(self, client: int, t_s: float, airtime_s: float) -> float:
        """Parallel data phase: the airtime. Serialised: the wait for the data channel
        that is free first (in order of request) plus the airtime on it."""
        if self.cfg.data_phase == "parallel":
            return airtime_s
        self._release(client, t_s)  # a retry queues again
        k = min(range(self.cfg.channels), key=lambda c: (self._free_s[c], c))
        start_s = max(t_s, self._free_s[k])
        end_s = start_s + airtime_s
        self._free_s[k] = end_s
        self._held[k][client] = (start_s, end_s)
        self._channel_of[client] = k
        return end_s - t_s

    def _release(self, client: int, now_s: float) -> None:
        """Take ``client``'s queued or running data attempt off its channel: the channel
        is then free after the attempts still queued on it (or now)."""
        k = self._channel_of.pop(client, None)
        if k is None:
            return
        held = self._held[k]
        held.pop(client, None)
        for done in [c for c, (_, end_s) in held.items() if end_s <= now_s]:
            del held[done]
            self._channel_of.pop(done, None)
        self._free_s[k] = max([now_s] + [end_s for _, end_s in held.values()])

    def leave(self, client: int) -> bool:
        if self.cfg.data_phase == "serialised":
            self._release(client, self.env.now)
        if self._waiting.pop(client, None) is None:
            return False
        self.next_slot[client] = NEVER
        self._change(max(self._slot_at(self.env.now), int(self.join_slot[client])), -1)
        return True

    # ---- contention

    def _slot_at(self, t_s: float) -> int:
        return math.floor(t_s / self.cfg.slot_s + _GRID_EPS)

    def _gaps(self, clients: np.ndarray) -> np.ndarray:
        """Slots from a collision to each of ``clients``' next transmission (>= 1)."""
        cfg, rng = self.cfg, self._rng
        if cfg.backoff == "binary_exponential":
            window = np.minimum(cfg.cw_min * 2 ** np.minimum(self.collisions[clients], 40),
                                cfg.cw_max)
            return rng.integers(0, window) + 1
        return rng.geometric(self.p[clients])  # they transmitted, so p > 0

    def _after(self, slot: int, gaps: np.ndarray) -> np.ndarray:
        """``slot + gaps``, saturating at NEVER (a gap beyond the int64 slot grid)."""
        return slot + np.minimum(gaps, NEVER - slot)

    def _transmit_in(self, client: int, slot: int) -> None:
        """``client`` (contending) next transmits in ``slot``; NEVER if it never does."""
        self.next_slot[client] = slot
        if slot == NEVER:
            return
        if self._dense is None:
            heapq.heappush(self._queue, (slot, client))
        else:
            self._joined.append(client)

    def _first_busy(self) -> int:
        """The earliest slot a contender transmits in."""
        if self._dense is not None:  # and drop the contenders that are done
            self._add_joined()
            if self._scan_all():
                return int(self.next_slot.min())
            slots = self.next_slot[self._dense]
            self._dense = self._dense[slots != NEVER]
            return int(slots.min()) if slots.size else NEVER
        queue = self._queue
        while queue and self.next_slot[queue[0][1]] != queue[0][0]:
            heapq.heappop(queue)  # stale: that client has left or moved on
        return queue[0][0] if queue else NEVER

    def _popped(self, slot: int) -> list[int]:
        """Sorted ids of the clients that transmit in ``slot``, taken off the heap."""
        queue, next_slot, tx = self._queue, self.next_slot, []
        while queue and queue[0][0] <= slot:  # entries of earlier slots are stale
            entry_slot, client = heapq.heappop(queue)
            if entry_slot == slot and next_slot[client] == slot:
                tx.append(client)
        return sorted(set(tx)) if len(tx) > 1 else tx

    def _scanned(self, slot: int) -> np.ndarray:
        """Sorted ids of the clients that transmit in ``slot``, by a scan of the contenders."""
        self._add_joined()
        if self._scan_all():
            return np.flatnonzero(self.next_slot == slot)
        return np.sort(self._dense[self.next_slot[self._dense] == slot])

    def _scan_all(self) -> bool:
        """Whether a contiguous scan of every client beats indexing the contenders."""
        return self._dense.size * SCAN_ALL_RATIO >= self.n_clients

    def _add_joined(self) -> None:
        """Add the clients that joined since to the dense contender set."""
        if self._joined:
            self._dense = np.concatenate([self._dense, np.array(self._joined, dtype=np.int64)])
            self._joined = []

    def _schedule(self, slot: int) -> None:
        """Make sure the end of ``slot`` is processed if it is the earliest busy slot."""
        if slot == NEVER or slot in self._pending:
            return
        if self._pending and slot > min(self._pending):
            return  # an earlier wake-up will reschedule
        self._pending.add(slot)
        end_s = (slot + 1) * self.cfg.slot_s
        wake = self.env.timeout(max(0.0, end_s - self.env.now))
        wake.callbacks.append(lambda _: self._end_of_slot(slot))

    def _end_of_slot(self, slot: int) -> None:
        """Settle ``slot``, the earliest busy one, and wake up for the next."""
        self._pending.discard(slot)
        if self._dense is None:
            tx = self._popped(slot)
            if len(tx) < DENSE_TX:
                if tx:
                    self._resolve_few(slot, tx)
                self._schedule(self._first_busy())
                return
            self._dense, self._queue = np.fromiter(self._waiting, dtype=np.int64), []
        tx = self._scanned(slot)
        if tx.size:
            self._resolve_many(slot, tx)
        self._schedule(self._first_busy())

    def _resolve_few(self, slot: int, tx: list[int]) -> None:
        """Settle ``slot`` with a few transmitters ``tx`` (sorted ids), in plain Python.

        A lone transmitter wins; with several channels its channel is drawn all the
        same (a scalar draw takes the same number as a vector of one), so the stream's
        later draws are those of :meth:`_resolve_many`.
        """
        cfg, n_tx = self.cfg, len(tx)
        if n_tx == 1:
            won = [True]
            if cfg.channels > 1:
                self._rng.integers(0, cfg.channels)
        elif cfg.channels == 1:
            won = [False] * n_tx
        else:
            picks = self._rng.integers(0, cfg.channels, size=n_tx)
            won = (np.bincount(picks, minlength=cfg.channels)[picks] == 1).tolist()
        granted = [c for c, w in zip(tx, won) if w]
        self._tally(slot, len(granted))
        for client in tx:
            self.tx_slots[client] += 1
        if self.on_transmit is not None:
            self.on_transmit(tx, cfg.slot_s)
        retry, given_up = [], []
        limit = NEVER if cfg.max_attempts is None else cfg.max_attempts
        for client, w in zip(tx, won):
            if not w:
                self.collisions[client] += 1
                (given_up if self.collisions[client] >= limit else retry).append(client)
        if retry:
            after = self._after(slot, self._gaps(np.array(retry))).tolist()
            for client, next_slot in zip(retry, after):
                self._transmit_in(client, next_slot)
        self._grant(sorted(granted + given_up) if given_up else granted, set(granted))

    def _resolve_many(self, slot: int, tx: np.ndarray) -> None:
        """Settle ``slot`` with transmitters ``tx`` (sorted ids), vectorised (heavy contention)."""
        cfg = self.cfg
        if cfg.channels == 1:
            won = np.full(tx.size, tx.size == 1)
        else:
            picks = self._rng.integers(0, cfg.channels, size=tx.size)
            won = np.bincount(picks, minlength=cfg.channels)[picks] == 1
        self._tally(slot, int(won.sum()))
        self.tx_slots[tx] += 1
        if self.on_transmit is not None:
            self.on_transmit(tx.tolist(), cfg.slot_s)
        lost = tx[~won]
        self.collisions[lost] += 1
        give_up = np.zeros(lost.size, dtype=bool)
        if cfg.max_attempts is not None:
            give_up = self.collisions[lost] >= cfg.max_attempts
        retry = lost[~give_up]
        self.next_slot[retry] = self._after(slot, self._gaps(retry))
        self._grant(np.sort(np.concatenate([tx[won], lost[give_up]])).tolist(),
                    set(tx[won].tolist()))

    def _grant(self, done: list[int], granted: set[int]) -> None:
        """End the contention of ``done`` (sorted): access for ``granted``, else given up."""
        self._n -= len(done)
        for client in done:
            self.next_slot[client] = NEVER
            self._waiting.pop(client).succeed(client in granted)

    # ---- statistics: slots with n contenders and their successes

    def _change(self, slot: int, delta: int) -> None:
        if slot not in self._changes:
            self._changes[slot] = 0
            heapq.heappush(self._change_slots, slot)
        self._changes[slot] += delta

    def _apply_changes(self, slot: int) -> None:
        while self._change_slots and self._change_slots[0] <= slot:
            self._n += self._changes.pop(heapq.heappop(self._change_slots))

    def _tally(self, slot: int, wins: int) -> None:
        """Account the idle slots before ``slot``, then ``slot`` with its ``wins``."""
        self._count_to(slot)
        self._apply_changes(slot)
        stats = self.slot_stats.setdefault(self._n, [0, 0])
        stats[0] += 1
        stats[1] += wins
        self._counted = slot + 1

    def _count_to(self, end: int) -> None:
        """Account the slots [_counted, end) as slots in which nobody transmitted."""
        while self._counted < end:
            self._apply_changes(self._counted)
            upto = min(end, self._change_slots[0]) if self._change_slots else end
            if self._n:
                self.slot_stats.setdefault(self._n, [0, 0])[0] += upto - self._counted
            self._counted = upto


class Relay(IdealAccess):
    """The Random Access Model's relay (see :class:`RelayMac`); its draws stay inside it."""

    cfg: RelayMac

    def __init__(self, cfg: RelayMac, env: simpy.Environment, rngs: RngTree,
                 n_clients: int, on_transmit: OnTransmit | None = None) -> None:
        super().__init__(cfg, env, rngs, n_clients, on_transmit)
        self._probs = per_client(cfg.probs, n_clients, "network.mac.probs")
        self._forwarded = np.zeros(n_clients, dtype=bool)

    def open_round(self, round: int, started: np.ndarray) -> None:
        self._forwarded[:] = False
        self._forwarded[relay_draw(self.cfg, self._probs, started,
                                   self.rngs.stream(f"mac/relay/round/{round}"))] = True

    def forwards(self, client: int) -> bool:
        return bool(self._forwarded[client])


def relay_draw(cfg: RelayMac, probs: np.ndarray, started: np.ndarray,
               rng: np.random.Generator) -> np.ndarray:
    """The clients of ``started`` that the relay forwards this round (sorted ids)."""
    started = np.asarray(started, dtype=np.int64)
    p = probs[started]
    if cfg.policy == "bernoulli":
        return started[rng.random(len(probs))[started] < p]
    if cfg.policy == "capacity":
        pool, weights = started[p > 0], p[p > 0]
        k = min(cfg.capacity, len(pool))
        if k == 0:
            return pool
        return np.sort(rng.choice(pool, size=k, replace=False, p=weights / weights.sum()))
    return started[aloha_heard(p, cfg.slots, rng)]


def aloha_heard(p: np.ndarray, slots: int, rng: np.random.Generator) -> np.ndarray:
    """Who is heard in ``slots`` slots of slotted ALOHA with access probabilities ``p``,
    each client contending until its first success (a mask over ``p``).

    Drawn success by success, not slot by slot, so a million slots cost what one does.
    With the set R still contending (none with p = 1), a slot has exactly one
    transmitter i with probability s_i = w_i prod_{j in R} (1 - p_j), w_i = p_i / (1 -
    p_i): the slots up to the next success are Geometric(sum_i s_i), and the client heard
    is i with probability proportional to w_i. The order in which clients are heard is
    therefore successive sampling with weights w, drawn at once by sorting E_i / w_i (E_i
    ~ Exp(1)). A client with p = 1 transmits in every slot: two of them collide forever;
    a single one is heard first (at Geometric(prod of the others' 1 - p_j)), then the
    rest contend. Clients with p = 0 never transmit.
    """
    heard = np.zeros(len(p), dtype=bool)
    left = float(slots)
    sure = np.flatnonzero(p >= 1.0)
    if len(sure) > 1:
        return heard
    unsure = np.flatnonzero((p > 0.0) & (p < 1.0))
    log_quiet = np.log1p(-p[unsure])  # log P(client does not transmit in a slot)
    if len(sure) == 1:
        success = math.exp(log_quiet.sum())
        if success <= 0.0:
            return heard
        left -= float(rng.geometric(success))
        if left < 0:
            return heard
        heard[sure[0]] = True
    if not len(unsure):
        return heard
    w = p[unsure] / (1.0 - p[unsure])
    order = np.argsort(rng.standard_exponential(len(unsure)) / w, kind="stable")
    # before the k-th success of the order: R = order[k:], success prob P(R) * W(R)
    tail_w = np.cumsum(w[order][::-1])[::-1]
    tail_log = np.cumsum(log_quiet[order][::-1])[::-1]
    success = np.minimum(np.exp(tail_log) * tail_w, 1.0)
    possible = success > 0.0
    if not possible.all():  # the first impossible success stops everything after it
        stop = int(np.argmin(possible))
        order, success = order[:stop], success[:stop]
    gaps = rng.geometric(success).astype(float)
    heard[unsure[order[np.cumsum(gaps) <= left]]] = True
    return heard


_ACCESS = {IdealMac: IdealAccess, TdmaMac: TdmaAccess, SlottedAlohaMac: SlottedAloha,
           RelayMac: Relay}


def build_mac(cfg: Mac, env: simpy.Environment, rngs: RngTree, n_clients: int,
              on_transmit: OnTransmit | None = None) -> IdealAccess:
    """The uplink access model of ``cfg``, bound to ``env`` and the run's random streams;
    ``on_transmit`` is told about contention transmissions (to charge their energy)."""
    return _ACCESS[type(cfg)](cfg, env, rngs, n_clients, on_transmit)
