"""The data phase after a cohort's contention: every granted upload with ARQ, in numpy.

A contender granted access at the end of its slot uploads over its own link, as
:func:`~simfl.sim.links.channel.arq_transfer` does for one client (the parallel data
phase): up to ``max_attempts`` back-to-back attempts, stopping at the first that
arrives. All attempts lost is the end of the upload (``erased``: a lost data phase does
not contend again). The link draws each attempt's loss and airtime
(:meth:`~simfl.sim.links.channel.Link.cohort_attempts`, with per-client state such as a
Gilbert-Elliott chain moved on per attempt). The round's close cuts it off: an attempt
starts only by the close, and one still in the air at the close does not arrive.

The work is one pass per attempt number over the uploads still going, not Python work
per client.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simfl.sim.links.channel import Link


@dataclass(frozen=True)
class CohortUpload:
    """Per granted upload (in the order given): whether an attempt arrived by the close,
    whether all ``max_attempts`` were lost by then, and the end of the last attempt
    started (an arrival's time). Per attempt started, by attempt number, then upload:
    the upload it belongs to (``upload``), its ``number`` (from 1), ``start_s``,
    ``airtime_s`` and whether it was ``lost``."""

    arrived: np.ndarray
    erased: np.ndarray
    end_s: np.ndarray
    upload: np.ndarray
    number: np.ndarray
    start_s: np.ndarray
    airtime_s: np.ndarray
    lost: np.ndarray

    def lost_by(self, close_s: float) -> np.ndarray:
        """Which attempts were lost and over by ``close_s`` (each one is recorded)."""
        return np.asarray(self.lost & (self.start_s + self.airtime_s <= close_s))


def upload(link: Link, clients: np.ndarray, start_s: np.ndarray, n_bytes: int,
           max_attempts: int, close_s: float, rng: np.random.Generator | None
           ) -> CohortUpload:
    """Upload of ``n_bytes`` by each of ``clients`` (distinct ids), granted at ``start_s``,
    over ``link`` with up to ``max_attempts`` attempts, until ``close_s``; ``rng`` draws
    the losses and fades (None: a link that draws nothing)."""
    n = clients.size
    arrived = np.zeros(n, dtype=bool)
    n_lost = np.zeros(n, dtype=np.int64)
    end_s = np.asarray(start_s, dtype=float).copy()
    parts: list[tuple[np.ndarray, int, np.ndarray, np.ndarray, np.ndarray]] = []
    going = np.flatnonzero(start_s <= close_s)
    for number in range(1, max_attempts + 1):
        if not going.size:
            break
        t_s = end_s[going]
        lost, airtime_s = link.cohort_attempts(clients[going], t_s, n_bytes, rng)
        parts.append((going, number, t_s, airtime_s, lost))
        end_s[going] = t_s + airtime_s
        over = end_s[going] <= close_s
        arrived[going[~lost & over]] = True
        n_lost[going[lost & over]] = number
        going = going[lost & over]  # the next attempt starts as this one ends
    if not parts:
        parts.append((np.empty(0, np.int64), 1, np.empty(0), np.empty(0),
                      np.empty(0, dtype=bool)))
    return CohortUpload(
        arrived, n_lost == max_attempts, end_s,
        np.concatenate([p[0] for p in parts]),
        np.concatenate([np.full(p[0].size, p[1], dtype=np.int64) for p in parts]),
        np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts]),
        np.concatenate([p[4] for p in parts]))
