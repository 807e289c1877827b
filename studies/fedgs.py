"""FedGS graph-based client sampling under the seven availability modes.

Setting (``scenarios/fedgs.py``, the FedGS synthetic experiment): 30 clients holding
Synthetic(0.5, 0.5) data, a linear model, 6 clients per round, 10 local steps at lr 0.1
decayed by 0.998 per round. Availability: the seven FedGS modes (ideal, more data first,
less data first, larger labels first, label cycle, log-normal, sinusoidal log-normal)
with the FedGS repository's beta values (``variant = "fedgs"``), a round with nobody
online drawn again. Arms: the samplers ``uniform``, ``md`` (with multiplicity
weighting), ``power_of_choice`` and ``fedgs`` with alpha in {0, 0.5, 1, 2, 5}, and the
``fedprox`` aggregator with uniform sampling. Every run logs its events, so the report
counts how often each client was invited (the sampling-count variance of the paper's
table) next to the best test loss. Full mode: 300 rounds, 5 seeds; quick mode: 20
rounds, 2 seeds.

    python -m studies.fedgs [--quick] [--out DIR] [--jobs N]
"""

from __future__ import annotations

import simfl
from studies.common import FULL_SEEDS, QUICK_SEEDS, Arm, Study, main_for

NAME = "fedgs"
MODES = ["ideal", "more_data_first", "less_data_first", "y_max_first", "y_cycle",
         "log_normal", "sin_log_normal"]
ALPHAS = [0.0, 0.5, 1.0, 2.0, 5.0]


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
    """The campaign; ``model`` is not used (this study has its own model)."""
    base = simfl.load_scenario("fedgs")
    rounds = 20 if quick else 300
    common = {"run.rounds": rounds, "run.eval_every_rounds": 5, "run.events": True,
              **({"run.device": device} if device != "cpu" else {})}
    modes = [{"kind": mode, "redraw_until_nonempty": True} if mode != "ideal"
             else {"kind": mode} for mode in MODES]
    return Study(NAME, base, arms(common), QUICK_SEEDS if quick else FULL_SEEDS,
                 "quick" if quick else "full", grid={"population.availability": modes},
                 notes={"rounds": rounds, "clients": 30, "per_round": 6,
                        "data": "synthetic(0.5, 0.5)", "model": "logreg 60-10"})


def main(argv=None) -> int:
    return main_for(NAME, study, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
