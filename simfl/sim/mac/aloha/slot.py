"""Slotted ALOHA's busy slots: who wins a slot, who collides and when it transmits again.

A busy slot's transmitters each pick one of the channels; a transmitter alone on its
channel wins, the others collide; with an SINR threshold the strongest on a channel
may capture it instead (:class:`~simfl.sim.radio.capture.Capture`). A collided transmitter retries after a gap drawn by
the access policy (Bernoulli access: Geometric(p) slots; binary exponential backoff:
uniform over a window that doubles with each collision, up to ``cw_max``) or gives up
once its collisions reach ``max_attempts``. :class:`SlotOutcomes` makes these draws,
counts the transmissions and collisions of each client and records each busy slot in
the :class:`~simfl.sim.mac.aloha.tally.SlotTally`; ending the winners' and losers'
contention is :class:`~simfl.sim.mac.aloha.contention.SlottedAloha`'s business.
"""

from __future__ import annotations

import numpy as np

from simfl.core.config.network import SlottedAlohaMac
from simfl.sim.mac.protocol import OnTransmit
from simfl.sim.mac.aloha.queue import NEVER, NextSlots, after
from simfl.sim.mac.aloha.tally import SlotTally
from simfl.sim.radio.capture import Capture


class SlotOutcomes:
    """The outcomes of slotted ALOHA's busy slots, drawn from ``rng`` (this round's stream).

    ``tx_slots[i]`` counts client i's transmissions (told to ``on_transmit(clients,
    airtime_s)`` when their slot ends, sorted ids), ``collisions[i]`` its collisions in
    its current contention; the retries' slots go to ``next``.
    """

    def __init__(self, cfg: SlottedAlohaMac, p: np.ndarray, next: NextSlots, tally: SlotTally,
                 rng: np.random.Generator, on_transmit: OnTransmit | None) -> None:
        n_clients = len(next.slot)
        self.cfg, self.p, self.next, self.tally, self.rng = cfg, p, next, tally, rng
        self.on_transmit = on_transmit
        self.collisions = np.zeros(n_clients, dtype=np.int64)
        self.tx_slots = np.zeros(n_clients, dtype=np.int64)
        #: with an SINR threshold, who captures a busy slot (else: alone on a channel)
        self.capture: Capture | None = None

    # ---- the access policy

    def first_gap(self, client: int, start: int) -> int:
        """Slots from ``start`` (the first slot ``client`` may use) to its first
        transmission; ``NEVER - start`` when its access probability is 0."""
        cfg, p = self.cfg, self.p[client]
        if cfg.backoff == "binary_exponential":  # scalar draws: one request at a time
            return int(self.rng.integers(0, cfg.cw_min))
        return int(self.rng.geometric(p)) - 1 if p > 0 else NEVER - start

    def gaps(self, clients: np.ndarray) -> np.ndarray:
        """Slots from a collision to each of ``clients``' next transmission (>= 1)."""
        cfg, rng = self.cfg, self.rng
        gaps: np.ndarray
        if cfg.backoff == "binary_exponential":
            window = np.minimum(cfg.cw_min * 2 ** np.minimum(self.collisions[clients], 40),
                                cfg.cw_max)
            gaps = rng.integers(0, window) + 1
        else:
            gaps = rng.geometric(self.p[clients])  # they transmitted, so p > 0
        return gaps

    # ---- one busy slot

    def settle_few(self, slot: int, tx: list[int]) -> tuple[list[int], set[int]]:
        """Settle ``slot`` with a few transmitters ``tx`` (sorted ids), in plain Python;
        returns the clients whose contention ends (sorted) and those of them granted.

        A lone transmitter wins; with several channels its channel is drawn all the
        same (a scalar draw takes the same number as a vector of one), so the stream's
        later draws are those of :meth:`settle_many`.
        """
        cfg, n_tx = self.cfg, len(tx)
        if n_tx == 1 and self.capture is None:  # the usual busy slot: a lone transmitter, granted
            if cfg.channels > 1:
                self.rng.integers(0, cfg.channels)
            self.tally.busy(slot, 1)
            self.tx_slots[tx[0]] += 1
            if self.on_transmit is not None:
                self.on_transmit(tx, cfg.slot_s)
            return tx, set(tx)
        if self.capture is not None:
            picks = None if cfg.channels == 1 else self.rng.integers(0, cfg.channels, size=n_tx)
            won = self.capture.won(np.asarray(tx, dtype=np.int64), picks, self.rng).tolist()
        elif cfg.channels == 1:
            won = [False] * n_tx
        else:
            picks = self.rng.integers(0, cfg.channels, size=n_tx)
            won = (np.bincount(picks, minlength=cfg.channels)[picks] == 1).tolist()
        granted = [c for c, w in zip(tx, won) if w]
        self.tally.busy(slot, len(granted))
        for client in tx:
            self.tx_slots[client] += 1
        if self.on_transmit is not None:
            self.on_transmit(tx, cfg.slot_s)
        retry: list[int] = []
        given_up: list[int] = []
        limit = NEVER if cfg.max_attempts is None else cfg.max_attempts
        for client, w in zip(tx, won):
            if not w:
                self.collisions[client] += 1
                (given_up if self.collisions[client] >= limit else retry).append(client)
        if retry:
            next_slots = after(slot, self.gaps(np.array(retry))).tolist()
            for client, next_slot in zip(retry, next_slots):
                self.next.transmit_in(client, next_slot)
        return (sorted(granted + given_up) if given_up else granted), set(granted)

    def settle_many(self, slot: int, tx: np.ndarray) -> tuple[list[int], set[int]]:
        """Settle ``slot`` with transmitters ``tx`` (sorted ids), vectorised (heavy
        contention); returns what :meth:`settle_few` does."""
        cfg = self.cfg
        picks = None if cfg.channels == 1 else self.rng.integers(0, cfg.channels, size=tx.size)
        if self.capture is not None:
            won = self.capture.won(tx, picks, self.rng)
        elif picks is None:
            won = np.full(tx.size, tx.size == 1)
        else:
            won = np.bincount(picks, minlength=cfg.channels)[picks] == 1
        self.tally.busy(slot, int(won.sum()))
        self.tx_slots[tx] += 1
        if self.on_transmit is not None:
            self.on_transmit(tx.tolist(), cfg.slot_s)
        lost = tx[~won]
        self.collisions[lost] += 1
        give_up = np.zeros(lost.size, dtype=bool)
        if cfg.max_attempts is not None:
            give_up = self.collisions[lost] >= cfg.max_attempts
        retry = lost[~give_up]
        self.next.slot[retry] = after(slot, self.gaps(retry))
        return (np.sort(np.concatenate([tx[won], lost[give_up]])).tolist(),
                set(tx[won].tolist()))
