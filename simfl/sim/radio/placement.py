"""Client positions on the plane, drawn once per run (``population.placement``).

Each kind turns the configuration and the client count into two arrays (x_m, y_m) of
length ``n_clients``, from the stream ``placement``: ``disc`` is uniform in area over an
annulus, ``ppp`` keeps ``n_clients`` points of a Poisson point process (refused when the
draw holds fewer), ``grid`` fills a square grid row by row, and ``file`` reads a CSV
``client,x_m,y_m`` with the trace readers' safeguards (regular files only, byte and line
caps, UTF-8), every client exactly once and every coordinate finite.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from simfl.core.config.placement import (DiscPlacement, FilePlacement, GridPlacement,
                                         HexagonalPlacement, Placement, PppPlacement)
from simfl.core.config.radio import Cells
from simfl.core.errors import ConfigError
from simfl.core.registry import implementation_of, implements
from simfl.sim.traces.data import FIELD as TRACE_FIELD
from simfl.sim.traces.files import numbered_lines

FIELD = "population.placement.path"
HEADER = ["client", "x_m", "y_m"]
#: largest position file read (bytes) and longest line (characters)
MAX_PLACEMENT_BYTES, MAX_LINE_CHARS = 1 << 30, 1 << 12
#: most points a Poisson point process may draw (memory: two float64 arrays)
MAX_PPP_POINTS = 10**8

Positions = tuple[np.ndarray, np.ndarray]


def place(cfg: Placement, n_clients: int, rng: np.random.Generator,
          cells: Cells | None = None) -> Positions:
    """(x_m, y_m) of ``n_clients`` clients placed by ``cfg`` (its implementation, called
    ``impl(cfg, n_clients, rng)``, or ``impl(cfg, n_clients, rng, cells)`` for one that
    places clients by cell and says so with ``by_cell = True``)."""
    impl = implementation_of(cfg, "population.placement.kind")
    by_cell = getattr(impl, "by_cell", False)
    positions: Positions = (impl(cfg, n_clients, rng, cells) if by_cell
                            else impl(cfg, n_clients, rng))
    return positions


def place_in_disc(cfg: DiscPlacement, n_clients: int, rng: np.random.Generator) -> Positions:
    r2 = cfg.min_m ** 2 + rng.random(n_clients) * (cfg.radius_m ** 2 - cfg.min_m ** 2)
    angle = rng.random(n_clients) * 2.0 * math.pi
    r = np.sqrt(r2)
    return r * np.cos(angle), r * np.sin(angle)


def place_by_ppp(cfg: PppPlacement, n_clients: int, rng: np.random.Generator) -> Positions:
    mean = cfg.density_per_m2 * cfg.side_m ** 2
    if mean > MAX_PPP_POINTS:
        raise ConfigError("population.placement.density_per_m2", cfg.density_per_m2,
                          f"at most {MAX_PPP_POINTS:g} points on average over the square "
                          f"(density x side_m^2; here {mean:g})")
    count = int(rng.poisson(mean))
    if count < n_clients:
        raise ConfigError("population.placement.density_per_m2", cfg.density_per_m2,
                          f"a density whose draw holds task.n_clients = {n_clients} points "
                          f"(this seed drew {count} of {mean:g} on average)")
    xy = (rng.random((count, 2)) - 0.5) * cfg.side_m
    return xy[:n_clients, 0].copy(), xy[:n_clients, 1].copy()


def place_on_grid(cfg: GridPlacement, n_clients: int, rng: np.random.Generator) -> Positions:
    side = math.ceil(math.sqrt(n_clients))
    index = np.arange(n_clients)
    offset = (side - 1) / 2.0
    return ((index % side - offset) * cfg.spacing_m, (index // side - offset) * cfg.spacing_m)


def place_in_hexagons(cfg: HexagonalPlacement, n_clients: int, rng: np.random.Generator,
                      cells: Cells | None) -> Positions:
    """Uniform in area in the hexagon of a uniformly drawn site, by rejection from the
    hexagon's bounding box (the hexagon fills 3/4 of it, the keep-out disc little more)."""
    layout = None if cells is None else cells.hexagonal
    if layout is None:
        raise ConfigError("population.placement.kind", cfg.kind,
                          "a placement other than hexagonal without a network.cells.hexagonal "
                          "layout to drop the clients in")
    apothem = layout.isd_m / 2.0
    if cfg.min_m >= apothem:
        raise ConfigError("population.placement.min_m", cfg.min_m,
                          f"a distance below half the inter-site distance ({apothem:g} m)")
    sites = np.asarray(layout.sites_m())
    site = rng.integers(0, len(sites), n_clients)
    half_w, half_h = apothem, apothem * 2.0 / math.sqrt(3.0)
    x, y = np.empty(n_clients), np.empty(n_clients)
    todo = np.arange(n_clients)
    while len(todo):
        cx = (rng.random(len(todo)) * 2.0 - 1.0) * half_w
        cy = (rng.random(len(todo)) * 2.0 - 1.0) * half_h
        u, v = 0.5 * cx + (math.sqrt(3.0) / 2.0) * cy, 0.5 * cx - (math.sqrt(3.0) / 2.0) * cy
        ok = ((np.abs(cx) <= apothem) & (np.abs(u) <= apothem) & (np.abs(v) <= apothem)
              & (cx * cx + cy * cy >= cfg.min_m ** 2))
        x[todo[ok]], y[todo[ok]] = cx[ok], cy[ok]
        todo = todo[~ok]
    return x + sites[site, 0], y + sites[site, 1]


place_in_hexagons.by_cell = True  # type: ignore[attr-defined]


implements(HexagonalPlacement, place_in_hexagons)
implements(DiscPlacement, place_in_disc)
implements(PppPlacement, place_by_ppp)
implements(GridPlacement, place_on_grid)
implements(FilePlacement, lambda cfg, n_clients, rng: read_positions(cfg.path, n_clients))


def read_positions(path: str | Path, n_clients: int) -> Positions:
    """The positions in the CSV file at ``path`` (module docstring), one line on error."""
    x_m, y_m = np.full(n_clients, np.nan), np.full(n_clients, np.nan)
    seen = np.zeros(n_clients, dtype=bool)
    allowed = (f"a row client,x_m,y_m: a client id in [0, {n_clients}) and finite "
               "coordinates in metres")
    header_seen = False
    try:
        with numbered_lines(path, MAX_PLACEMENT_BYTES, MAX_LINE_CHARS) as lines:
            for number, line in lines:
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                fields = [f.strip() for f in line.split(",")]
                where = f"{path} line {number}: {line[:100]!r}"
                if not header_seen:
                    if fields != HEADER:
                        raise ConfigError(FIELD, where, "the header line client,x_m,y_m")
                    header_seen = True
                    continue
                try:
                    client, x, y = int(fields[0]), float(fields[1]), float(fields[2])
                except (ValueError, IndexError):
                    raise ConfigError(FIELD, where, allowed) from None
                if len(fields) != 3 or not (0 <= client < n_clients) or not (
                        math.isfinite(x) and math.isfinite(y)):
                    raise ConfigError(FIELD, where, allowed)
                if seen[client]:
                    raise ConfigError(FIELD, where, f"each client once (client {client} "
                                      "is listed twice)")
                seen[client], x_m[client], y_m[client] = True, x, y
    except ConfigError as err:
        if err.field != TRACE_FIELD:
            raise
        raise ConfigError(FIELD, err.value, err.allowed.replace("trace file", "position file")
                          ) from None
    if not seen.all():
        missing = np.flatnonzero(~seen)
        raise ConfigError(FIELD, str(path), f"a row for every client 0..{n_clients - 1} "
                          f"({missing.size} missing, the first {int(missing[0])})")
    return x_m, y_m
