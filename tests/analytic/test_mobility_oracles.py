"""Mobility against its definitions (simfl.sim.radio.mobility).

Constant velocity: the displacement is v t along a fixed direction until the edge, the
path stays in the disc, and a specular reflection in a circle keeps the path's distance
from the centre |p x u| (so many bounces, one by one or by whole chords, keep it).
Random waypoint: legs end at their waypoints, speeds lie in their bounds (uniform: mean
(min + max) / 2), and a client waits ``pause_s`` at each waypoint.
"""

from __future__ import annotations

import math

import numpy as np

from simfl.core.config.placement import ConstantVelocity, GridPlacement, RandomWaypoint
from simfl.core.config.cells import Cells
from simfl.core.config.radio import Radio
from simfl.core.rng import RngTree
from simfl.sim.radio.mobility import (ConstantVelocityMover, RandomWaypointMover,
                                      build_mover)
from simfl.sim.radio.propagation import build_radio_map


def _mover(cfg, n_clients: int = 9, spacing_m: float = 1.0, seed: int = 1):
    rngs = RngTree(seed)
    radio_map, propagation = build_radio_map(GridPlacement(spacing_m=spacing_m), Cells(),
                                             Radio(), n_clients, rngs)
    return build_mover(cfg, radio_map, propagation, rngs), radio_map


def test_constant_velocity_moves_v_t_in_a_straight_line():
    mover, radio_map = _mover(ConstantVelocity(speed_mps=1.5, radius_m=100.0))
    assert isinstance(mover, ConstantVelocityMover)
    x0, y0 = radio_map.x_m.copy(), radio_map.y_m.copy()
    mover.advance(20.0)
    x1, y1 = radio_map.x_m.copy(), radio_map.y_m.copy()
    assert np.allclose(np.hypot(x1 - x0, y1 - y0), 1.5 * 20.0, rtol=0, atol=1e-9)
    mover.advance(50.0)  # still inside: the same direction
    dx, dy = radio_map.x_m - x0, radio_map.y_m - y0
    assert np.allclose(np.hypot(dx, dy), 75.0, atol=1e-9)
    assert np.allclose(dx * (y1 - y0) - dy * (x1 - x0), 0.0, atol=1e-7)


def test_constant_velocity_reflects_at_the_edge_and_stays_in_the_disc():
    cfg = ConstantVelocity(speed_mps=3.0, radius_m=50.0)
    mover, radio_map = _mover(cfg, n_clients=25, spacing_m=7.0)
    assert isinstance(mover, ConstantVelocityMover)
    x, y = radio_map.x_m, radio_map.y_m
    impact = np.abs(x * mover.uy - y * mover.ux)
    fine, fine_map = _mover(cfg, n_clients=25, spacing_m=7.0)
    for t_s in np.arange(1.0, 2001.0, 1.0):  # about 6 m per step: a bounce at a time
        fine.advance(float(t_s))
        assert (np.hypot(fine_map.x_m, fine_map.y_m) <= 50.0 * (1 + 1e-9)).all()
    mover.advance(2000.0)  # 6 km in one step: about 60 bounces each, then whole chords
    assert np.allclose(np.abs(radio_map.x_m * mover.uy - radio_map.y_m * mover.ux), impact,
                       atol=1e-6)
    assert np.allclose(radio_map.x_m, fine_map.x_m, atol=1e-5)
    assert np.allclose(radio_map.y_m, fine_map.y_m, atol=1e-5)


def test_random_waypoint_legs_speeds_and_pauses(oracle):
    cfg = RandomWaypoint(min_speed_mps=0.5, max_speed_mps=2.0, pause_s=5.0, radius_m=40.0)
    mover, radio_map = _mover(cfg, n_clients=50, spacing_m=2.0)
    assert isinstance(mover, RandomWaypointMover)
    speeds = []
    t_s = 0.0
    for _ in range(200):
        client = int(np.argmin(mover.t_arrive))
        x1, y1, speed = mover.x1[client], mover.y1[client], mover.speed_mps[client]
        x0, y0, t0 = mover.x0[client], mover.y0[client], mover.t0[client]
        assert math.hypot(x1, y1) <= 40.0 and 0.5 <= speed <= 2.0
        arrive = float(mover.t_arrive[client])
        assert math.isclose(arrive - t0, math.hypot(x1 - x0, y1 - y0) / speed, rel_tol=1e-12)
        half = (t0 + arrive) / 2.0
        if half > t_s:  # half way along the leg: half way between its ends
            mover.advance(half)
            assert math.isclose(radio_map.x_m[client], (x0 + x1) / 2, abs_tol=1e-9)
        for when in (arrive, arrive + 2.5, arrive + 5.0 - 1e-9):  # at the waypoint, waiting
            mover.advance(when)
            assert math.isclose(radio_map.x_m[client], x1, abs_tol=1e-9)
            assert math.isclose(radio_map.y_m[client], y1, abs_tol=1e-9)
        mover.advance(arrive + 5.0)  # the next leg starts from the waypoint
        assert mover.t0[client] == arrive + 5.0 and mover.x0[client] == x1
        t_s = arrive + 5.0
        speeds.append(speed)
    speeds_a = np.asarray(speeds)
    oracle("random waypoint: mean leg speed = (min + max) / 2", 1.25, speeds_a.mean(),
           4 * speeds_a.std(ddof=1) / math.sqrt(speeds_a.size))


def test_keyed_uniforms_are_uniform_independent_and_addressed(oracle):
    from simfl.sim.radio.keyed import KeyedUniforms

    uniforms = KeyedUniforms(RngTree(4), "mobility/waypoint")
    clients = np.repeat(np.arange(1000), 100)
    legs = np.tile(np.arange(100), 1000)
    u = uniforms.draw(clients, legs, 3)
    assert u.shape == (3, 100_000) and (u >= 0).all() and (u < 1).all()
    n = u.shape[1]
    oracle("keyed uniforms: mean", 0.5, u[0].mean(), 4 * math.sqrt(1 / 12 / n))
    # E[(u - 1/2)^2] = 1/12; (u - 1/2)^2 has variance E[(u - 1/2)^4] - 1/144 = 1/80 - 1/144
    oracle("keyed uniforms: variance", 1 / 12, ((u[1] - 0.5) ** 2).mean(),
           4 * math.sqrt(1 / 80 - 1 / 144) / math.sqrt(n))
    for a, b, name in ((u[0], u[2], "two slots"), (u[0][:-1], u[0][1:], "successive legs")):
        oracle(f"keyed uniforms: corr of {name}", 0.0, np.corrcoef(a, b)[0, 1],
               4 / math.sqrt(a.size))
    again = uniforms.draw(np.array([7, 3]), np.array([5, 99]), 3)
    assert np.array_equal(again[:, 0], u[:, 7 * 100 + 5])
    assert np.array_equal(again[:, 1], u[:, 3 * 100 + 99])
    other = KeyedUniforms(RngTree(5), "mobility/waypoint").draw(clients[:10], legs[:10], 3)
    assert not np.array_equal(other, u[:, :10])
    one = [uniforms.draw_one(c, k, 3) for c, k in ((7, 5), (3, 99), (2**31, 2**40))]
    many = uniforms.draw(np.array([7, 3, 2**31]), np.array([5, 99, 2**40]), 3)
    assert np.array_equal(np.array(one).T, many), "one at a time = vectorised"
