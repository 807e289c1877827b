"""FedLaAvg under diurnal availability: FedAvg's bias and oscillation, and their cure.

Two parts in one campaign:

* ``example1``: the paper's Example 1, two noise-free clients with f_i(x) = (x - e_i)^2,
  e = (0, 1) (the ``quadratic`` data set), client 0 online for one round then client 1
  for three, periodically; one exact gradient step per round at lr gamma in {0.1, 0.05}.
  FedAvg converges at period boundaries to a biased point X(gamma) known in closed form,
  FedLaAvg to the optimum x* = 0.5. The runs are deterministic (one seed); the model is
  evaluated at every period boundary, and its test loss is the global objective, which
  the report compares with the closed forms' values.
* ``diurnal``: ``scenarios/diurnal.py`` (50 clients with one label shard each; the
  clients of classes 0-4 are online for 10 rounds, then those of 5-9; 5 clients a
  round): FedAvg with uniform sampling against FedLaAvg with its longest-absent sampler.
  The report measures the accuracy's swing within each day-night period late in the run
  and the mean accuracy there. Full mode: mnist5k (or ``$SIMFL_MNIST``) with logistic
  regression (``--model``), 200 rounds, 5 seeds; quick mode: digits, 40 rounds, 2 seeds.

    python -m studies.fedlaavg [--quick] [--out DIR] [--jobs N]
"""

from __future__ import annotations

import simfl
from studies.common import (FULL_SEEDS, QUICK_SEEDS, Arm, Study, describe, image_task,
                            main_for)

NAME = "fedlaavg"
T1, T2 = 1, 3
GAMMAS = [0.1, 0.05]


def example1_base() -> simfl.Scenario:
    """Example 1 on the simulator: the quadratic task under a scripted day/night pattern."""
    return simfl.Scenario(
        name="example1", seed=1,
        task=simfl.Task(dataset=simfl.Quadratic(targets=(0.0, 1.0), samples_per_client=5),
                        partition=simfl.Native(), model=simfl.Logreg(), n_clients=2,
                        batch_size=8, local_steps=1, lr=0.1),
        population=simfl.Population(availability=simfl.ScriptedAvailability(
            online=((0,),) * T1 + ((1,),) * T2)),
        server=simfl.Server(algorithm=simfl.FedAvg(weighting="uniform"),
                            sampler=simfl.AllAvailable(), clients_per_round=2,
                            deadline_s=1e6),
        run=simfl.Run(rounds=400, eval_every_rounds=T1 + T2))


def study(quick: bool = False, model: str | None = None, device: str = "cpu") -> Study:
    diurnal = simfl.load_scenario("diurnal")
    rounds = 40 if quick else 200
    common = {"run.rounds": rounds, "run.eval_every_rounds": 1,
              **image_task(quick, model, device)}
    # Example 1 runs are whole scenarios of their own: every field is set by the arm
    ex1 = example1_base().to_dict()
    ex1_rounds = 200 if quick else 400
    arms = [Arm(f"example1-{name}", {"task": ex1["task"], "population": ex1["population"],
                                     "network": ex1["network"], "server": ex1["server"],
                                     "run": {**ex1["run"], "rounds": ex1_rounds},
                                     "server.algorithm": algorithm},
                grid={"task.lr": GAMMAS}, seeds=(1,))
            for name, algorithm in (("fedavg", {"kind": "fedavg", "weighting": "uniform"}),
                                    ("fedlaavg", {"kind": "fedlaavg"}))]
    arms += [Arm("diurnal-fedavg", {**common, "server.algorithm": {"kind": "fedavg"},
                                    "server.sampler": {"kind": "uniform"}}),
             Arm("diurnal-fedlaavg", {**common, "server.algorithm": {"kind": "fedlaavg"},
                                      "server.sampler": {"kind": "longest_absent"}})]
    return Study(NAME, diurnal, arms, QUICK_SEEDS if quick else FULL_SEEDS,
                 "quick" if quick else "full",
                 notes={"rounds": rounds, "example1_rounds": ex1_rounds, "t1": T1, "t2": T2,
                        "period_rounds": 20, **describe(common)})


def main(argv=None) -> int:
    return main_for(NAME, study, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
