"""The coming power changes of devices whose radio is on in bursts.

A transfer under a MAC that makes the radio wait (TDMA slots, a wait for a data channel)
draws the radio's power inside its bursts and idle power between them.
:class:`PowerChanges` keeps, per device, when its power changes next and to what; the
energy meter settles through the changes that have passed, and a battery finds where
the piecewise power empties it.
"""

from __future__ import annotations

import math

from simfl.sim.links.channel import Bursts


class PowerChanges:
    """Per device at work, its coming power changes as (time, power), the next one last."""

    def __init__(self) -> None:
        self._by_client: dict[int, list[tuple[float, float]]] = {}

    def plan(self, client: int, now_s: float, radio_w: float, idle_w: float,
             bursts: Bursts) -> float:
        """Keep the changes of an attempt from ``now_s`` whose radio draws ``radio_w`` in
        ``bursts`` (offsets from ``now_s``) and ``idle_w`` between them; returns the
        power drawn now. The attempt ends with its last burst (the next state follows)."""
        changes: list[tuple[float, float]] = []
        power_w = idle_w
        for start_s, end_s in bursts:
            if end_s <= start_s:
                continue
            if start_s <= 0.0:
                power_w = radio_w
            else:
                changes.append((now_s + start_s, radio_w))
            changes.append((now_s + end_s, idle_w))
        if changes:
            changes.pop()
        if changes:
            self._by_client[client] = changes[::-1]
        else:
            self._by_client.pop(client, None)
        return power_w

    def drop(self, client: int) -> None:
        """Forget ``client``'s coming changes (it changed state)."""
        self._by_client.pop(client, None)

    def pieces(self, client: int, now_s: float, power_w: float) -> list[tuple[float, float]]:
        """The pieces of constant power of ``client``, drawing ``power_w`` since its last
        settlement, up to ``now_s``: (end, power) each, the changes passed on the way
        taken (the last piece's power is drawn from ``now_s`` on)."""
        changes = self._by_client.get(client)
        pieces: list[tuple[float, float]] = []
        while changes and changes[-1][0] <= now_s:
            t_s, next_w = changes.pop()
            pieces.append((t_s, power_w))
            power_w = next_w
        pieces.append((now_s, power_w))
        return pieces

    def until_spent_s(self, client: int, now_s: float, power_w: float,
                      energy_j: float) -> float:
        """Seconds from ``now_s`` until ``client``, drawing ``power_w`` now and then its
        coming changes, has spent ``energy_j`` (inf: never)."""
        elapsed_s = 0.0
        for t_s, next_w in reversed(self._by_client.get(client, ())):
            piece_s = t_s - now_s - elapsed_s
            if power_w > 0 and energy_j <= power_w * piece_s:
                break
            energy_j -= power_w * piece_s
            elapsed_s, power_w = t_s - now_s, next_w
        return elapsed_s + energy_j / power_w if power_w > 0 else math.inf
