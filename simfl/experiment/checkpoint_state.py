"""What a checkpoint holds of a run, and how a run saves it and takes it up again.

A checkpoint (:mod:`~simfl.experiment.checkpoint`: the files) holds the model side's
state (:func:`trainer_state`: the model step's, the evaluation schedule's, the session's
and the model's per-client buffers), the recorder's, the journal of what the timing side
learned from the model side (:mod:`~simfl.experiment.journal`), and a fingerprint of the
timing side that the replay of a resumed run must reproduce exactly before the saved
state is taken up (:class:`Checkpointing`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from simfl.core.config import Scenario
from simfl.experiment import checkpoint
from simfl.experiment.checkpoint import CheckpointError
from simfl.experiment.checkpoint_check import check_state, check_top
from simfl.experiment.journal import JournaledTrainer
from simfl.metrics.recorder import TABLES
from simfl.metrics.rundir import check_tables

#: the model side's state in a checkpoint, in this order
TRAINER_KEYS = ("params", "agg_state", "opt_state", "versions", "accuracy", "n_timed_evals",
                "n_trained", "stepped", "waiting_for", "diverged", "sessions", "best",
                "client_buffers", "local_optimizer")


def trainer_state(step: Any, schedule: Any, sessions: Any, net: Any) -> dict[str, Any]:
    """The model side's state: the model step's (model, aggregator's and optimisers'
    states, late devices' models), the evaluation schedule's, the session's, and the
    model's per-client buffers (FedBN; None without)."""
    found = {**step.snapshot(), **schedule.snapshot(), "sessions": sessions.snapshot(),
             "client_buffers": getattr(net, "client_buffers", None)}
    return {key: found[key] for key in TRAINER_KEYS}


def restore_trainer(state: dict[str, Any], step: Any, schedule: Any, sessions: Any,
                    net: Any) -> None:
    """Put :func:`trainer_state`'s ``state`` back into the parts it came from."""
    step.restore(state)
    schedule.restore(state)
    sessions.restore(state["sessions"])
    if state["client_buffers"] is not None:  # FedBN: each client's own buffers
        net.client_buffers = state["client_buffers"]


def scenario_digest(scenario: Scenario) -> str:
    """A hash of the resolved scenario (a checkpoint belongs to one scenario)."""
    text = json.dumps(scenario.to_dict(), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Checkpointing:
    """A run's checkpoints: one after every ``every`` rounds, and, resuming from
    ``resume_from``, the saved state checked and taken up once the replay reaches it.

    :meth:`journal` wraps the trainer (every checkpointed or resumed run keeps a
    journal); :meth:`attach` gives the parts the fingerprint is read from.
    """

    def __init__(self, scenario: Scenario, simfl_version: str, every: int | None,
                 resume_from: Path | None = None, device: Any = None) -> None:
        self.scenario, self.simfl_version, self.every = scenario, simfl_version, every
        self.saved: dict[str, Any] | None = None
        self.out_dir: Path | None = None
        if resume_from is not None:
            self.saved = saved = checkpoint.load(resume_from, device)
            check_top(saved, int(resume_from.name[len("round_"):]), scenario.run.rounds)
            if saved["simfl"] != simfl_version:
                raise CheckpointError(f"the checkpoint was written by simfl {saved['simfl']}, "
                                      f"this is simfl {simfl_version}: resume with that "
                                      "version, or run again")
            if saved["scenario"] != scenario_digest(scenario):
                raise CheckpointError("the checkpoint belongs to another scenario than the "
                                      "run folder's config.json")

    @property
    def replay_rounds(self) -> int:
        """The rounds a resumed run replays before it takes up the checkpoint (0: none)."""
        return 0 if self.saved is None else int(self.saved["rounds_done"])

    def journal(self, trainer: Any) -> Any:
        """``trainer``, journaled when the run writes or resumes checkpoints."""
        if self.saved is not None:
            return JournaledTrainer(trainer, self.saved["journal"])
        return trainer if self.every is None else JournaledTrainer(trainer)

    def attach(self, out_dir: Path, sim: Any, trainer: Any, recorder: Any, loop: Any) -> None:
        """The run's parts; a resumed run's saved state is checked against them here,
        before any file is touched."""
        self.out_dir, self.sim, self.trainer = out_dir, sim, trainer
        self.recorder, self.loop = recorder, loop

    def check_saved(self, live_trainer: dict[str, Any], n_clients: int,
                    n_eval_columns: int) -> None:
        """A resumed run's saved state, against the run's own (all of it checked before
        any file is touched)."""
        if self.saved is not None:
            assert self.out_dir is not None
            check_state(self.saved, self.fingerprint(), live_trainer, n_clients,
                        n_eval_columns, TABLES)
            check_tables(self.out_dir, TABLES, self.saved["recorder"]["sizes"])

    def round_end(self, rounds_done: int) -> None:
        """After a round: take up the checkpoint where the replay reaches it, or save one."""
        if self.saved is not None and rounds_done == self.replay_rounds:
            self._take_up(self.saved)
        elif self.every is not None and rounds_done % self.every == 0:
            assert self.out_dir is not None
            checkpoint.save(self.out_dir, rounds_done, self._state(rounds_done))

    def check_replayed(self) -> None:
        """A resumed run must have reached its checkpoint in the replay."""
        if self.saved is not None and isinstance(self.trainer, JournaledTrainer) \
                and self.trainer.replaying:
            raise CheckpointError(f"the run ended before round {self.replay_rounds} in the "
                                  "replay: it does not replay the way it ran")

    def fingerprint(self) -> dict[str, Any]:
        """What the replay must reproduce exactly before a checkpoint is taken up."""
        r = self.recorder
        return {"now_s": self.sim.now_s, "events": self.sim.n_events, "rounds": r.n_rounds,
                "trained": r.trained_total, "aggregated": r.aggregated_total,
                "energy_j": r.energy_total_j, "arrived": self.loop.n_arrived}

    def _state(self, rounds_done: int) -> dict[str, Any]:
        trainer = self.trainer
        assert isinstance(trainer, JournaledTrainer)
        return {"format": 1, "simfl": self.simfl_version,
                "scenario": scenario_digest(self.scenario), "rounds_done": rounds_done,
                "fingerprint": self.fingerprint(), "journal": trainer.entries,
                "trainer": trainer.snapshot(), "recorder": self.recorder.snapshot()}

    def _take_up(self, saved: dict[str, Any]) -> None:
        trainer = self.trainer
        assert isinstance(trainer, JournaledTrainer)
        trainer.end_replay()
        if self.fingerprint() != saved["fingerprint"]:
            raise CheckpointError(f"the replay of {saved['rounds_done']} rounds ended in "
                                  f"{self.fingerprint()}, the run was at "
                                  f"{saved['fingerprint']}: it does not replay the same way")
        trainer.restore(saved["trainer"])
        self.recorder.restore(saved["recorder"])
