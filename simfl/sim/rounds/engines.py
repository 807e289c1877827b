"""Which engine runs a round's device work, chosen from what its collaborators declare.

Three engines run a round's device work (download, compute, the MAC's upload) and give
the same outcomes, energy and records to the last bit where they apply:

``process``
    one SimPy process per device (:func:`simfl.sim.rounds.device.device_round`): every
    MAC, link and energy source, late devices kept at work, availability changes.
``callbacks``
    the same steps as event callbacks (:mod:`simfl.sim.rounds.device_chain`): no
    battery, no late device kept, nobody going offline inside the round.
``off_clock``
    one loop off the clock (:mod:`simfl.sim.rounds.fast`): as ``callbacks``, and no
    over-selection. Over links with one airtime per direction the loop drives the MAC's
    slot contention, if any; over the shared radio's links (each client's own airtime)
    it runs each client's chain of download, compute and upload
    (:mod:`simfl.sim.rounds.placed`).

A MAC claims engines in its config's capabilities
(:class:`~simfl.core.config.mac.MacCapabilities`, narrowed by the MAC for its settings):
``engines`` over links with one airtime, ``placed_engines`` where a link gives each
client its own; a link claims in its class
(:meth:`~simfl.sim.links.channel.Link.round_engines`; a lossy uplink claims the loop off
the clock where slotted ALOHA settles the cohort at once); the energy source and the
downlink mode decide the rest. Every kind runs on processes. A round runs on the
lightest engine that every collaborator claims and the round allows.

On the shared radio (``network.radio``) a timing-only or trained round runs off the
clock with placement, any path loss (the TR 38.901 kinds included), shadowing, power
control that silences nobody, fading of any memory (block, per attempt, Gauss-Markov:
each client's gains are drawn from its own addressed stream, whatever the order of the
queries), mobility (it moves clients between rounds only) and the ideal MAC, TDMA
(slots or shared) or OFDMA with the equal split and no interference between cells. It
stays on the clock with an SINR threshold (outage: a lost attempt and its ARQ retries),
a client that power control silences, another OFDMA scheduler or interference,
contention (slotted ALOHA and its capture, CSMA), relays, a battery, a broadcast
download, late devices kept or clients leaving inside a round, and over-selection.
"""

from __future__ import annotations

from typing import cast

from simfl.core.config.mac import CALLBACKS, ENGINES, OFF_CLOCK, PROCESS
from simfl.sim.energy.infinite import InfiniteEnergy
from simfl.sim.mac.protocol import OffClockAccess
from simfl.sim.rounds.device import Devices

#: every engine, the default that a simulation may choose from
ALL_ENGINES = frozenset(ENGINES)


def claimed_engines(devices: Devices) -> frozenset[str]:
    """The engines on which every collaborator of ``devices`` gives the processes' results:
    the MAC's (its ``placed_engines`` where a link gives each client its own airtime)
    and both links' claims, with infinite energy and a unicast downlink
    (a battery's depletion timers and a broadcast download need processes)."""
    if type(devices.energy) is not InfiniteEnergy or devices.broadcast_s is not None:
        return frozenset({PROCESS})
    capabilities = devices.mac.capabilities
    placed = any(link.airtime_by_client for link in devices.links)
    claimed = capabilities.placed_engines if placed else capabilities.engines
    # a MAC claiming the loop over one-airtime links drives its slots there (if any)
    slots = (cast(OffClockAccess, devices.mac).slots
             if OFF_CLOCK in claimed and not placed else None)
    cohort = slots is not None and slots.by_cohort  # then the uplink's losses too
    claimed = (claimed & devices.links.downlink.round_engines()
               & devices.links.uplink.round_engines(cohort=cohort))
    return claimed | {PROCESS}


def choose_engine(claimed: frozenset[str], *, keeps_late: bool, leaving: bool,
                  over_selects: bool, off_clock_ready: bool = True) -> str:
    """The engine for a round: off the clock when claimed and the round is alone (no late
    device kept, nobody leaving, no over-selection) and the loop is ready
    (``off_clock_ready``: no MAC event of its due on the clock); chained callbacks when
    claimed and nothing needs a process; else processes."""
    if (OFF_CLOCK in claimed and off_clock_ready
            and not (keeps_late or leaving or over_selects)):
        return OFF_CLOCK
    if CALLBACKS in claimed and not (keeps_late or leaving):
        return CALLBACKS
    return PROCESS
