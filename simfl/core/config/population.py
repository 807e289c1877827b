"""The client population: device speed and availability."""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.availability import Always, Availability
from simfl.core.config.energy import Battery, Energy
from simfl.core.config.node import Node, at_most, non_negative, require
from simfl.core.config.placement import Mobility, Placement, Static
from simfl.core.config.sessions import Sessions


#: the widest lognormal spread of training speeds: exp(10 z) already spans 1e-26 to
#: 1e26 across a large population
MAX_SIGMA = 10.0
#: the range of median training speeds (samples per second) whose every client's speed
#: stays a positive, finite number at any ``sigma`` up to MAX_SIGMA
MEDIAN_SPEED_RANGE = (1e-6, 1e12)


#: effective training speeds (FLOP/s) of the named device classes: the device's fp32
#: peak from its vendor's figures (cores x clock x FLOP per cycle) times about 10 %, the
#: share that small-batch training reaches (docs/local-training.md derives each one)
DEVICE_FLOPS_PER_S = {
    "raspberry_pi": 5e9,   # Pi 4: 4 Cortex-A72 at 1.5 GHz, 8 FLOP/cycle: 48 GFLOP/s peak
    "phone": 1e10,         # 2020 flagship: 4 big cores at 2.8 GHz, 8 FLOP/cycle: 90 GFLOP/s
    "laptop_cpu": 5e10,    # 4 cores at 3.5 GHz, AVX2 2 x FMA (32 FLOP/cycle): 450 GFLOP/s
    "laptop_gpu": 1e12,    # an RTX 3060 Laptop class GPU: about 10 TFLOP/s fp32 peak
}
#: the range of median speeds in FLOP/s and of median clock rates (Hz)
MEDIAN_FLOPS_RANGE = (1e3, 1e18)
CPU_HZ_RANGE = (1e3, 1e12)


@dataclass(frozen=True)
class Compute(Node):
    """Training speed, lognormal across clients: in samples per second (the default), in
    FLOP/s, as a named device class, or from a CPU clock with DVFS energy.

    Client i's speed is the median times ``exp(sigma * z_i)``, z_i ~ N(0, 1) drawn once;
    its compute time for a round is its local work over its speed. Set one of:

    * ``median_samples_per_s`` (200 when none is set): samples per second, whatever the
      model;
    * ``flops_per_s``: effective FLOP/s; a job then takes the model's training FLOPs for
      its samples (:mod:`simfl.train.flops`) over the client's speed;
    * ``device``: ``flops_per_s`` of a named class (:data:`DEVICE_FLOPS_PER_S`);
    * ``cpu_hz``: the clock f, with ``cycles_per_sample`` c: a job of D samples takes
      c D / f and its computation energy is kappa c D f^2 (the client draws kappa f^3
      watts instead of ``population.energy.compute_w``; Mao et al., A Survey on Mobile
      Edge Computing, IEEE COMST 2017, eq. 6).

    Bounds: ``sigma`` <= 10 and the median in [1e-6, 1e12] samples/s, [1e3, 1e18] FLOP/s
    or [1e3, 1e12] Hz, so that every speed is positive and finite.
    """

    exclusive = (("median_samples_per_s", "flops_per_s", "device", "cpu_hz"),)
    median_samples_per_s: float | None = None
    flops_per_s: float | None = None
    device: str | None = None
    cpu_hz: float | None = None
    cycles_per_sample: float = 1e4
    kappa: float = 1e-28
    sigma: float = 0.5

    def validate(self) -> None:
        chosen = [name for name in self.exclusive[0] if getattr(self, name) is not None]
        if len(chosen) > 1:
            require(False, chosen[1], getattr(self, chosen[1]), f"null when {chosen[0]} is "
                    "set (set only one of median_samples_per_s, flops_per_s, device, cpu_hz)")
        if not chosen:
            self._set_default("median_samples_per_s", 200.0)
        for name, (low, high), unit in (("median_samples_per_s", MEDIAN_SPEED_RANGE, "samples/s"),
                                        ("flops_per_s", MEDIAN_FLOPS_RANGE, "FLOP/s"),
                                        ("cpu_hz", CPU_HZ_RANGE, "Hz")):
            value = getattr(self, name)
            require(value is None or low <= value <= high, name, value,
                    f"a speed in [{low:g}, {high:g}] {unit}")
        require(self.device is None or self.device in DEVICE_FLOPS_PER_S, "device", self.device,
                " or ".join(DEVICE_FLOPS_PER_S))
        require(1.0 <= self.cycles_per_sample <= 1e15, "cycles_per_sample",
                self.cycles_per_sample, "a number of cycles in [1, 1e15]")
        require(0.0 < self.kappa <= 1e-15, "kappa", self.kappa,
                "an effective capacitance in (0, 1e-15]")
        non_negative(self, "sigma")
        at_most(self, MAX_SIGMA, "sigma", why="a wider spread gives speeds of zero or infinity")

    @property
    def median_flops_per_s(self) -> float | None:
        """The median speed in FLOP/s (``flops_per_s`` or the device class's), or None
        when the speed is not stated in FLOP/s."""
        if self.device is not None:
            return DEVICE_FLOPS_PER_S[self.device]
        return self.flops_per_s


@dataclass(frozen=True)
class Population(Node):
    """Who the clients are, how fast they compute, when they are online, their energy,
    and (for the shared radio) where they are and how they move."""

    compute: Compute = Compute()
    availability: Availability = Always()
    sessions: Sessions | None = None
    battery: Battery | None = None
    energy: Energy = Energy()
    placement: Placement | None = None
    mobility: Mobility = Static()
