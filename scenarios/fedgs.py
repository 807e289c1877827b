"""FedGS: graph-based client sampling on Synthetic(0.5, 0.5) under sinusoidal availability.

The FedGS reproduction target of docs/algorithms.md §4.4-§4.5 with the code's defaults: 30
clients holding FedProx Synthetic(0.5, 0.5) data (concept and feature skew, log-normal
sizes, each client's own 10 % held out for the test set), a linear 60 -> 10 model,
proportion 0.2 (6 clients per round), K = 10 local SGD steps of batch 64 at lr 0.1
decayed by 0.998 per round (``server.lr_schedule``: exponential, gamma = 0.998, the
code's ``lr_decay``), data-weighted averaging; 150 rounds to stay near a minute on a laptop (the FedGS
synthetic runs use 300: ``--set run.rounds=300``). Availability is FedGS's SinLogNormal-0.1 mode,
redrawn until someone is online. The sampler is FedGS with alpha = 0.1 on the
functional-similarity graph (mean logits on a Gaussian noise batch after one local
training of every client before round 0). Compare on the same clock:

    simfl run fedgs --set server.sampler.kind=uniform
    simfl run fedgs --set server.sampler.kind=power_of_choice
    simfl run fedgs --set server.sampler.kind=md --set server.algorithm.weighting=multiplicity

Not reproduced: FedGS's Gurobi solver (exact enumeration / local search here,
docs/algorithms.md §4.2).
"""

import simfl


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="fedgs",
        seed=1,
        task=simfl.Task(dataset=simfl.Synthetic(alpha=0.5, beta=0.5), partition=simfl.Native(),
                        model=simfl.Logreg(), n_clients=30, batch_size=64, local_steps=10,
                        lr=0.1, test_fraction=0.1),
        population=simfl.Population(
            compute=simfl.Compute(median_samples_per_s=200.0, sigma=0.5),
            availability=simfl.SinLogNormal(redraw_until_nonempty=True)),
        network=simfl.Network(
            uplink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=1e6)),
            downlink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=10e6))),
        server=simfl.Server(algorithm=simfl.FedAvg(),
                            sampler=simfl.FedGS(alpha=0.1, feature="logit"),
                            clients_per_round=6, deadline_s=30.0,
                            lr_schedule=simfl.ExponentialLr(gamma=0.998)),
        run=simfl.Run(rounds=150, eval_every_rounds=5),
    )
