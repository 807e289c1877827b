"""Warm starts for client groups that take turns (sessions): which model should a
returning session start from?

Setting (``scenarios/sessions.py``): 40 clients in two groups A and B whose label sets
overlap in two labels; sessions alternate A, B, A, B, ... and every client of the
session is invited each round; accuracy is measured on the current session's labels.
Session 0 is the pilot. Arms: the session initialisers ``previous``, ``average``,
``similarity`` (one gradient round from the pilot model, scale 10) and ``continuous``
(previous plus distillation towards the last session's model). Full mode: mnist5k (or
MNIST's IDX files from ``$SIMFL_MNIST``) with logistic regression (``--model``), 7
sessions of 15 rounds, 5 seeds; quick mode: digits, 5 sessions of 4 rounds, 2 seeds. Every round is evaluated, so the report reads the accuracy 1 and 3 rounds
after each switch and at each session's end.

    python -m studies.warm_start [--quick] [--out DIR] [--jobs N]
"""

from __future__ import annotations

import simfl
from studies.common import (FULL_SEEDS, QUICK_SEEDS, Arm, Study, describe, image_task,
                            main_for)

NAME = "warm_start"
INITS = {
    "previous": {"kind": "previous"},
    "average": {"kind": "average"},
    "similarity": {"kind": "similarity", "gradient_rounds": 1, "scale": 10.0},
    "continuous": {"kind": "continuous"},
}


def study(quick: bool = False, model: str | None = None, device: str = "cpu") -> Study:
    base = simfl.load_scenario("sessions")
    per_session, sessions = (4, 5) if quick else (15, 7)
    common = {"population.sessions.rounds_per_session": per_session,
              "run.rounds": per_session * sessions, "run.eval_every_rounds": 1,
              **image_task(quick, model, device)}
    arms = [Arm(name, {**common, "population.sessions.init": init})
            for name, init in INITS.items()]
    return Study(NAME, base, arms, QUICK_SEEDS if quick else FULL_SEEDS,
                 "quick" if quick else "full",
                 notes={"rounds_per_session": per_session, "sessions": sessions,
                        "rounds": per_session * sessions, **describe(common)})


def main(argv=None) -> int:
    return main_for(NAME, study, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
