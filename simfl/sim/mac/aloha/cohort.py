"""Slotted ALOHA for a whole cohort at once: a round's contention resolved in numpy.

When every contender's ready time is known as the round starts (the rounds that
:class:`~simfl.sim.rounds.fast.FastRound` runs: ideal links, infinite energy, the
parallel data phase, nobody leaving), the contention needs no event per slot. Each
transmission is a (slot, channel) key; keys are kept sorted, and everything before the
first slot in which two keys coincide is a success at once. That slot is settled
(unique keys win, the others collided: they back off or give up), the retries are put
back among the keys, and the scan goes on. The cost is a few numpy passes per slot
with a collision, not Python work per contender.

The rules are those of :class:`~simfl.sim.mac.aloha.contention.SlottedAloha` (Bernoulli access or
binary exponential backoff, a uniformly drawn channel per transmission, the retry
limit, slots that must end by the deadline); the draws come in another order, so the
numbers agree in distribution, not draw for draw.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simfl.core.config.network import SlottedAlohaMac
from simfl.sim.mac.access import first_slots, last_slot_by

#: slot of a contender that was not decided
UNDECIDED = -1


@dataclass(frozen=True)
class CohortContention:
    """Per contender (in the order given): the slot whose end decided it (UNDECIDED: still
    contending at the close), whether it won access, its transmissions and collisions;
    and the round's slots with n contenders and their successes."""

    decided_slot: np.ndarray
    granted: np.ndarray
    n_tx: np.ndarray
    n_collided: np.ndarray
    slot_stats: dict[int, list[int]]


def contend(cfg: SlottedAlohaMac, p: np.ndarray, ready_s: np.ndarray, close_s: float,
            rng: np.random.Generator) -> CohortContention:
    """Resolve the contention of clients ready at ``ready_s`` (access probabilities ``p``),
    counting only slots that end by ``close_s``.

    Every transmission is a key, slot * channels + channel; a key shared by two or more
    transmissions is a collision. Adding transmissions never turns a collision into a
    success, so the outcome is found in passes: find the collisions among the keys so
    far, draw the retries of the new ones (or give up), and stop when a pass finds no
    new collision. Each draw belongs to one attempt of one client and is made once. A
    pass costs a sort of its own new transmissions and a merge into the keys so far.
    """
    slot_s, channels = cfg.slot_s, cfg.channels
    start = first_slots(ready_s, slot_s)
    last = last_slot_by(close_s, slot_s)  # the last slot that ends in time
    too_late = (last + 1) * channels  # keys from here on: slots that end after the close

    def transmit(who: np.ndarray, after: np.ndarray, attempt: np.ndarray) -> np.ndarray:
        """Keys of ``who``'s next transmissions after ``attempt`` collisions, the last in
        slot ``after`` (none yet: from slot ``after`` on, that slot included)."""
        if cfg.backoff == "binary_exponential":
            window = np.minimum(cfg.cw_min * 2 ** np.minimum(attempt, 40), cfg.cw_max)
            gaps = rng.integers(0, window) + (attempt > 0)
        else:
            never = p[who] <= 0
            gaps = rng.geometric(np.where(never, 1.0, p[who])) - (attempt == 0)
            gaps[never] = last + 1
        slots = after + np.minimum(gaps, last + 1 - np.minimum(after, last))
        picks = rng.integers(0, channels, size=who.size) if channels > 1 else 0
        return np.asarray(slots * channels + picks)

    who = np.arange(ready_s.size, dtype=np.int64)
    attempt = np.zeros(who.size, dtype=np.int64)
    keys = transmit(who, start, attempt)
    lost = np.zeros(keys.size, dtype=bool)
    handled = np.zeros(keys.size, dtype=bool)  # collisions already followed up
    # the keys sent in time so far, sorted, and their transmissions; a pass sorts only
    # its fresh transmissions and finds their keys among these by bisection
    held, holder = np.empty(0, np.int64), np.empty(0, np.int64)
    fresh = who
    while True:
        fresh = fresh[keys[fresh] < too_late]
        fresh = fresh[np.argsort(keys[fresh], kind="stable")]
        fresh_keys = keys[fresh]
        below = np.searchsorted(held, fresh_keys, side="left")
        upto = np.searchsorted(held, fresh_keys, side="right")
        taken = upto > below  # an earlier transmission holds the key: all of them lose
        lost[holder[below[taken]]] = True
        same = fresh_keys[1:] == fresh_keys[:-1]
        taken[1:] |= same
        taken[:-1] |= same
        lost[fresh[taken]] = True
        held, holder = np.insert(held, upto, fresh_keys), np.insert(holder, upto, fresh)
        new = np.flatnonzero(lost & ~handled)
        if not new.size:
            break
        handled[new] = True
        tries = attempt[new] + 1
        if cfg.max_attempts is not None:  # the others give up
            new, tries = new[tries < cfg.max_attempts], tries[tries < cfg.max_attempts]
        fresh = np.arange(keys.size, keys.size + new.size)
        keys = np.concatenate([keys, transmit(who[new], keys[new] // channels, tries)])
        who = np.concatenate([who, who[new]])
        attempt = np.concatenate([attempt, tries])
        handled = np.concatenate([handled, np.zeros(new.size, dtype=bool)])
        lost = np.concatenate([lost, np.zeros(new.size, dtype=bool)])

    # a client's last transmission decides: a success, or the collision it gave up on
    in_time = keys < too_late
    final = np.zeros(ready_s.size, dtype=np.int64)
    np.maximum.at(final, who, np.arange(who.size))  # attempts come in order: the last
    decided = np.where(in_time[final], keys[final] // channels, UNDECIDED)
    granted = in_time[final] & ~lost[final]
    wins = keys[in_time & ~lost] // channels
    return CohortContention(decided, granted, np.bincount(who[in_time], minlength=final.size),
                            np.bincount(who[lost], minlength=final.size),
                            _slot_stats(start, decided, last, wins))


def _slot_stats(start: np.ndarray, decided: np.ndarray, last: int,
                won_slots: np.ndarray) -> dict[int, list[int]]:
    """Number of contenders n -> [slots with n contenders, successes in them], over the
    slots up to ``last`` (successes in ``won_slots``, one entry each): a contender counts
    from its first slot to the slot that decided it (to the close if none did). The
    count is constant between the slots where it changes, so the work grows with the
    contenders, not with the slots."""
    joined = start[start <= last]
    if not joined.size:
        return {}
    done = decided[decided != UNDECIDED] + 1  # decided slots end by the close: <= last + 1
    at = np.concatenate([joined, done])
    order = np.argsort(at, kind="stable")
    at = at[order]
    level = np.cumsum(np.concatenate([np.ones(joined.size, np.int64),
                                      np.full(done.size, -1, np.int64)])[order])
    points, first = np.unique(at, return_index=True)
    level = level[np.append(first[1:] - 1, at.size - 1)]  # contenders from points[i] on
    lengths = np.append(points[1:], last + 1) - points  # the last segment ends at the close
    seg_wins = np.bincount(np.searchsorted(points, won_slots, side="right") - 1,
                           minlength=points.size)
    busy = (level > 0) & (lengths > 0)
    levels, index = np.unique(level[busy], return_inverse=True)
    slot_counts = np.bincount(index, weights=lengths[busy], minlength=levels.size)
    win_counts = np.bincount(index, weights=seg_wins[busy], minlength=levels.size)
    return {int(k): [int(s), int(w)] for k, s, w in zip(levels, slot_counts, win_counts)}
