"""FedAR vs MIFA vs FedAvg when some clients are rarely online (MIFA's adversarial availability).

100 clients hold two label shards each of scikit-learn's digits (MIFA's 2-classes-per-
device split) and train multinomial logistic regression with weight decay 1e-3 for two
local epochs (batch 100, as MIFA's MNIST scripts) at a constant lr 0.1: FedAR's
schedule is not known (docs/algorithms.md §1.1), and MIFA's code decay eta_0 / (t + 1)
(``--set server.lr_schedule.kind=inverse_round``) leaves this task far from trained after
200 rounds (final accuracy with it: fedar 0.48, mifa 0.21, fedavg 0.28; constant: 0.93,
0.92, 0.88). Client i is online in a round with probability
p_i = 0.1 + 0.9 min(Y_i) / 9 (``mifa_adversarial``, p_min = 0.1): clients whose
smallest label is 0 are online one round in ten. Every online client trains
(``all_available``) and the server waits for all of them.

* ``fedar`` (this file): each client's latest update stands in while it is away,
  up-weighted by min((tau + 1)^0.5, 2) with its staleness tau (rho = 0.5, no cutoff).
* ``mifa``: the plain mean of every client's latest update (here from a zero table,
  ``init = "zeros"``, so training starts at once).
* ``fedavg``: the average of whoever is online, biased towards the frequent clients.

    simfl run fedar --out runs/fedar_fedar
    simfl run fedar --set server.algorithm.kind=mifa --set server.algorithm.init=zeros \\
        --out runs/fedar_mifa
    simfl run fedar --set server.algorithm.kind=fedavg --out runs/fedar_fedavg
    simfl plot runs/fedar_fedar runs/fedar_mifa runs/fedar_fedavg --x round --out fedar.png
"""

import simfl


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="fedar",
        seed=1,
        task=simfl.Task(dataset=simfl.Digits(), partition=simfl.Shards(per_client=2),
                        model=simfl.Logreg(), n_clients=100, batch_size=100, local_epochs=2,
                        lr=0.1, weight_decay=1e-3),
        population=simfl.Population(
            compute=simfl.Compute(median_samples_per_s=100.0, sigma=0.0),
            availability=simfl.MifaAdversarial(p_min=0.1)),
        network=simfl.Network(uplink=simfl.IdealChannel(), downlink=simfl.IdealChannel()),
        server=simfl.Server(algorithm=simfl.FedAR(rho=0.5), sampler=simfl.AllAvailable(),
                            clients_per_round=100, deadline_s=60.0),
        run=simfl.Run(rounds=200, eval_every_rounds=2),
    )
