"""The record of one round's analog slot (over-the-air computation, ``aircomp``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AirSlot:
    """Who transmitted in a round's analog slot, and how precise their superposed sum is.

    The timing path fixes it (:mod:`simfl.sim.mac.aircomp`); the ``aircomp`` aggregator
    reads it. ``participants`` (sorted ids) are the clients whose updates superposed;
    ``truncated`` those that sat out in a deep fade (|h_k|^2 below the threshold).
    ``eta`` is the common scale P * min_k |h_k|^2 over the participants (0 without
    any), ``mse`` the error variance noise_var / eta of each entry of the received
    sum after division by sqrt(eta) (NaN without participants). ``noise_seed`` seeds
    the receiver noise, from the named stream ``aircomp/noise/<round>``.
    ``t_start_s`` is when the slot began (NaN if it never did) and ``slot_s`` how
    long it lasts.
    """

    round: int
    t_start_s: float
    slot_s: float
    participants: tuple[int, ...]
    truncated: tuple[int, ...]
    eta: float
    mse: float
    noise_seed: int
