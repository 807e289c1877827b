"""SimPy processes: the simulated deployment that decides who trains and whose update arrives.

Subpackages, one concept each (imports among them flow one way, without cycles):

- :mod:`simfl.sim.availability`: which clients are online (per round, continuous, sessions);
- :mod:`simfl.sim.traces`: availability traces read safely from files;
- :mod:`simfl.sim.energy`: batteries, charging and the power of each activity;
- :mod:`simfl.sim.links`: whether a transfer attempt arrives (loss and fading models);
- :mod:`simfl.sim.mac`: medium access on the uplink (ideal, TDMA, slotted ALOHA, relay);
- :mod:`simfl.sim.rounds`: a round's device work on the fast and the clocked loop.

The modules at this level compose them: :mod:`~simfl.sim.simulation` (the synchronous
deployment), :mod:`~simfl.sim.continuous` (the asynchronous modes' timing),
:mod:`~simfl.sim.clock`, :mod:`~simfl.sim.event_log` and :mod:`~simfl.sim.scripted` (the
deterministic test doubles, imported here so that every builder knows them).
"""

from simfl.sim import scripted  # noqa: F401  (adds the scripted kinds to the builders)
