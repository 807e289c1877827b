"""FedAR (availability-aware aggregation) against the memory-based and sampling baselines.

Setting (the FedAR paper's MNIST experiment, in shape): 100 clients with two label
shards each, p_i ~ U(p_min, 1) drawn once per client (``bernoulli`` with ``p_min``),
p_min in {0.02, 0.1, 0.5}; every online client trains (``all_available``) and the server
waits for all of them. Arms: FedAR (rho = 0.5, cap 2), MIFA (from a zero table), FedVARP,
FedAvg-IS (1/p_i weights), FedAvg(S) and SCAFFOLD. Full mode: mnist5k (or MNIST's IDX
files from ``$SIMFL_MNIST``) with multinomial logistic regression (MIFA's MNIST model;
``--model cnn`` for the CNN), 200 rounds, 5 seeds; quick mode: scikit-learn's digits,
12 rounds, 2 seeds.

Per-class test accuracy is recorded (``run.per_class_accuracy``) and each run's
per-client label counts are written next to it (``client_labels.json``), so the report
can give per-client accuracy (mean, variance, worst and best 10 %) as in the paper's
table.

    python -m studies.fedar [--quick] [--out DIR] [--jobs N]
"""

from __future__ import annotations

from studies.common import (FULL_SEEDS, QUICK_SEEDS, Arm, Study, main_for, describe,
                            image_task, write_client_labels)

import simfl

NAME = "fedar"
P_MIN = [0.02, 0.1, 0.5]
ARMS = {
    "fedar": {"kind": "fedar", "rho": 0.5},
    "mifa": {"kind": "mifa", "init": "zeros"},
    "fedvarp": {"kind": "fedvarp"},
    "fedavg_is": {"kind": "fedavg_is"},
    "fedavg_s": {"kind": "fedavg_s"},
    "scaffold": {"kind": "scaffold"},
}


def study(quick: bool = False, model: str | None = None, device: str = "cpu") -> Study:
    base = simfl.load_scenario("fedar")
    common = {"population.availability": {"kind": "bernoulli", "p_min": 0.1},
              "run.per_class_accuracy": True,
              "run.rounds": 12 if quick else 200,
              "run.eval_every_rounds": 2, **image_task(quick, model, device)}
    arms = [Arm(name, {**common, "server.algorithm": algorithm})
            for name, algorithm in ARMS.items()]
    return Study(NAME, base, arms, QUICK_SEEDS if quick else FULL_SEEDS,
                 "quick" if quick else "full",
                 grid={"population.availability.p_min": P_MIN},
                 notes={"clients": 100, "rounds": common["run.rounds"], **describe(common)},
                 after=write_client_labels)


def main(argv=None) -> int:
    return main_for(NAME, study, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
