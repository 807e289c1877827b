"""Risk-aware FL (CVaR) under the random-access relay: is the rarely relayed class learned?

Two settings, each with the risk level alpha in {1, 0.5, 0.1} (alpha = 1 is the
risk-neutral objective):

* ``cvar3``: the paper's three-user example (``scenarios/cvar.py``): three users with
  one class each of a three-blob set; every round the relay forwards exactly one upload,
  user i's with probability p = (0.5, 0.4, 0.1).
* ``cvar30``: thirty users, ten per class (one label shard each, which holds a single
  class up to a shard that straddles two); the relay again forwards one upload a round,
  drawn with weight 0.5, 0.4 or 0.1 by the class the user holds: the three-user example
  with ten users per class. The partition depends on the seed, so each seed's weights
  are set from its own partition (rebuilt before the runs).

Per-class test accuracy is recorded; the report scores each run's *rare class*, the one
with the smallest total relay weight (class 2 in ``cvar30``; the rare user's class in
``cvar3``). Full mode: 400 rounds, 5 seeds; quick mode: 40 rounds, 2 seeds.

    python -m studies.cvar [--quick] [--out DIR] [--jobs N]
"""

from __future__ import annotations

import numpy as np

import simfl
from studies.common import (FULL_SEEDS, QUICK_SEEDS, Arm, Study, main_for,
                            write_client_labels)

NAME = "cvar"
ALPHAS = [1.0, 0.5, 0.1]
#: relay weight of each class (cvar30) and of each user (cvar3)
WEIGHTS = (0.5, 0.4, 0.1)
N_USERS = 30


def weights_by_class(base: simfl.Scenario, seed: int) -> tuple[float, ...]:
    """The cvar30 relay weights of seed ``seed``: each user gets its class's weight."""
    from simfl.experiment.build import build_context
    from simfl.train.probe import label_histograms

    scenario = simfl.apply_overrides(base, [("seed", seed)])
    counts = label_histograms(build_context(scenario).data)
    return tuple(WEIGHTS[int(k)] for k in np.argmax(counts, axis=1))


def study(quick: bool = False, model: str | None = None, device: str = "cpu") -> Study:
    """The campaign; ``model`` is not used (this study has its own model)."""
    base = simfl.load_scenario("cvar")
    seeds = QUICK_SEEDS if quick else FULL_SEEDS
    rounds = 40 if quick else 400
    common = {"run.per_class_accuracy": True, "run.rounds": rounds, "run.eval_every_rounds": 5,
              **({"run.device": device} if device != "cpu" else {})}
    arms = [Arm(f"cvar3-a{alpha:g}", {**common, "server.algorithm.alpha": alpha})
            for alpha in ALPHAS]
    thirty = simfl.apply_overrides(base, [("task.n_clients", N_USERS),
                                          ("server.clients_per_round", N_USERS)])
    for seed in seeds:
        probs = weights_by_class(thirty, seed)
        for alpha in ALPHAS:
            arms.append(Arm(f"cvar30-a{alpha:g}", {
                **common, "task.n_clients": N_USERS, "server.clients_per_round": N_USERS,
                "network.mac.probs": list(probs), "network.mac.capacity": 1,
                "server.algorithm.alpha": alpha}, seeds=(seed,)))
    return Study(NAME, base, arms, seeds, "quick" if quick else "full",
                 notes={"rounds": rounds, "data": "blobs (3 classes, 2 features)",
                        "model": "mlp 2-64-3", "alphas": ALPHAS},
                 after=write_client_labels)


def main(argv=None) -> int:
    return main_for(NAME, study, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
