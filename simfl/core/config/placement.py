"""Where the clients are (``population.placement``) and how they move (``population.mobility``).

Positions are in metres on a plane, drawn once per run from the stream ``placement``
(client i's position does not depend on the number of clients for ``disc``; ``ppp``
draws its count first). Access points are in ``network.cells``.
"""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.checks import at_most, finite, non_negative, positive, require
from simfl.core.config.node import Choice

#: largest region or radius accepted (m): 1,000 km
MAX_EXTENT_M = 1e6
#: most points a Poisson point process may hold on average (density x area)
MAX_PPP_POINTS = 10**8
#: fastest client (m/s): about three times the speed of sound, faster than any airliner
MAX_SPEED_MPS = 1e3
#: shortest random-waypoint leg allowed on average (seconds): pause_s + radius_m /
#: max_speed_mps must reach it, so that a simulated second holds at most about a
#: hundred legs per client (each leg is drawn and walked)
MIN_LEG_S = 0.01


@dataclass(frozen=True)
class Placement(Choice, point="placements"):
    """How the clients are placed on the plane."""


@dataclass(frozen=True)
class DiscPlacement(Placement):
    """Uniform in area over an annulus around the origin.

    ``min_m <= r <= radius_m``: r = sqrt(min^2 + U (radius^2 - min^2)), angle uniform."""

    kind = "disc"
    radius_m: float = 100.0
    min_m: float = 1.0

    def validate(self) -> None:
        positive(self, "radius_m")
        non_negative(self, "min_m")
        require(self.radius_m <= MAX_EXTENT_M, "radius_m", self.radius_m,
                f"a radius in (0, {MAX_EXTENT_M:g}] m")
        require(self.min_m < self.radius_m, "min_m", self.min_m,
                f"a distance below radius_m = {self.radius_m:g}")


@dataclass(frozen=True)
class PppPlacement(Placement):
    """A Poisson point process on a square centred on the origin.

    ``density_per_m2`` points per square metre on the square of side ``side_m``: the
    number of points is Poisson(density x area), and they are uniform in the square. The
    population's ``n_clients`` of them become clients (the run is refused if the draw
    holds fewer); only those are drawn. The mean count, density x side_m^2, is at most
    10^8 (:data:`MAX_PPP_POINTS`)."""

    kind = "ppp"
    paper = "Haenggi, Stochastic Geometry for Wireless Networks, Cambridge 2012, ch. 2"
    density_per_m2: float = 1e-3
    side_m: float = 1000.0

    def validate(self) -> None:
        positive(self, "density_per_m2", "side_m")
        require(self.side_m <= MAX_EXTENT_M, "side_m", self.side_m,
                f"a side in (0, {MAX_EXTENT_M:g}] m")
        finite(self, "density_per_m2")
        mean = self.density_per_m2 * self.side_m ** 2
        require(mean <= MAX_PPP_POINTS, "density_per_m2", self.density_per_m2,
                f"at most {MAX_PPP_POINTS:g} points on average over the square "
                "(density_per_m2 x side_m^2)")


@dataclass(frozen=True)
class GridPlacement(Placement):
    """A square grid of spacing ``spacing_m`` centred on the origin, filled row by row."""

    kind = "grid"
    spacing_m: float = 10.0

    def validate(self) -> None:
        positive(self, "spacing_m")
        require(self.spacing_m <= MAX_EXTENT_M, "spacing_m", self.spacing_m,
                f"a spacing in (0, {MAX_EXTENT_M:g}] m")


@dataclass(frozen=True)
class HexagonalPlacement(Placement):
    """Clients dropped in the cells of ``network.cells.hexagonal``: each client picks a site
    uniformly, then a point uniform in area in that site's hexagon (the points nearer to
    it than to any other site), at least ``min_m`` from the site (3GPP TR 38.901 drops
    outdoor clients at least 10 m away, 35 m for UMa)."""

    kind = "hexagonal"
    paper = ("3GPP TR 38.901 V17.0.0 (2022-03), sec. 7.8.1, Table 7.8-1 (clients dropped "
             "uniformly, 35 m minimum 2-D distance for UMa, 10 m for UMi)")
    min_m: float = 10.0

    def validate(self) -> None:
        non_negative(self, "min_m")
        require(self.min_m <= MAX_EXTENT_M, "min_m", self.min_m,
                f"a distance in [0, {MAX_EXTENT_M:g}] m")


@dataclass(frozen=True)
class FilePlacement(Placement):
    """Positions read from a CSV file ``client,x_m,y_m``.

    One row per client, every client exactly once, finite coordinates (metres)."""

    kind = "file"
    path: str = ""

    def validate(self) -> None:
        require(self.path != "", "path", self.path, "the path of a CSV file client,x_m,y_m")


@dataclass(frozen=True)
class Mobility(Choice, point="mobility"):
    """How the clients move; positions advance on the simulated clock at events."""


@dataclass(frozen=True)
class Static(Mobility):
    """Clients stay where they were placed."""

    kind = "static"


@dataclass(frozen=True)
class ConstantVelocity(Mobility):
    """Each client moves in a straight line at a constant speed.

    ``speed_mps`` (at most 1000 m/s, :data:`MAX_SPEED_MPS`) in a direction drawn once,
    reflected at the edge of the disc of ``radius_m`` around the origin."""

    kind = "constant_velocity"
    speed_mps: float = 1.0
    radius_m: float = 100.0

    def validate(self) -> None:
        non_negative(self, "speed_mps")
        positive(self, "radius_m")
        finite(self, "speed_mps", "radius_m")
        at_most(self, MAX_SPEED_MPS, "speed_mps", why="m/s: faster than any airliner")


@dataclass(frozen=True)
class RandomWaypoint(Mobility):
    """Each client walks from waypoint to waypoint.

    The next waypoint is uniform in the disc of ``radius_m``, the speed uniform in
    [min_speed_mps, max_speed_mps]; at each waypoint it pauses ``pause_s``. Speeds are
    at most 1000 m/s (:data:`MAX_SPEED_MPS`), and ``pause_s + radius_m / max_speed_mps``
    is at least 0.01 s (:data:`MIN_LEG_S`): every leg is drawn and walked, so a
    simulated second holds at most about a hundred legs per client."""

    kind = "random_waypoint"
    paper = ("Johnson and Maltz, Dynamic Source Routing in Ad Hoc Wireless Networks, "
             "Mobile Computing 1996; Bettstetter et al., IEEE TMC 2(3), 2003")
    min_speed_mps: float = 0.5
    max_speed_mps: float = 1.5
    pause_s: float = 0.0
    radius_m: float = 100.0

    def validate(self) -> None:
        positive(self, "min_speed_mps", "radius_m")
        non_negative(self, "pause_s")
        finite(self, "max_speed_mps", "pause_s", "radius_m")
        require(self.max_speed_mps >= self.min_speed_mps, "max_speed_mps",
                self.max_speed_mps, f"a speed >= min_speed_mps = {self.min_speed_mps:g}")
        at_most(self, MAX_SPEED_MPS, "max_speed_mps", why="m/s: faster than any airliner")
        leg_s = self.pause_s + self.radius_m / self.max_speed_mps
        require(leg_s >= MIN_LEG_S, "max_speed_mps", self.max_speed_mps,
                f"a speed at which pause_s + radius_m / max_speed_mps is at least "
                f"{MIN_LEG_S:g} s (here {leg_s:.3g} s: too many legs per simulated second)")
