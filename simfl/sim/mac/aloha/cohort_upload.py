"""The data phase after a cohort's contention: every granted upload with ARQ, in numpy.

A contender granted access at the end of its slot uploads over its own link, as
:func:`~simfl.sim.links.channel.arq_transfer` does for one client (the parallel data
phase): up to ``max_attempts`` back-to-back attempts of one airtime each, stopping at
the first that arrives. All attempts lost is the end of the upload (``erased``: a lost
data phase does not contend again). The link decides each attempt
(:meth:`~simfl.sim.links.channel.Link.lost_cohort`, with per-client state such as a
Gilbert-Elliott chain moved on as per attempt). The round's close cuts it off: an
attempt starts only by the close, and one still in the air at the close does not arrive.

The work is one pass per attempt number over the uploads still going, not Python work
per client.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simfl.sim.links.channel import Link


@dataclass(frozen=True)
class CohortUpload:
    """Per granted upload (in the order given): the attempts started by the close, the
    attempts lost and over by then (each one recorded), whether one arrived by the
    close, whether all ``max_attempts`` were lost by then, and the end of the last attempt
    started (an arrival's time)."""

    n_attempts: np.ndarray
    n_lost: np.ndarray
    arrived: np.ndarray
    erased: np.ndarray
    end_s: np.ndarray


def upload(link: Link, clients: np.ndarray, start_s: np.ndarray, airtime_s: float,
           max_attempts: int, close_s: float, rng: np.random.Generator | None
           ) -> CohortUpload:
    """Upload of ``clients`` (distinct ids), granted at ``start_s``, over ``link`` with up to
    ``max_attempts`` attempts of ``airtime_s``, until ``close_s``; ``rng`` draws the losses
    (None: a link that draws nothing, where no attempt is lost)."""
    n = clients.size
    n_attempts = np.zeros(n, dtype=np.int64)
    n_lost = np.zeros(n, dtype=np.int64)
    arrived = np.zeros(n, dtype=bool)
    end_s = np.asarray(start_s, dtype=float).copy()
    going = np.flatnonzero(start_s <= close_s)
    for attempt in range(1, max_attempts + 1):
        if not going.size:
            break
        t_s = end_s[going]
        lost = (np.zeros(going.size, dtype=bool) if rng is None
                else link.lost_cohort(clients[going], t_s, airtime_s, rng))
        n_attempts[going] = attempt
        end_s[going] = t_s + airtime_s
        over = end_s[going] <= close_s
        arrived[going[~lost & over]] = True
        n_lost[going[lost & over]] = attempt
        going = going[lost & over]  # the next attempt starts as this one ends
    erased = n_lost == max_attempts
    return CohortUpload(n_attempts, n_lost, arrived, erased, end_s)
