"""Simulations and radio maps built by hand for the shared band's tests."""

import numpy as np

from simfl.core.config import FixedRate, IdealChannel
from simfl.core.rng import RngTree
from simfl.sim.availability.rounds import AlwaysOnline
from simfl.sim.energy.infinite import InfiniteEnergy
from simfl.sim.links.channel import build_link
from simfl.sim.mac.kinds import build_mac
from simfl.sim.radio.capture import Air
from simfl.sim.radio.radio_map import RadioMap
from simfl.sim.simulation import Simulation

#: 10 Mb updates over a 10 Mb/s uplink: one second alone
MODEL_BYTES, RATE_BPS = 1_250_000, 10e6


def band_sim(compute_s, mac_cfg, *, air=None, deadline_s=100.0, broadcast=None,
             download_bps=None, keep_events=True, seed=0, energy=None):
    """A Simulation of len(compute_s) clients whose uplink MAC is ``mac_cfg`` (built with
    ``air``), ideal links at RATE_BPS (downlink: instant unless ``download_bps``); with
    ``energy`` (an Energy config) the devices' meter uses it, bound before the MAC is."""
    n = len(compute_s)
    rngs = RngTree(seed)
    down = FixedRate(rate_bps=download_bps or float("inf"))
    sim = Simulation(
        rngs=rngs, n_samples=np.full(n, 10), work_samples=np.asarray(compute_s, dtype=float),
        samples_per_s=np.ones(n), online=AlwaysOnline(None, n, rngs),
        links={"downlink": build_link(IdealChannel(rate=down)),
               "uplink": build_link(IdealChannel(rate=FixedRate(rate_bps=RATE_BPS)))},
        model_bytes=MODEL_BYTES, arq_max_attempts=1, clients_per_round=n, overcommit=1.0,
        deadline_s=deadline_s, keep_events=keep_events, broadcast=broadcast,
        battery=None if energy is None else InfiniteEnergy(n, energy))
    sim.mac = build_mac(mac_cfg, sim.env, rngs, n, sim.energy.charge_transmissions, air=air)
    return sim


def radio_map(rx_w, *, noise_w=1e-12, bandwidth_hz=1e6, ap=None, x_m=None, y_m=None,
              ap_xy_m=((0.0, 0.0),), ap_tx_power_dbm=30.0):
    """A RadioMap whose clients are received at ``rx_w`` watts (transmitting at 0 dBm)."""
    rx_w = np.asarray(rx_w, dtype=float)
    n = rx_w.size
    return RadioMap(
        x_m=np.zeros(n) if x_m is None else np.asarray(x_m, dtype=float),
        y_m=np.zeros(n) if y_m is None else np.asarray(y_m, dtype=float),
        ap_xy_m=np.asarray(ap_xy_m, dtype=float),
        ap=np.zeros(n, dtype=np.int64) if ap is None else np.asarray(ap, dtype=np.int64),
        gain_db=10.0 * np.log10(rx_w / 1e-3), tx_power_dbm=np.zeros(n),
        noise_dbm=10.0 * np.log10(noise_w / 1e-3), bandwidth_hz=bandwidth_hz,
        ap_tx_power_dbm=ap_tx_power_dbm)


def with_radio(rx_w, **kwargs):
    """The Air of :func:`radio_map` (no SINR threshold)."""
    return Air(radio_map=radio_map(rx_w, **kwargs))


def everyone(view):
    return view.available


def arrivals(outcome):
    return {a.client: a.t_s for a in outcome.received}
