"""Scripted kinds: a channel, a MAC and an availability model that do exactly what they
are told, with no random draws.

They exist for tests and worked examples: a scenario names the losses, grants or
presence it needs instead of replacing a builder at run time. Each is an ordinary
registered kind (``simfl list channels`` shows ``scripted_erasure``) and obeys the
contract of its extension point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simfl.core.config.availability import Availability
from simfl.core.config.network import Channel, Mac
from simfl.core.config.node import MAX_CLIENTS, require


@dataclass(frozen=True)
class ScriptedErasureChannel(Channel):
    """Scripted losses (for tests): attempt n of every client is lost iff ``lost[n]``.

    Attempts are counted per client from 0, over the whole run, in the order the client
    makes them, apart for each link (the uplink and the downlink each count their own);
    ``lost`` repeats cyclically (``()`` loses nothing). ``clients`` limits
    the script to the listed clients (``()``: every client); the others never lose.
    """

    kind = "scripted_erasure"
    lost: tuple[bool, ...] = ()
    clients: tuple[int, ...] = ()

    def validate(self) -> None:
        super().validate()
        require(all(0 <= c < MAX_CLIENTS for c in self.clients), "clients", self.clients,
                "client ids >= 0")

    def loses(self, client: int, attempt: int) -> bool:
        """Whether attempt ``attempt`` (0-based) of ``client`` is lost."""
        if not self.lost or (self.clients and client not in self.clients):
            return False
        return self.lost[attempt % len(self.lost)]


@dataclass(frozen=True)
class ScriptedMac(Mac):
    """Scripted access (for tests): client c may transmit ``grant_s[c]`` seconds after the
    round opens (the list repeats cyclically over client ids; ``inf``: never).

    A client that is ready later is granted at once. Clients in ``refused`` give up at
    once as if they had hit a retry limit (their update is missing, reason
    ``collided``). Airtime is wall time; the relay forwards everything.
    """

    kind = "scripted"
    infinite_ok = ("grant_s",)
    grant_s: tuple[float, ...] = (0.0,)
    refused: tuple[int, ...] = ()

    def validate(self) -> None:
        super().validate()
        require(len(self.grant_s) > 0 and all(g >= 0 for g in self.grant_s), "grant_s",
                self.grant_s, "a non-empty list of delays >= 0 seconds (inf: never)")
        require(all(0 <= c < MAX_CLIENTS for c in self.refused), "refused", self.refused,
                "client ids >= 0")

    def grant_delay_s(self, client: int) -> float:
        """Seconds after the round opens at which ``client`` is granted access."""
        delay = self.grant_s[client % len(self.grant_s)]
        return math.inf if math.isinf(delay) else float(delay)


@dataclass(frozen=True)
class ScriptedAvailability(Availability):
    """Scripted presence (for tests): the clients online in round r are ``online[r % len]``.

    Each entry lists client ids (an empty entry: nobody is online that round); the
    default, ``online = ()``, keeps every client online. Nobody goes offline during a
    round.
    """

    kind = "scripted"
    online: tuple[tuple[int, ...], ...] = ()

    def validate(self) -> None:
        super().validate()
        require(all(0 <= c < MAX_CLIENTS for group in self.online for c in group), "online",
                self.online, "lists of client ids >= 0, one list per round")

    def online_in(self, round: int) -> tuple[int, ...] | None:
        """The ids online in ``round``, or None for every client."""
        return self.online[round % len(self.online)] if self.online else None
