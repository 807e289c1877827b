"""Medium access on the uplink: the kinds, and the builder that picks one from its config.

Each MAC module names its kind's access model with :func:`simfl.core.registry.implements`
beside its code; importing this module imports every module of the package, so a MAC
added inside simfl needs its config, its module and its tests, and no line here.

One module per concept: :mod:`simfl.sim.mac.access` (what a round asks its MAC; the ideal
MAC), :mod:`simfl.sim.mac.tdma` (time division), :mod:`simfl.sim.mac.aloha.contention` (slotted ALOHA
contention, with its statistics in :mod:`simfl.sim.mac.aloha.tally` and its serialised data
phase in :mod:`simfl.sim.mac.aloha.data_phase`), :mod:`simfl.sim.mac.relay` (the relay that
forwards uploads), :mod:`simfl.sim.mac.ofdma` (a band shared by the active uploads) and
:mod:`simfl.sim.mac.csma.access` (IEEE 802.11 DCF).
"""

from __future__ import annotations

import importlib
import pkgutil

import simpy

from simfl.core.config.network import CsmaCaMac, Mac
from simfl.core.registry import implementation_of
from simfl.core.rng import RngTree
from simfl.sim.mac.access import IdealAccess, per_client
from simfl.sim.mac.protocol import MediumAccess, OnTransmit
from simfl.sim.radio.capture import Air
from simfl.sim.mac.aloha.contention import SlottedAloha
from simfl.sim.mac.csma.access import CsmaCa
from simfl.sim.mac.csma.carrier_sense import RangedCsmaCa
from simfl.sim.mac.ofdma import OfdmaAccess
from simfl.sim.mac.relay import Relay, aloha_heard, relay_draw
from simfl.sim.mac.tdma import TdmaAccess, tdma_finish_s

__all__ = ["CsmaCa", "IdealAccess", "OfdmaAccess", "OnTransmit", "Relay", "SlottedAloha",
           "TdmaAccess", "aloha_heard", "build_mac", "per_client", "relay_draw",
           "tdma_finish_s"]

# every MAC module, imported: each names its kind's access model, built as
# ``cls(cfg, env, rngs, n_clients, on_transmit)`` (``simfl.register`` adds more)
_PACKAGE = importlib.import_module("simfl.sim.mac")
for _module in pkgutil.walk_packages(_PACKAGE.__path__, "simfl.sim.mac."):
    importlib.import_module(_module.name)


def build_mac(cfg: Mac, env: simpy.Environment, rngs: RngTree, n_clients: int,
              on_transmit: OnTransmit | None = None, *, air: Air | None = None) -> MediumAccess:
    """The uplink access model of ``cfg``, bound to ``env`` and the run's random streams;
    ``on_transmit`` is told about contention transmissions (to charge their energy);
    ``air`` is the shared radio (positions and gains, the SINR threshold), if any."""
    access = implementation_of(cfg, "network.mac.kind")
    ranged = isinstance(cfg, CsmaCaMac) and cfg.carrier_sense_range_m is not None
    if ranged and access is CsmaCa:  # carrier sense limited to a range: the ranged variant
        access = RangedCsmaCa
    mac: MediumAccess = access(cfg, env, rngs, n_clients, on_transmit)
    if air is not None:
        mac.attach(air)
    return mac
