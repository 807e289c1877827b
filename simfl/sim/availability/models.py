"""Availability models: which registered clients are online, and when they leave.

Every model answers ``online(round, t_s) -> bool mask`` when a round opens, and
``offline_at(clients) -> times`` for the clients it reported online: the simulated time
at which each of them next goes offline (``inf`` when it stays for the whole round).
The simulation interrupts a device still working for the server at that time with cause
``"offline"``, so its update is missing with reason ``offline``.

Two families
------------
Per-round draws (``always``, ``ideal``, ``bernoulli``, the FedGS modes,
``mifa_adversarial``, ``diurnal``)
    Each client's probability p_i(t) is evaluated for the round index t (or, for the
    sinusoidal ``diurnal`` rate, the round's opening time) and one Bernoulli draw per
    client is made from the stream ``availability/round/{t}``. The draw holds for the
    whole round: nobody goes offline mid-round. With ``redraw_until_nonempty`` (the
    FedGS simulator's loop) a round in which nobody came online is drawn again from the
    same stream, at most :data:`MAX_REDRAWS` times; a model whose every p_i is 0 then
    leaves the round empty.
Continuous time (``markov``, ``trace``)
    Each client's state changes at event times in simulated seconds. The model keeps
    two arrays, the state and the next change time, and when a round opens advances
    every client whose next change has passed, vectorised, as many passes as the
    busiest client needs. Idle clients cost no SimPy process and no Python loop.
    A client that comes online during a round is not invited until the next round
    opens (the server only looks at opening time).

Assumptions and limits: availability is independent of what a client does (training
does not drain it; batteries are a separate model combined by the simulation); no
correlation across clients beyond what a formula or trace puts in.

Modules
-------
This module builds a model from its config and is the one to import; the models live
in :mod:`simfl.sim.availability.rounds` (per-round draws),
:mod:`simfl.sim.availability.fedgs` (the FedGS modes) and
:mod:`simfl.sim.availability.events` (continuous time).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from simfl.core.config import (Always, Availability, Bernoulli, Diurnal, Ideal, LessDataFirst,
                               LogNormal, Markov, MifaAdversarial, MoreDataFirst, SinLogNormal,
                               Trace, YCycle, YMaxFirst)
from simfl.core.registry import implementation_of, implements
from simfl.core.rng import RngTree
from simfl.sim.availability.events import (EventTimesModel, MarkovOnline, TraceOnline,
                                           counter_uniforms)
from simfl.sim.availability.fedgs import FedGSOnline
from simfl.sim.availability.rounds import (MAX_REDRAWS, AlwaysOnline, BernoulliOnline,
                                           DiurnalOnline, MifaAdversarialOnline, OptArray,
                                           PerRoundModel)

__all__ = ["MAX_REDRAWS", "AlwaysOnline", "AvailabilityModel", "BernoulliOnline",
           "DiurnalOnline", "EventTimesModel", "FedGSOnline", "MarkovOnline",
           "MifaAdversarialOnline", "OptArray", "PerRoundModel", "TraceOnline",
           "build_availability", "counter_uniforms"]


class AvailabilityModel(Protocol):
    """What the simulation asks an availability model (module docstring)."""

    def online(self, round: int, t_s: float) -> np.ndarray: ...

    def offline_at(self, clients: np.ndarray) -> np.ndarray: ...


# each availability config's model, built as ``impl(cfg, n_clients, rngs, n_samples,
# label_counts)`` (``simfl.register`` adds more)
for _config, _model in ((Always, AlwaysOnline), (Ideal, AlwaysOnline),
                        (Bernoulli, BernoulliOnline),
                        (MoreDataFirst, FedGSOnline), (LessDataFirst, FedGSOnline),
                        (YMaxFirst, FedGSOnline), (YCycle, FedGSOnline), (LogNormal, FedGSOnline),
                        (SinLogNormal, FedGSOnline), (MifaAdversarial, MifaAdversarialOnline),
                        (Diurnal, DiurnalOnline), (Markov, MarkovOnline), (Trace, TraceOnline)):
    implements(_config, _model)


def build_availability(cfg: Availability, n_clients: int, rngs: RngTree,
                       n_samples: OptArray = None,
                       label_counts: OptArray = None) -> AvailabilityModel:
    """The availability model of ``cfg`` for ``n_clients`` registered clients.

    ``n_samples`` (training-set sizes) and ``label_counts`` (clients x classes) are
    needed only by the models that use them (``cfg.needs_labels`` for the latter).
    """
    model: AvailabilityModel = implementation_of(cfg, "population.availability.kind")(
        cfg, n_clients, rngs, n_samples, label_counts)
    return model
