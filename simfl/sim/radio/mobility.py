"""How the clients move (``population.mobility``), advanced lazily on the simulated clock.

Positions are refreshed when a round opens (and, with a continuous server, before each
server step): every mover is advanced to that time at once (vectorised), and the
:class:`~simfl.sim.radio.radio_map.RadioMap` is updated in place: positions, serving
access point, mean path gain and transmit power (power control follows the new gain).
Between two refreshes a client's association and mean SNR stay as they were; its
small-scale fading keeps evolving at every attempt (:mod:`simfl.sim.radio.fading`).

- ``static``: nobody moves.
- ``constant_velocity``: each client keeps its speed in a direction drawn once (stream
  ``mobility/direction``), reflected specularly at the edge of the disc of ``radius_m``
  around the origin (a client placed outside the disc walks in a straight line; it is
  reflected from the first refresh that finds it inside);
- ``random_waypoint``: each client walks in a straight line to a waypoint uniform in the
  disc of ``radius_m``, at a speed uniform in [min_speed_mps, max_speed_mps], pauses
  ``pause_s`` there, and starts the next leg; leg k of client i is drawn from
  ``mobility/waypoint`` addressed by (i, k) (:mod:`simfl.sim.radio.keyed`), so the legs
  of all clients that need one are drawn at once, whatever the refresh times.

Movers are deterministic functions of the seed and the times they are advanced to, so a
resumed run (which replays the clock from the start) rebuilds the same positions.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from simfl.core.config.placement import ConstantVelocity, Mobility, RandomWaypoint, Static
from simfl.core.registry import implementation_of, implements
from simfl.core.rng import RngTree
from simfl.sim.radio.keyed import KeyedUniforms
from simfl.sim.radio.propagation import Propagation
from simfl.sim.radio.radio_map import RadioMap

#: reflections followed one by one in an advance; a mover that bounces more often is
#: moved over its remaining whole chords at once (a chord's length, and the angle it
#: turns the mover around the centre, are the same for every chord of its path)
MAX_BOUNCES = 64
#: most random-waypoint legs drawn for a client in one pass of an advance (the batch
#: doubles from one while clients keep finishing their legs)
MAX_LEG_BATCH = 1024


class Mover(Protocol):
    """Moves the clients to time ``t_s`` (never backwards)."""

    def advance(self, t_s: float) -> None:
        """Advance every client to ``t_s``; refresh the radio map."""

    def table(self) -> dict[str, np.ndarray] | None:
        """mobility.csv's columns, or None when it was not asked for."""


class StaticMover:
    """Nobody moves."""

    def advance(self, t_s: float) -> None:
        return None

    def table(self) -> dict[str, np.ndarray] | None:
        return None


#: the mover of a run without mobility
STILL = StaticMover()


class _Mover:
    """What the movers share: the radio map they move, the clock, mobility.csv rows."""

    def __init__(self, radio_map: RadioMap, propagation: Propagation, record: bool) -> None:
        self.radio_map, self.propagation = radio_map, propagation
        self.t_s = 0.0
        self.rows: list[tuple[float, np.ndarray, np.ndarray, np.ndarray]] = []
        self.record = record
        if record:
            self._keep()

    def advance(self, t_s: float) -> None:
        if t_s <= self.t_s:
            return
        self._move(t_s)
        self.t_s = t_s
        radio_map, propagation = self.radio_map, self.propagation
        radio_map.ap, radio_map.gain_db = propagation.assign(radio_map.x_m, radio_map.y_m)
        radio_map.tx_power_dbm = propagation.tx_power_dbm(radio_map.gain_db)
        if self.record:
            self._keep()

    def _move(self, t_s: float) -> None:
        raise NotImplementedError

    def _keep(self) -> None:
        m = self.radio_map
        self.rows.append((self.t_s, m.x_m.copy(), m.y_m.copy(), m.ap.copy()))

    def table(self) -> dict[str, np.ndarray] | None:
        """mobility.csv: t_s, client, x_m, y_m, ap at the start and at every refresh
        (None unless it was asked for)."""
        if not self.record:
            return None
        n = self.radio_map.n_clients
        return {"t_s": np.repeat([r[0] for r in self.rows], n),
                "client": np.tile(np.arange(n), len(self.rows)),
                "x_m": np.concatenate([r[1] for r in self.rows]),
                "y_m": np.concatenate([r[2] for r in self.rows]),
                "ap": np.concatenate([r[3] for r in self.rows])}


class RecordedStill(_Mover):
    """Nobody moves, and mobility.csv is asked for (one snapshot per refresh)."""

    def _move(self, t_s: float) -> None:
        return None


class ConstantVelocityMover(_Mover):
    """Straight lines at constant speed, reflected at the disc's edge (module docstring)."""

    def __init__(self, cfg: ConstantVelocity, radio_map: RadioMap, propagation: Propagation,
                 rngs: RngTree, record: bool = False) -> None:
        super().__init__(radio_map, propagation, record)
        self.speed_mps, self.radius_m = cfg.speed_mps, cfg.radius_m
        angle = rngs.stream("mobility/direction").random(radio_map.n_clients) * 2.0 * math.pi
        self.ux, self.uy = np.cos(angle), np.sin(angle)

    def _move(self, t_s: float) -> None:
        m, radius = self.radio_map, self.radius_m
        left = np.full(m.n_clients, (t_s - self.t_s) * self.speed_mps)  # distance to walk
        x, y, ux, uy = m.x_m, m.y_m, self.ux, self.uy
        for _ in range(MAX_BOUNCES):
            # distance to the circle along (ux, uy): the positive root of |p + d u| = R
            b = x * ux + y * uy
            c = x * x + y * y - radius * radius
            d_edge = -b + np.sqrt(np.maximum(b * b - c, 0.0))
            inside = c <= 1e-9 * radius * radius
            hits = inside & (d_edge < left) & (left > 0)
            step = np.where(hits, d_edge, left)
            x, y, left = x + step * ux, y + step * uy, left - step
            if not hits.any():
                break
            # specular reflection about the normal at the hit point, put exactly on the
            # circle (rounding errors would otherwise grow from bounce to bounce)
            norm = np.where(hits, np.hypot(x, y), 1.0)
            nx, ny = np.where(hits, x / norm, 0.0), np.where(hits, y / norm, 0.0)
            x, y = np.where(hits, nx * radius, x), np.where(hits, ny * radius, y)
            dot = ux * nx + uy * ny
            ux = np.where(hits, ux - 2.0 * dot * nx, ux)
            uy = np.where(hits, uy - 2.0 * dot * ny, uy)
        else:
            x, y, ux, uy, left = _whole_chords(x, y, ux, uy, left, radius)
            x, y = x + left * ux, y + left * uy
        m.x_m, m.y_m, self.ux, self.uy = x, y, ux, uy


def _whole_chords(x: np.ndarray, y: np.ndarray, ux: np.ndarray, uy: np.ndarray,
                  left: np.ndarray, radius: float) -> tuple[np.ndarray, ...]:
    """Walk the movers with distance ``left`` over as many whole chords as fit.

    A mover with distance left is on the circle, heading inward: its chord has length
    L = -2 p.u, and each chord turns its hit point (and its heading) by the central
    angle 2 arcsin(L / 2R), counterclockwise when p x u > 0."""
    chord = np.maximum(-2.0 * (x * ux + y * uy), 0.0)
    moving = (left > 0) & (chord > 0)
    k = np.where(moving, np.floor(left / np.where(moving, chord, 1.0)), 0.0)
    turn = 2.0 * np.arcsin(np.minimum(chord / (2.0 * radius), 1.0))
    angle = k * turn * np.sign(x * uy - y * ux)
    cos, sin = np.cos(angle), np.sin(angle)
    return (cos * x - sin * y, sin * x + cos * y, cos * ux - sin * uy, sin * ux + cos * uy,
            left - k * chord)


class RandomWaypointMover(_Mover):
    """Legs to uniform waypoints, uniform speeds, pauses (module docstring)."""

    def __init__(self, cfg: RandomWaypoint, radio_map: RadioMap, propagation: Propagation,
                 rngs: RngTree, record: bool = False) -> None:
        super().__init__(radio_map, propagation, record)
        self.cfg, self.rngs = cfg, rngs
        n = radio_map.n_clients
        # the current leg of each client: from (x0, y0) at t0 to (x1, y1), arriving at
        # t_arrive, leaving the waypoint at t_arrive + pause_s
        self.x0, self.y0 = radio_map.x_m.copy(), radio_map.y_m.copy()
        self.x1, self.y1 = np.empty(n), np.empty(n)
        self.t0, self.t_arrive = np.zeros(n), np.zeros(n)
        self.speed_mps = np.empty(n)
        self.leg = np.zeros(n, dtype=np.int64)  # how many legs each client has started
        self.uniforms = KeyedUniforms(rngs, "mobility/waypoint")
        self._set_legs(np.arange(n), 0.0)

    def _set_legs(self, clients: np.ndarray, t0: np.ndarray | float) -> None:
        """Start the next legs of ``clients`` at ``t0``: three uniforms each (waypoint
        radius, angle and speed), the client's leg-th draw of ``mobility/waypoint``."""
        cfg = self.cfg
        draws = self.uniforms.draw(clients, self.leg[clients], 3)
        self.leg[clients] += 1
        r, angle = cfg.radius_m * np.sqrt(draws[0]), 2.0 * math.pi * draws[1]
        self.x1[clients], self.y1[clients] = r * np.cos(angle), r * np.sin(angle)
        speed = cfg.min_speed_mps + draws[2] * (cfg.max_speed_mps - cfg.min_speed_mps)
        length = np.hypot(self.x1[clients] - self.x0[clients], self.y1[clients] - self.y0[clients])
        self.speed_mps[clients], self.t0[clients] = speed, t0
        self.t_arrive[clients] = t0 + length / speed

    def _move(self, t_s: float) -> None:
        pause, batch = self.cfg.pause_s, 1
        while True:  # clients whose leg and pause end before t_s start their next legs
            done = np.flatnonzero(self.t_arrive + pause <= t_s)
            if done.size == 0:
                break
            self._skip(done, t_s, batch)
            batch = min(2 * batch, MAX_LEG_BATCH)  # fast walkers: more legs per pass
        span = self.t_arrive - self.t0
        frac = np.where(span > 0, np.clip((t_s - self.t0) / np.where(span > 0, span, 1.0),
                                          0.0, 1.0), 1.0)
        m = self.radio_map
        m.x_m = self.x0 + frac * (self.x1 - self.x0)
        m.y_m = self.y0 + frac * (self.y1 - self.y0)

    def _skip(self, done: np.ndarray, t_s: float, batch: int) -> None:
        """Walk ``done`` (clients whose leg and pause end by ``t_s``) over up to ``batch``
        further legs at once, stopping each at the leg it is on at ``t_s``.

        The legs are those :meth:`_set_legs` would start one at a time, with the same
        draws and the same arithmetic in the same order (times accumulate leg by leg),
        so the positions do not depend on ``batch``."""
        cfg, pause = self.cfg, self.cfg.pause_s
        legs = self.leg[done][:, None] + np.arange(batch)[None, :]  # (clients, batch)
        draws = self.uniforms.draw(np.repeat(done, batch), legs.ravel(), 3)
        draws = draws.reshape(3, done.size, batch)
        r, angle = cfg.radius_m * np.sqrt(draws[0]), 2.0 * math.pi * draws[1]
        x1, y1 = r * np.cos(angle), r * np.sin(angle)
        speed = cfg.min_speed_mps + draws[2] * (cfg.max_speed_mps - cfg.min_speed_mps)
        x0 = np.concatenate([self.x1[done][:, None], x1[:, :-1]], axis=1)
        y0 = np.concatenate([self.y1[done][:, None], y1[:, :-1]], axis=1)
        walk_s = np.hypot(x1 - x0, y1 - y0) / speed
        # t0 of the first leg, then (walk, pause) pairs: accumulated one term at a time,
        # t0[k] = arrive[k - 1] + pause and arrive[k] = t0[k] + walk[k]
        terms = np.empty((done.size, 2 * batch))
        terms[:, 0] = self.t_arrive[done] + pause
        terms[:, 1::2] = walk_s
        terms[:, 2::2] = pause
        clock = np.add.accumulate(terms, axis=1)
        t0, arrive = clock[:, 0::2], clock[:, 1::2]
        # each client's current leg: the first not over (walk and pause) by t_s, or the
        # batch's last leg when every one is over (the client is then done again)
        over = arrive + pause <= t_s
        current = np.where(over.all(axis=1), batch - 1, np.argmin(over, axis=1))
        rows = np.arange(done.size)
        self.x0[done], self.y0[done] = x0[rows, current], y0[rows, current]
        self.x1[done], self.y1[done] = x1[rows, current], y1[rows, current]
        self.speed_mps[done], self.t0[done] = speed[rows, current], t0[rows, current]
        self.t_arrive[done] = arrive[rows, current]
        self.leg[done] += current + 1


def build_mover(cfg: Mobility, radio_map: RadioMap | None, propagation: Propagation | None,
                rngs: RngTree, record: bool = False) -> Mover:
    """The mover of ``cfg`` for the clients of ``radio_map`` (STILL when nobody moves)."""
    if radio_map is None or propagation is None:
        return STILL
    mover: Mover = implementation_of(cfg, "population.mobility.kind")(
        cfg, radio_map, propagation, rngs, record)
    return mover


# each mobility kind's mover, built as ``impl(cfg, radio_map, propagation, rngs, record)``
# (``simfl.register`` adds more)
implements(Static, lambda cfg, radio_map, propagation, rngs, record: (
    RecordedStill(radio_map, propagation, record) if record else STILL))
implements(ConstantVelocity, ConstantVelocityMover)
implements(RandomWaypoint, RandomWaypointMover)
