"""Warm starts for client groups that take turns (sessions): which model should a
returning session start from?

Setting (the paper's session grid, on Fashion-MNIST): 20 clients in two groups A and B
(10 each) whose label sets overlap in 0 or 2 of the 10 labels (the paper's overlap 0 and
0.2), each client with Dirichlet(0.3 or 0.7) class proportions within its group: four
cells. Six sessions of 50 rounds alternate A, B, A, B, A, B; every client of the session
is invited each round; accuracy is measured on the current session's labels. Session 0
is the pilot; session 1 restarts from the initial model; sessions 2-5 are the returning
ones whose warm start is scored. Local work: 5 SGD steps of batch 128 at lr 0.01 with
momentum 0.9, an MLP 784-200-10. Arms: the session initialisers ``previous``,
``average``, ``similarity`` (one gradient round from the pilot model, scale 10) and
``continuous`` (previous plus distillation towards the last session's model). Full
mode: 5 seeds; quick mode: digits with logistic regression, 5 sessions of 4 rounds, one
cell, 2 seeds. Every round is evaluated, so the report reads the paper's metric, the
mean accuracy over the first 10 rounds after each switch.

Cost of the full mode, timed on this two-core machine: about 0.13 s a round, 80 runs x
300 rounds: about 0.6 h of wall time with ``--jobs 2`` (a third added for a busy
machine).

    python -m studies.warm_start [--quick] [--out DIR] [--jobs N]
"""

from __future__ import annotations

import simfl
from studies.common import (QUICK_DIFFERS, QUICK_SEEDS, Arm, Study, describe, image_task,
                            main_for, seeds)

NAME = "warm_start"
INITS = {
    "previous": {"kind": "previous"},
    "average": {"kind": "average"},
    "similarity": {"kind": "similarity", "gradient_rounds": 1, "scale": 10.0},
    "continuous": {"kind": "continuous"},
}
#: the paper's grid: labels shared by the two groups (0 or 0.2 of 10) x Dirichlet alpha
OVERLAPS = [0, 2]
DIRICHLET = [0.3, 0.7]
ROUNDS_PER_SESSION, SESSIONS = 50, 6
#: the paper's metric: mean accuracy over this many rounds after a switch
SWITCH_WINDOW = 10
EXPECTED_WALL_H = 0.6
DIFFERS = [
    "Fashion-MNIST instead of MNIST (the paper's MNIST and Fashion-MNIST runs share "
    "the MLP); the MLP's width (200) and the local lr (0.01) are simfl's choice",
    "two groups alternating (A, B, A, B, A, B) with 10 clients each; the paper's "
    "assignment of its 20 clients to sessions may differ",
    "one FL algorithm (FedAvg) instead of the paper's four",
]


def study(quick: bool = False, model: str | None = None, device: str = "cpu") -> Study:
    base = simfl.load_scenario("sessions")
    per_session, sessions = (4, 5) if quick else (ROUNDS_PER_SESSION, SESSIONS)
    common = {"population.sessions.rounds_per_session": per_session,
              "run.rounds": per_session * sessions, "run.eval_every_rounds": 1,
              **image_task(quick, model, device, {"kind": "mlp", "hidden": [200]})}
    if not quick:
        common.update({"task.n_clients": 20, "server.clients_per_round": 20,
                       "task.local_steps": 5, "task.batch_size": 128, "task.lr": 0.01,
                       "task.optimizer": {"kind": "sgd", "momentum": 0.9}})
    arms = [Arm(name, {**common, "population.sessions.init": init})
            for name, init in INITS.items()]
    grid = {} if quick else {"population.sessions.label_overlap": OVERLAPS,
                             "task.partition.alpha": DIRICHLET}
    return Study(NAME, base, arms, QUICK_SEEDS if quick else seeds(5),
                 "quick" if quick else "full", grid=grid,
                 notes={"rounds_per_session": per_session, "sessions": sessions,
                        "rounds": per_session * sessions, "switch_window": SWITCH_WINDOW,
                        "clients": 20 if not quick else 40, "momentum": 0.9,
                        **describe(common), "differs": QUICK_DIFFERS if quick else DIFFERS,
                        "expected_wall_h": None if quick else EXPECTED_WALL_H})


def main(argv=None) -> int:
    return main_for(NAME, study, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
