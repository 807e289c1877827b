"""Availability models: when a registered client is online and can be selected.

Two families (semantics in :mod:`simfl.sim.availability.models`):

* **per-round** models draw every client's state when a round opens, independently
  per round, and keep it for the whole round (``bernoulli``, the seven FedGS modes,
  ``mifa_adversarial``, ``diurnal``);
* **continuous-time** models (``markov``, ``trace``) change state at event times in
  simulated seconds; a client that goes offline while it works for the server loses
  that round's update with reason ``offline``.

Models that depend on a client's data (sizes or labels) get it from the task; they say
so with ``needs_labels``.

One module per family of kinds: :mod:`~simfl.core.config.availability.base` (the
:class:`Availability` extension point), :mod:`~simfl.core.config.availability.independent`
(``always``, ``bernoulli``), :mod:`~simfl.core.config.availability.fedgs` (the FedGS
modes), :mod:`~simfl.core.config.availability.skewed` (``mifa_adversarial``,
``diurnal``) and :mod:`~simfl.core.config.availability.continuous` (``markov``,
``trace``). Every name is importable from this package; the kinds register in the order
imported here.
"""

from simfl.core.config.availability.base import Availability
from simfl.core.config.availability.independent import Always, Bernoulli
from simfl.core.config.availability.fedgs import (FedGSMode, Ideal, LessDataFirst, LogNormal,
                                                  MoreDataFirst, SinLogNormal, YCycle, YMaxFirst)
from simfl.core.config.availability.skewed import Diurnal, MifaAdversarial
from simfl.core.config.availability.continuous import Markov, Trace

__all__ = ["Availability", "Always", "Bernoulli", "FedGSMode", "Ideal", "MoreDataFirst",
           "LessDataFirst", "YMaxFirst", "YCycle", "LogNormal", "SinLogNormal",
           "MifaAdversarial", "Diurnal", "Markov", "Trace"]
