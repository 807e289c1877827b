"""Access points: where they are (a list, or a hexagonal layout of sites with sectors),
and how a client picks the one that serves it (``network.cells``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from simfl.core.config.checks import finite, require
from simfl.core.config.node import Node

#: the most access points a scenario may list
MAX_ACCESS_POINTS = 10_000
#: a sector antenna's horizontal half-power beamwidth (degrees), its front-to-back limit
#: and its boresight gain (dB, dBi): the element of 3GPP TR 38.901 Table 7.3-1
SECTOR_BEAMWIDTH_DEG, SECTOR_MAX_ATTENUATION_DB, SECTOR_GAIN_DBI = 65.0, 30.0, 8.0
#: where the layout, its antenna element and its client drop come from (``simfl list``)
LAYOUT_SOURCE = ("3GPP TR 38.901 V17.0.0 (2022-03), sec. 7.3 (Table 7.3-1, the antenna "
                 "element) and sec. 7.8.1 (Table 7.8-1: a hexagonal grid of 19 sites with 3 "
                 "sectors each, 500 m apart for UMa and 200 m for UMi)")


@dataclass(frozen=True)
class Hexagonal(Node):
    """A hexagonal grid of sites with one antenna or three sectors each.

    One site at the origin and ``rings`` rings around it (1, 7, 19, 37 or 61 sites),
    ``isd_m`` apart, each with 1 site antenna or 3 sectors (boresights 30, 150 and 270
    degrees from the x axis, the 3GPP TR 38.901 element pattern's horizontal cut: 8 dBi
    at boresight, -12 (phi / 65 deg)^2 dB off it, at most 30 dB below). With ``wraparound`` (and at least one ring), a client reaches each site
    through the nearest of its seven images (the layout repeated around itself), so the
    edge cells see the same surroundings as the centre."""

    paper: ClassVar[str] = LAYOUT_SOURCE
    rings: int = 1
    isd_m: float = 500.0
    sectors: int = 1
    wraparound: bool = True

    def validate(self) -> None:
        require(0 <= self.rings <= 4, "rings", self.rings, "0 to 4 rings (1 to 61 sites)")
        require(self.sectors in (1, 3), "sectors", self.sectors, "1 or 3 sectors per site")
        finite(self, "isd_m")
        require(20.0 <= self.isd_m <= 1e5, "isd_m", self.isd_m,
                "an inter-site distance of 20 m to 100 km (twice the 10 m minimum distance of "
                "the outdoor path-loss models and more)")

    def sites_m(self) -> list[tuple[float, float]]:
        """The sites' positions: the origin, then ring by ring."""
        a1, a2 = (self.isd_m, 0.0), (self.isd_m / 2, self.isd_m * math.sqrt(3) / 2)
        sites = []
        for i in range(-self.rings, self.rings + 1):
            for j in range(-self.rings, self.rings + 1):
                if max(abs(i), abs(j), abs(i + j)) <= self.rings:  # hexagonal distance
                    sites.append((max(abs(i), abs(j), abs(i + j)), i, j))
        return [(i * a1[0] + j * a2[0], i * a1[1] + j * a2[1]) for _, i, j in sorted(sites)]

    def boresights_deg(self) -> list[float | None]:
        """Each access point's boresight (None: a site antenna without a pattern)."""
        per_site = [30.0, 150.0, 270.0] if self.sectors == 3 else [None]
        return [b for _ in self.sites_m() for b in per_site]

    def images_m(self) -> list[tuple[float, float]]:
        """The offsets of the layout's copies around itself (the first is no offset): the
        cluster of N = i^2 + ij + j^2 sites repeats at i a1 + j a2 and its 60-degree turns."""
        if not self.wraparound or self.rings == 0:
            return [(0.0, 0.0)]
        i, j = self.rings + 1, self.rings
        x = self.isd_m * (i + j / 2)
        y = self.isd_m * j * math.sqrt(3) / 2
        turns = [(math.cos(k * math.pi / 3), math.sin(k * math.pi / 3)) for k in range(6)]
        return [(0.0, 0.0)] + [(c * x - s * y, s * x + c * y) for c, s in turns]


def sector_gain_db(angle_deg: np.ndarray) -> np.ndarray:
    """The sector antenna's gain (dBi) at ``angle_deg`` off its boresight."""
    off = (np.asarray(angle_deg) + 180.0) % 360.0 - 180.0
    return np.asarray(SECTOR_GAIN_DBI - np.minimum(12.0 * (off / SECTOR_BEAMWIDTH_DEG) ** 2,
                                                   SECTOR_MAX_ATTENUATION_DB))


@dataclass(frozen=True)
class Cells(Node):
    """Access points at ``[x_m, y_m]`` positions, and how a client picks the one that
    serves it: the ``nearest``, or the ``strongest`` (highest mean received power,
    shadowing included). ``hexagonal`` lays the access points out as a hexagonal grid of
    sites (the list is then derived from it); a sectored client picks, among the sectors
    of its nearest site, the one facing it."""

    access_points: tuple[tuple[float, ...], ...] = ((0.0, 0.0),)
    association: Literal["nearest", "strongest"] = "nearest"
    hexagonal: Hexagonal | None = None

    def __post_init__(self) -> None:
        # a layout's list is derived, and written back as null (``explicit_dict``): null
        # reads as the default, from which validate() derives the layout afresh
        if self.access_points is None and self.hexagonal is not None:
            object.__setattr__(self, "access_points", ((0.0, 0.0),))
        super().__post_init__()

    def validate(self) -> None:
        if self.hexagonal is not None:
            layout = [(x, y) for x, y in self.hexagonal.sites_m()
                      for _ in range(self.hexagonal.sectors)]
            given = [tuple(p) for p in self.access_points]
            require(given in ([(0.0, 0.0)], layout), "access_points", list(self.access_points),
                    "no list of its own with network.cells.hexagonal (the layout places them)")
            self._set_default("access_points", tuple(layout))
        points = self.access_points
        require(0 < len(points) <= MAX_ACCESS_POINTS, "access_points", list(points),
                f"a list of 1 to {MAX_ACCESS_POINTS} [x_m, y_m] positions")
        for i, point in enumerate(points):
            require(len(point) == 2 and all(math.isfinite(v) for v in point),
                    f"access_points[{i}]", list(point), "a position [x_m, y_m] of finite numbers")

    def boresights_deg(self) -> list[float | None]:
        """Each access point's boresight in degrees (None: no antenna pattern)."""
        if self.hexagonal is None:
            return [None] * len(self.access_points)
        return self.hexagonal.boresights_deg()

    def images_m(self) -> list[tuple[float, float]]:
        """The wraparound offsets of the layout (just no offset without one)."""
        return [(0.0, 0.0)] if self.hexagonal is None else self.hexagonal.images_m()
