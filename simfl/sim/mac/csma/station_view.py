"""One station's own view of a medium that not every station hears, and a frame on the air.

A station keeps its backoff as ``count`` slots left from ``resume_s`` (DIFS after the end
of the latest busy interval it sensed), so it sends at ``resume_s + count * slot_s``
unless a frame it senses starts first. Then it freezes with the whole slots counted so
far taken off; a frame it senses starting exactly when its count reaches 0 does not stop
it (both send, as two equal backoffs do when every station hears every other).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simfl.sim.mac.csma.dcf import GRID_EPS


@dataclass
class StationView:
    """A contending station: its MPDUs, its backoff as it counts it, its radio."""

    join: int  # its join number (a station may leave and join again)
    left: int  # MPDUs left, the one being sent included
    last_bits: int
    retries: int = 0
    count: int = 0  # backoff slots left, counted from resume_s
    resume_s: float = 0.0  # when it counts idle slots again
    busy_until_s: float = -math.inf  # end of the latest busy interval it senses
    gen: int = 0  # its scheduled send is valid for this only
    sending: bool = False  # in its own exchange
    tx_until_s: float = -math.inf  # while sending: its radio sends until then
    radio: str = "idle"

    def send_s(self, slot_s: float) -> float:
        """When it sends if nothing it senses starts before."""
        return self.resume_s + self.count * slot_s

    def sense(self, t: float, end_s: float, slot_s: float, difs_s: float) -> bool:
        """The medium is busy for it from ``t`` to ``end_s``; True if its send moves later
        (False: it is sending, or its count reaches 0 at ``t`` and it sends too)."""
        self.busy_until_s = max(self.busy_until_s, end_s)
        if self.sending:
            return False
        if t >= self.resume_s:
            counted = math.floor((t - self.resume_s) / slot_s + GRID_EPS)
            if counted >= self.count:
                return False
            self.count -= counted
        self.resume_s = self.busy_until_s + difs_s
        return True

    def exchange_ends(self, intact: bool, retry_limit: int | None) -> str | None:
        """Its exchange ends: ``done`` (its last MPDU acknowledged), ``dropped`` (the
        retry limit reached), or None (it backs off for its next MPDU or its retry)."""
        self.sending = False
        if intact:
            self.left, self.retries = self.left - 1, 0
            return "done" if self.left == 0 else None
        self.retries += 1
        return "dropped" if retry_limit is not None and self.retries >= retry_limit else None

    def radio_state(self, t: float) -> str:
        """``tx`` while its frames go out, ``rx`` for the rest of its exchange and while
        it senses the medium busy, else ``idle``."""
        if self.sending:
            return "tx" if t < self.tx_until_s else "rx"
        return "rx" if t < self.busy_until_s else "idle"


@dataclass
class Frame:
    """A station's frame exchange on the air: its first part (DATA, or RTS) arrives at the
    access point at ``end_s``, intact unless ``lost``."""

    station: int
    join: int
    start_s: float
    end_s: float
    bits: int
    lost: bool
