"""Client positions on the plane, drawn once per run (``population.placement``).

Each kind turns the configuration and the client count into two arrays (x_m, y_m) of
length ``n_clients``, from the stream ``placement``: ``disc`` is uniform in area over an
annulus, ``ppp`` keeps ``n_clients`` points of a Poisson point process (refused when the
draw holds fewer), ``grid`` fills a square grid row by row, and ``file`` reads a CSV
``client,x_m,y_m`` with the trace readers' safeguards (regular files only, byte and line
caps, UTF-8), every client exactly once and every coordinate a decimal number of at
most :data:`~simfl.core.config.placement.MAX_EXTENT_M` in absolute value; an error names
the line and column, never the file's text.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from simfl.core.config.placement import (MAX_EXTENT_M, DiscPlacement, FilePlacement,
                                         GridPlacement, HexagonalPlacement, Placement,
                                         PppPlacement)
from simfl.core.config.cells import Cells
from simfl.core.errors import ConfigError
from simfl.core.registry import implementation_of, implements
from simfl.sim.traces.data import FIELD as TRACE_FIELD
from simfl.sim.traces.data import bad_line, client_id, column_of, count_column
from simfl.sim.traces.data import number as number_of
from simfl.sim.traces.files import numbered_lines

FIELD = "population.placement.path"
HEADER = ["client", "x_m", "y_m"]
#: largest position file read (bytes) and longest line (characters)
MAX_PLACEMENT_BYTES, MAX_LINE_CHARS = 1 << 30, 1 << 12

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
    mean = cfg.density_per_m2 * cfg.side_m ** 2  # at most MAX_PPP_POINTS (validate)
    count = int(rng.poisson(mean))
    if count < n_clients:
        raise ConfigError("population.placement.density_per_m2", cfg.density_per_m2,
                          f"a density whose draw holds task.n_clients = {n_clients} points "
                          f"(this seed drew {count} of {mean:g} on average)")
    # the first n_clients points of the draw: the generator fills the (count, 2) array
    # row by row, so drawing only those rows gives the same points
    xy = (rng.random((n_clients, 2)) - 0.5) * cfg.side_m
    return xy[:, 0].copy(), xy[:, 1].copy()


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
    """The positions in the CSV file at ``path`` (module docstring), one line on error.

    An error says where in the file the problem is (line and column), never what the
    file holds."""
    x_m, y_m = np.full(n_clients, np.nan), np.full(n_clients, np.nan)
    seen = np.zeros(n_clients, dtype=bool)
    allowed = (f"a row client,x_m,y_m: a client id in [0, {n_clients}) and finite decimal "
               f"coordinates in metres, each at most {MAX_EXTENT_M:g} in absolute value")
    header_seen = False
    try:
        with numbered_lines(path, MAX_PLACEMENT_BYTES, MAX_LINE_CHARS) as lines:
            for number, line in lines:
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                fields = [f.strip() for f in line.split(",")]
                if not header_seen:
                    if fields != HEADER:
                        raise bad_line(str(path), number, line, "the header line "
                                       "client,x_m,y_m", field=FIELD)
                    header_seen = True
                    continue
                if len(fields) != 3:
                    raise bad_line(str(path), number, line, allowed, count_column(line, 3),
                                   field=FIELD)
                values: list[float] = []
                for index, text in enumerate(fields):
                    try:
                        value = float(client_id(text)) if index == 0 else number_of(text)
                    except ValueError:
                        value = math.nan
                    if not (abs(value) <= MAX_EXTENT_M if index else value < n_clients):
                        raise bad_line(str(path), number, line, allowed,
                                       column_of(line, index), field=FIELD)
                    values.append(value)
                client, x, y = int(values[0]), values[1], values[2]
                if seen[client]:
                    raise bad_line(str(path), number, line, f"each client once (client "
                                   f"{client} is listed twice)", column_of(line, 0), field=FIELD)
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
