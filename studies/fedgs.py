"""FedGS graph-based client sampling under the seven availability modes, in the paper's cells.

Synthetic part (``scenarios/fedgs.py``, the FedGS synthetic experiment as the paper states
it): 30 clients holding Synthetic(0.5, 0.5) data, a linear model, 6 clients per round,
E = 10 local steps of batch 10 at lr 0.1 decayed by 0.998 per round, 1,000 rounds, under
the five modes the paper runs on this data at its beta (ideal; log-normal 0.5, sinusoidal
log-normal 0.5, less data first 0.7, more data first 0.7). FedGS's 3DG is the paper's
oracle graph: it links clients whose optimal local models (W_k, b_k) are alike
(``server.sampler.feature = optimum``), with epsilon = 0.1.

Fashion-MNIST part: the larger-labels-first and label-cycle modes, which the paper runs
on Fashion-MNIST only, at its beta = 0.9: 100 clients of two label shards each (600
images), 20 clients per round, K = 10 local steps of batch 64 at lr 0.1 decayed by 0.998,
the oracle graph of the clients' label histograms (epsilon = 0.1), and logistic
regression in place of the paper's CNN (the CNN's campaign is days of CPU).

Arms (each in both parts): the samplers ``uniform``, ``md`` (with multiplicity
weighting), ``power_of_choice`` and ``fedgs`` with alpha in {0, 0.5, 1, 2, 5}, and the
``fedprox`` aggregator with uniform sampling. A round with nobody online is drawn
again. Every run logs its events, so the report counts how often each client was
invited (the sampling-count variance of the paper's table) next to the best test loss.
Full mode: 10 seeds; quick mode: 20 rounds, 2 seeds, all seven modes on the synthetic
data with the repository's beta, batch 64 and the functional-similarity graph.

Cost: run with one BLAS thread per run (``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1``; more
threads only contend on these small products). Timed with ``--jobs 2`` on this two-core
machine while it was shared (load about 15): about 55 s of wall time a synthetic run of
1,000 rounds, 70 s with FedGS (its graph's local fits: about 1 CPU-second). The full
mode's 0.9 h with ``--jobs 2`` is an estimate for an unshared machine, not a timing.

    python -m studies.fedgs [--quick] [--out DIR] [--jobs N] [--seeds S..] [--rounds R]
"""

from __future__ import annotations

import simfl
from studies.common import (QUICK_DIFFERS, QUICK_SEEDS, Arm, Study, main_for, refuse_model,
                            seeds)
from studies.data import fashion_mnist

NAME = "fedgs"
#: the study trains its own model: ``--model`` is refused
OWN_MODEL = True
#: the modes the paper runs on Synthetic(0.5, 0.5), and on Fashion-MNIST only
SYNTHETIC_MODES = ["ideal", "more_data_first", "less_data_first", "log_normal",
                   "sin_log_normal"]
FASHION_MODES = ["y_max_first", "y_cycle"]
#: all seven, in the paper's order (the quick mode runs them all on the synthetic data)
MODES = ["ideal", "more_data_first", "less_data_first", "y_max_first", "y_cycle",
         "log_normal", "sin_log_normal"]
ALPHAS = [0.0, 0.5, 1.0, 2.0, 5.0]
#: the paper's availability parameter beta per mode (YMF and YC: its Fashion-MNIST runs)
PAPER_BETA = {"log_normal": 0.5, "sin_log_normal": 0.5, "less_data_first": 0.7,
              "more_data_first": 0.7, "y_max_first": 0.9, "y_cycle": 0.9}
#: the paper's graph threshold on normalised similarities (the code's default is 0.01)
PAPER_EPSILON = 0.1
ROUNDS = 1000
#: rounds of a Fashion-MNIST run (the paper's number is not used: see DIFFERS)
FASHION_ROUNDS = 100
EXPECTED_WALL_H = 0.9
DIFFERS = [
    "Fashion-MNIST part: logistic regression 784 -> 10 instead of the paper's CNN, and "
    f"{FASHION_ROUNDS} rounds, to fit a CPU budget",
    "oracle graph of the synthetic part: each client's ridge-penalised (l2 = 1e-2) "
    "optimum of local logistic regression, since the clients' data are separable and the "
    "unpenalised optimum does not exist",
    "graph edge length scale sigma = 0.1 (the FedGS code's default)",
    "FedGS's optimisation is solved by simfl's exact enumeration / local search instead "
    "of Gurobi",
]


def samplers() -> list[tuple[str, dict]]:
    """Each arm's name and its sampler and algorithm overrides (FedGS's graph added later)."""
    fedavg = {"kind": "fedavg"}
    out = [("uniform", {"server.sampler": {"kind": "uniform"}, "server.algorithm": fedavg}),
           ("md", {"server.sampler": {"kind": "md"},
                   "server.algorithm": {"kind": "fedavg", "weighting": "multiplicity"}}),
           ("power_of_choice", {"server.sampler": {"kind": "power_of_choice"},
                                "server.algorithm": fedavg})]
    out += [(f"fedgs_a{alpha:g}", {"server.algorithm": fedavg,
                                   "server.sampler": {"kind": "fedgs", "alpha": alpha,
                                                      "feature": "logit"}})
            for alpha in ALPHAS]
    out.append(("fedprox", {"server.sampler": {"kind": "uniform"},
                            "server.algorithm": {"kind": "fedprox"}}))
    return out


def arms(common: dict, modes: list[dict], feature: str | None = None) -> list[Arm]:
    """Every sampler in one setting (``common``) under ``modes``; ``feature`` and the
    paper's epsilon for FedGS's graph when given."""
    out = []
    for name, chosen in samplers():
        overrides = {**common, **chosen}
        if feature is not None and name.startswith("fedgs"):
            overrides["server.sampler"] = {**chosen["server.sampler"], "feature": feature,
                                           "epsilon": PAPER_EPSILON}
        out.append(Arm(name, overrides, grid={"population.availability": modes}))
    return out


def availability(mode: str, beta: bool) -> dict:
    """One availability mode, redrawn until someone is online (``beta``: the paper's)."""
    if mode == "ideal":
        return {"kind": mode}
    return {"kind": mode, "redraw_until_nonempty": True,
            **({"beta": PAPER_BETA[mode]} if beta else {})}


def fashion_setting(common: dict) -> dict:
    """The Fashion-MNIST part's overrides of the synthetic scenario."""
    return {**common, "task.dataset": fashion_mnist(), "task.partition": {"kind": "shards"},
            "task.model": "logreg", "task.n_clients": 100, "task.batch_size": 64,
            "server.clients_per_round": 20, "server.deadline_s": 1e6,
            "run.rounds": FASHION_ROUNDS}


def study(quick: bool = False, model: str | None = None, device: str = "cpu") -> Study:
    """The campaign; ``model`` must be None (this study has its own model)."""
    refuse_model(NAME, model, "logreg")
    base = simfl.load_scenario("fedgs")
    common = {"run.eval_every_rounds": 5, "run.events": True,
              **({"run.device": device} if device != "cpu" else {})}
    if quick:
        out = arms({**common, "run.rounds": 20}, [availability(m, False) for m in MODES])
        return Study(NAME, base, out, QUICK_SEEDS, "quick",
                     notes={"rounds": 20, "clients": 30, "per_round": 6, "batch": 64,
                            "local_steps": 10, "graph": "logit", "beta": "repository",
                            "data": "synthetic(0.5, 0.5)", "model": "logreg 60-10",
                            "differs": QUICK_DIFFERS})
    synthetic = {**common, "run.rounds": ROUNDS, "task.batch_size": 10}
    out = arms(synthetic, [availability(m, True) for m in SYNTHETIC_MODES], "optimum")
    out += arms(fashion_setting(common), [availability(m, True) for m in FASHION_MODES],
                "oracle")
    return Study(NAME, base, out, seeds(10), "full",
                 notes={"rounds": ROUNDS, "clients": 30, "per_round": 6, "batch": 10,
                        "local_steps": 10, "graph": "optimum (synthetic), label histograms "
                        "(fashion-mnist)", "epsilon": PAPER_EPSILON, "beta": PAPER_BETA,
                        "data": "synthetic(0.5, 0.5); fashion-mnist (YMF, YC)",
                        "model": "logreg 60-10; logreg 784-10", "differs": DIFFERS,
                        "fashion_rounds": FASHION_ROUNDS, "fashion_clients": 100,
                        "fashion_per_round": 20, "expected_wall_h": EXPECTED_WALL_H})


def main(argv=None) -> int:
    return main_for(NAME, study, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
