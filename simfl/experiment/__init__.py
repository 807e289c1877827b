"""The composition root: builds every component from a Scenario and runs it.

This package is the only place that knows all layers. The loop follows "decide, then
compute": the simulation decides a round's outcome from timing models alone; only then
are exactly the received updates trained (each from the model version it was sent)
and aggregated, with the late uploads that landed in the round when the aggregator asks
for them (FedAR ``late_policy = "store"``; a model version is kept while a late device
still works from it). No simulated time depends on a training result.

Modules: :mod:`~simfl.experiment.run` (``run_scenario``, ``resume_run`` and the one
assembly of a run's components), :mod:`~simfl.experiment.build` (the build context and
the builders), the loops :mod:`~simfl.experiment.loop` (rounds) and
:mod:`~simfl.experiment.async_loop` (server steps), :mod:`~simfl.experiment.edges`
(edge servers' models), the model side: :mod:`~simfl.experiment.trainer` (the interface
the loops use, and the null trainer of timing-only runs),
:mod:`~simfl.experiment.training` (the real one), :mod:`~simfl.experiment.model_step`
(train, aggregate, optimise), :mod:`~simfl.experiment.eval_schedule` (evaluations, the
best model, divergence), :mod:`~simfl.experiment.compute` (model, executor, evaluation:
torch), :mod:`~simfl.experiment.session_model` (``population.sessions``' warm starts
and scoring); checkpoints: :mod:`~simfl.experiment.checkpoint` (files),
:mod:`~simfl.experiment.checkpoint_codec` (tree codec),
:mod:`~simfl.experiment.checkpoint_state` (what a checkpoint holds, saving and taking
it up), :mod:`~simfl.experiment.checkpoint_check` (checks against the live run) and
:mod:`~simfl.experiment.journal` (what a resumed run replays);
:mod:`~simfl.experiment.probe` (the client-probe capability) and
:mod:`~simfl.experiment.gc_tuning`.
"""

from simfl.experiment.build import LOCAL_RULES, BuildContext
from simfl.experiment.loop import ProgressFn
from simfl.experiment.run import (RunResult, default_out_dir, resume_run, run_scenario,
                                  versions)

__all__ = ["BuildContext", "LOCAL_RULES", "ProgressFn", "RunResult", "default_out_dir",
           "resume_run", "run_scenario", "versions"]
