"""The composition root: builds every component from a Scenario and runs it.

This package is the only place that knows all layers. The loop follows "decide, then
compute": the simulation decides a round's outcome from timing models alone; only then
are exactly the received updates trained (each from the model version it was sent)
and aggregated, with the late uploads that landed in the round when the aggregator asks
for them (FedAR ``late_policy = "store"``; a model version is kept while a late device
still works from it). No simulated time depends on a training result.

Modules: :mod:`~simfl.experiment.run` (``run_scenario``), :mod:`~simfl.experiment.build`
(the build context and the builders), :mod:`~simfl.experiment.loop` (the round loop),
:mod:`~simfl.experiment.training` (the model side of a run),
:mod:`~simfl.experiment.trainer` (its interface, and the null trainer of timing-only
runs), :mod:`~simfl.experiment.checkpoint`, :mod:`~simfl.experiment.checkpoint_codec`,
:mod:`~simfl.experiment.checkpoint_check` and :mod:`~simfl.experiment.journal`
(checkpoints: files, tree codec, checks against the live run, and the journal a
resumed run replays),
:mod:`~simfl.experiment.compute` (model, executor, evaluation: torch),
:mod:`~simfl.experiment.probe` (the client-probe capability),
:mod:`~simfl.experiment.sessions` (``population.sessions`` wired up) and
:mod:`~simfl.experiment.gc_tuning`.
"""

from simfl.experiment.build import LOCAL_RULES, BuildContext
from simfl.experiment.loop import ProgressFn
from simfl.experiment.run import (RunResult, default_out_dir, resume_run, run_scenario,
                                  versions)

__all__ = ["BuildContext", "LOCAL_RULES", "ProgressFn", "RunResult", "default_out_dir",
           "resume_run", "run_scenario", "versions"]
