"""Slotted ALOHA's serialised data phase: granted uploads queue for ``channels`` data channels.

One upload attempt per channel at a time, in order of request: an attempt takes the
channel that is free first (ties: the lowest channel) and starts when it is free. A
device that leaves (or retries) takes its attempt off its channel; the attempts queued
behind it keep their start times, and the channel is then free after the attempts still
queued on it.
"""

from __future__ import annotations


class DataChannels:
    """When each data channel is next free, and the attempts queued on it."""

    def __init__(self, channels: int) -> None:
        self._free_s = [0.0] * channels
        self._held: list[dict[int, tuple[float, float]]] = [{} for _ in range(channels)]
        self._channel_of: dict[int, int] = {}  # client -> the channel its attempt is on

    def wall_time_s(self, client: int, t_s: float, airtime_s: float) -> float:
        """The wait for the channel that is free first plus ``airtime_s`` on it, for an
        attempt of ``client`` ready at ``t_s``."""
        self.release(client, t_s)  # a retry queues again
        free = self._free_s
        k = min(range(len(free)), key=lambda c: (free[c], c))
        start_s = max(t_s, free[k])
        end_s = start_s + airtime_s
        free[k] = end_s
        self._held[k][client] = (start_s, end_s)
        self._channel_of[client] = k
        return end_s - t_s

    def release(self, client: int, now_s: float) -> None:
        """Take ``client``'s queued or running attempt off its channel."""
        k = self._channel_of.pop(client, None)
        if k is None:
            return
        held = self._held[k]
        held.pop(client, None)
        for done in [c for c, (_, end_s) in held.items() if end_s <= now_s]:
            del held[done]
            self._channel_of.pop(done, None)
        self._free_s[k] = max([now_s] + [end_s for _, end_s in held.values()])
