"""FedGS graph-based client sampling under the seven availability modes.

Setting (``scenarios/fedgs.py``, the FedGS synthetic experiment as the paper states it):
30 clients holding Synthetic(0.5, 0.5) data, a linear model, 6 clients per round, E = 10
local steps of batch 10 at lr 0.1 decayed by 0.998 per round, 1,000 rounds, FedGS on
the oracle 3DG (the clients' label histograms). Availability: the seven FedGS modes
(ideal, more data first, less data first, larger labels first, label cycle, log-normal,
sinusoidal log-normal) at the paper's beta (LN 0.5, SLN 0.5, LDF 0.7, MDF 0.7; YMF and
YC at the FedGS repository's 0.1 and 0.5), a round with nobody online drawn again.
Arms: the samplers ``uniform``, ``md`` (with multiplicity weighting),
``power_of_choice`` and ``fedgs`` with alpha in {0, 0.5, 1, 2, 5}, and the ``fedprox``
aggregator with uniform sampling. Every run logs its events, so the report counts how
often each client was invited (the sampling-count variance of the paper's table) next
to the best test loss. Full mode: 10 seeds; quick mode: 20 rounds, 2 seeds, the
repository's beta and batch 64.

Cost of the full mode, timed on this two-core machine: 2-10 ms a round (the FedGS sampler
in the ideal mode is the slowest) plus about 1.5 s to set a run up, 630 runs x 1,000
rounds: about 0.9 h of wall time with ``--jobs 2`` (a third added for a busy machine).

    python -m studies.fedgs [--quick] [--out DIR] [--jobs N]
"""

from __future__ import annotations

from dataclasses import replace

import simfl
from studies.common import (QUICK_DIFFERS, QUICK_SEEDS, Arm, Study, main_for, refuse_model,
                            seeds)

NAME = "fedgs"
#: the study trains its own model: ``--model`` is refused
OWN_MODEL = True
MODES = ["ideal", "more_data_first", "less_data_first", "y_max_first", "y_cycle",
         "log_normal", "sin_log_normal"]
ALPHAS = [0.0, 0.5, 1.0, 2.0, 5.0]
#: the paper's availability parameter beta per mode (YMF and YC: the repository's)
PAPER_BETA = {"log_normal": 0.5, "sin_log_normal": 0.5, "less_data_first": 0.7,
              "more_data_first": 0.7, "y_max_first": 0.1, "y_cycle": 0.5}
ROUNDS = 1000
EXPECTED_WALL_H = 0.9
DIFFERS = [
    "beta of YMF (0.1) and YC (0.5) from the FedGS repository: the paper states beta for "
    "LN, SLN, LDF and MDF only",
    "FedGS's optimisation is solved by simfl's exact enumeration / local search instead "
    "of Gurobi",
]


def arms(common: dict) -> list[Arm]:
    fedavg = {"kind": "fedavg"}
    out = [Arm("uniform", {**common, "server.sampler": {"kind": "uniform"},
                           "server.algorithm": fedavg}),
           Arm("md", {**common, "server.sampler": {"kind": "md"},
                      "server.algorithm": {"kind": "fedavg", "weighting": "multiplicity"}}),
           Arm("power_of_choice", {**common, "server.sampler": {"kind": "power_of_choice"},
                                   "server.algorithm": fedavg})]
    out += [Arm(f"fedgs_a{alpha:g}", {**common, "server.algorithm": fedavg,
                                       "server.sampler": {"kind": "fedgs", "alpha": alpha,
                                                          "feature": "logit"}})
            for alpha in ALPHAS]
    out.append(Arm("fedprox", {**common, "server.sampler": {"kind": "uniform"},
                               "server.algorithm": {"kind": "fedprox"}}))
    return out


def study(quick: bool = False, model: str | None = None, device: str = "cpu") -> Study:
    """The campaign; ``model`` must be None (this study has its own model)."""
    refuse_model(NAME, model, "logreg 60-10")
    base = simfl.load_scenario("fedgs")
    rounds = 20 if quick else ROUNDS
    common = {"run.rounds": rounds, "run.eval_every_rounds": 5, "run.events": True,
              **({"run.device": device} if device != "cpu" else {})}
    if not quick:
        common["task.batch_size"] = 10
    modes = [{"kind": mode} if mode == "ideal" else
             {"kind": mode, "redraw_until_nonempty": True,
              **({} if quick else {"beta": PAPER_BETA[mode]})} for mode in MODES]
    out = arms(common)
    if not quick:  # the oracle 3DG of the paper's synthetic runs
        out = [replace(a, set={**a.set, "server.sampler.feature": "oracle"})
               if a.name.startswith("fedgs") else a for a in out]
    return Study(NAME, base, out, QUICK_SEEDS if quick else seeds(10),
                 "quick" if quick else "full", grid={"population.availability": modes},
                 notes={"rounds": rounds, "clients": 30, "per_round": 6,
                        "batch": 64 if quick else 10, "local_steps": 10,
                        "graph": "logit" if quick else "oracle",
                        "beta": "repository" if quick else PAPER_BETA,
                        "data": "synthetic(0.5, 0.5)", "model": "logreg 60-10",
                        "differs": QUICK_DIFFERS if quick else DIFFERS,
                        "expected_wall_h": None if quick else EXPECTED_WALL_H})


def main(argv=None) -> int:
    return main_for(NAME, study, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
