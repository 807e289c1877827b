"""Device energy: the power drawn in each activity and the battery that supplies it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from simfl.core.config.checks import power_w
from simfl.core.config.node import (Node, at_most, non_negative, positive, probability,
                                    require)

#: the most energy a radio may spend per bit (joules); real radios spend nano- to
#: microjoules
MAX_J_PER_BIT = 1.0


@dataclass(frozen=True)
class Amplifier(Node):
    """A transmitter whose power draw follows its radiated power.

    While it transmits, a device draws ``circuit_w + P_tx / efficiency``: the circuits of
    the transmit chain (mixer, filters, synthesiser, converters) plus the power amplifier,
    which turns ``efficiency`` of what it draws into the radiated P_tx. P_tx is the
    client's transmit power on the shared radio after power control
    (``network.radio.tx_power_dbm``, ``network.radio.power_control``), so power control,
    distance and the band change the energy of an upload. Defaults: a drain efficiency of
    0.35 (a class-B amplifier) and about 0.1 W of transmit circuits (98 mW in the same
    source), from Cui, Goldsmith and Bahai, Energy-constrained modulation optimization,
    IEEE Trans. Wireless Commun. 4(5), 2005. Not modelled: efficiency that varies with
    the output power, peak-to-average back-off.
    """

    paper: ClassVar[str] = ("Cui, Goldsmith, Bahai, Energy-constrained modulation "
                            "optimization, IEEE Trans. Wireless Commun. 4(5), 2005 (PA "
                            "efficiency and transmit-circuit power)")
    circuit_w: float = 0.1
    efficiency: float = 0.35

    def validate(self) -> None:
        non_negative(self, "circuit_w")
        power_w(self, "circuit_w")
        require(math.isfinite(self.efficiency) and 0.0 < self.efficiency <= 1.0, "efficiency",
                self.efficiency, "a power-amplifier efficiency in (0, 1]")

    def draw_w(self, radiated_w: float) -> float:
        """The power drawn while radiating ``radiated_w`` watts."""
        return self.circuit_w + radiated_w / self.efficiency


@dataclass(frozen=True)
class Energy(Node):
    """Power drawn by a device in each state; piecewise constant between state changes.

    States: ``idle`` (between and after its round work), ``compute`` (local training),
    ``tx`` (each uplink attempt) and ``rx`` (each downlink attempt). A transfer costs
    its airtime times ``tx_w``/``rx_w``, or its bits times ``tx_j_per_bit``/
    ``rx_j_per_bit`` (set one of each pair); every attempt is charged, retries
    included. An energy per bit is that of a bit sent at the link's full rate: the
    radio draws J/bit x that rate whenever it is on, as it would draw ``tx_w``. Time an
    attempt spends waiting for its medium (TDMA slots of other clients, a busy ALOHA
    data channel) is charged at ``idle_w``; a contention slot in which the device
    transmits is charged at the transmit power instead of ``idle_w``. Defaults are
    board-level figures of a Raspberry Pi training a small
    model (about 5 W computing, 4 W transmitting; docs/network-models.md section 3.2, from
    ns3-fl's fitted models) and no idle drain. A round's ``energy_j`` (rounds.csv) is
    what its work used (download, compute, waiting for medium access, upload), from the
    battery or, when plugged in, from the charger. Not modelled: radio tail energy after
    a transfer, rate-dependent radio power. DVFS (computing power kappa f^3 from the
    CPU clock f) is set in ``population.compute.cpu_hz`` and replaces ``compute_w``.
    ``amplifier`` (with ``network.radio``) replaces ``tx_w``: the transmit power then
    follows each client's radiated power (:class:`Amplifier`).
    Bounds: each power at most 10 kW, each per-bit energy at most 1 J/bit.
    """

    exclusive = (("tx_w", "tx_j_per_bit", "amplifier"), ("rx_w", "rx_j_per_bit"))
    idle_w: float = 0.0
    compute_w: float = 5.0
    tx_w: float | None = None
    tx_j_per_bit: float | None = None
    rx_w: float | None = None
    rx_j_per_bit: float | None = None
    amplifier: Amplifier | None = None

    def validate(self) -> None:
        power_w(self, "idle_w", "compute_w", "tx_w", "rx_w")
        non_negative(self, "tx_j_per_bit", "rx_j_per_bit")
        at_most(self, MAX_J_PER_BIT, "tx_j_per_bit", "rx_j_per_bit",
                why="joules per bit; radios spend nano- to microjoules")
        if self.amplifier is not None:  # the transmit power comes from the amplifier
            for name in ("tx_w", "tx_j_per_bit"):
                require(getattr(self, name) is None, name, getattr(self, name),
                        "null when amplifier is set (set only one of them)")
        for watts, per_bit, default_w in (("tx_w", "tx_j_per_bit", 4.0),
                                          ("rx_w", "rx_j_per_bit", 1.0)):
            if watts == "tx_w" and self.amplifier is not None:
                continue
            require(getattr(self, watts) is None or getattr(self, per_bit) is None, per_bit,
                    getattr(self, per_bit), f"null when {watts} is set (set only one of them)")
            if getattr(self, watts) is None and getattr(self, per_bit) is None:
                self._set_default(watts, default_w)


#: shortest charging day, window or gap between windows (hours): one second
MIN_SPAN_H = 1.0 / 3600.0
#: longest charging day (hours), about 114 years
MAX_PERIOD_H = 1e6


@dataclass(frozen=True)
class Charging(Node):
    """A daily plug-in window during which the battery charges.

    The window runs from ``start_hour`` to ``end_hour`` of every ``period_h``-hour day
    (it wraps past midnight when start > end; simulated time 0 is hour 0). While
    plugged in, the device runs from the charger (its load does not drain the battery)
    and the battery charges at ``power_w`` up to full. With ``cv_soc`` set, the
    charge follows a CC-CV curve instead: constant power up to that state of charge,
    then an exponential approach to full, SoC(t) = 1 - (1 - cv_soc) exp(-t / tau),
    with ``cv_tau_s`` = tau (default: the value that keeps the charging power
    continuous at the switch, (1 - cv_soc) * capacity / power_w). Not modelled:
    charger efficiency, temperature, battery ageing, per-client plug-in times.
    """

    power_w: float = 10.0
    start_hour: float = 22.0
    end_hour: float = 6.0
    period_h: float = 24.0
    cv_soc: float | None = None
    cv_tau_s: float | None = None

    def validate(self) -> None:
        positive(self, "power_w", "period_h", "cv_tau_s")
        power_w(self, "power_w")
        require(MIN_SPAN_H <= self.period_h <= MAX_PERIOD_H, "period_h", self.period_h,
                f"a day length in [{MIN_SPAN_H:.6g}, {MAX_PERIOD_H:g}] hours (one second to "
                "about a century)")
        for name in ("start_hour", "end_hour"):
            value = getattr(self, name)
            require(0.0 <= value < self.period_h, name, value,
                    f"an hour in [0, period_h = {self.period_h:g})")
        require(self.start_hour != self.end_hour, "end_hour", self.end_hour,
                "an hour different from start_hour")
        plugged_h = (self.end_hour - self.start_hour) % self.period_h
        require(min(plugged_h, self.period_h - plugged_h) >= MIN_SPAN_H, "end_hour", self.end_hour,
                f"an hour that leaves the window and the time between windows at least one "
                f"second long ({MIN_SPAN_H:.6g} h)")
        require(self.cv_tau_s is None or math.isfinite(self.cv_tau_s), "cv_tau_s",
                self.cv_tau_s, "a finite number of seconds")
        probability(self, "cv_soc")
        require(self.cv_soc is None or self.cv_soc < 1.0, "cv_soc", self.cv_soc,
                "a state of charge in [0, 1) or null")


@dataclass(frozen=True)
class Battery(Node):
    """A finite battery per device, emptied by its activity and refilled by charging.

    Stored energy starts at ``initial_soc * capacity_j`` (or, with ``initial_soc_min``
    set, at a state of charge drawn per client from U(initial_soc_min, initial_soc)).
    It falls at the power of the device's current state; when it reaches zero the
    device dies: work in flight (compute or a transfer) is lost with reason
    ``battery`` and the device is unavailable until charging brings it back above
    ``restart_soc`` (hysteresis). A dead device draws nothing. Default capacity: a
    4000 mAh, 3.85 V phone cell (55.44 kJ). Not modelled: voltage sag, the
    rate-capacity effect, self-discharge, ageing.
    """

    capacity_j: float = 55_440.0
    initial_soc: float = 1.0
    initial_soc_min: float | None = None
    restart_soc: float = 0.05
    charging: Charging | None = None

    def validate(self) -> None:
        positive(self, "capacity_j", "restart_soc")
        require(math.isfinite(self.capacity_j), "capacity_j", self.capacity_j, "a finite number")
        probability(self, "initial_soc", "initial_soc_min", "restart_soc")
        require(self.initial_soc_min is None or self.initial_soc_min <= self.initial_soc,
                "initial_soc_min", self.initial_soc_min,
                f"a state of charge <= initial_soc = {self.initial_soc}")
