"""Each contending station's seconds of sending and receiving, kept as sums, charged once.

With infinite energy a station's energy over its contention does not depend on when
its radio changed state, only on how long it spent in each state. So instead of
switching every contender's radio at every busy period, the MAC keeps:

- the sum of the busy periods' durations since the medium's first (``busy_s``) and
  their number;
- per station, that sum and number when it joined, and its own seconds of sending.

A station overhears every busy period that started after it joined, and in its own
busy periods it receives (CTS, ACK) whatever it does not send. Its receiving time is
therefore the busy time since it joined less its sending time; the rest of its
contention it is idle. The device's meter already draws ``idle_w`` over the whole
contention, so the station is charged once, when it leaves the DCF, the difference
``(tx_w - idle_w) * tx + (rx_w - idle_w) * rx``. A station leaving during a busy
period (the round closed) is charged only the part of it that has passed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class _Station:
    periods: int  # busy periods started before it joined
    busy_s: float  # the medium's busy seconds when it joined
    tx_s: float = 0.0  # its own seconds of sending


@dataclass
class Ongoing:
    """The busy period under way: its start on the clock, end, and transmitters' sending."""

    start_s: float
    end_s: float
    sent_s: dict[int, float]


class Airtime:
    """Sending and receiving seconds of the stations in the DCF, and the extra energy they
    cost over idle power (``tx_w``, ``rx_w`` and ``idle_w`` in watts)."""

    def __init__(self, tx_w: float, rx_w: float, idle_w: float) -> None:
        self.tx_extra_w, self.rx_extra_w = tx_w - idle_w, rx_w - idle_w
        self.busy_s = 0.0
        self.periods = 0
        self.stations: dict[int, _Station] = {}
        self.ongoing: Ongoing | None = None

    def join(self, station: int) -> None:
        """``station`` starts contending (a busy period under way is not its to overhear)."""
        self.stations[station] = _Station(self.periods, self.busy_s)

    def busy(self, stations: tuple[int, ...], sent_s: tuple[float, ...],
             busy_s: float) -> None:
        """A busy period of ``busy_s`` starts; ``stations`` send for ``sent_s`` each."""
        self.busy_s += busy_s
        self.periods += 1
        table = self.stations
        for station, seconds in zip(stations, sent_s):
            table[station].tx_s += seconds

    def extra_j(self, station: int, now_s: float) -> float:
        """Forget ``station`` (it leaves at ``now_s``): its energy above idle power."""
        s = self.stations.pop(station)
        tx_s, rx_s = s.tx_s, self.busy_s - s.busy_s - s.tx_s
        ongoing = self.ongoing
        if ongoing is not None and s.periods < self.periods and now_s < ongoing.end_s:
            # the busy period under way has not passed: take its rest back
            sent_s = ongoing.sent_s.get(station, 0.0)
            tx_left_s = max(0.0, ongoing.start_s + sent_s - now_s) if sent_s else 0.0
            tx_s -= tx_left_s
            rx_s -= ongoing.end_s - now_s - tx_left_s
        return self.tx_extra_w * tx_s + self.rx_extra_w * rx_s
