"""Quickstart: FedAvg on handwritten digits over a lossy uplink with a round deadline.

50 phones hold IID shares of scikit-learn's digits; each round the server invites 10
online ones (each is online with probability 0.9), waits at most 6 s, and averages
what arrives. Training speeds are lognormal, so slow phones miss the deadline (late);
the uplink loses 20 % of attempts and retries once, so a few uploads are erased.
"""

import simfl


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="quickstart",
        seed=1,
        task=simfl.Task(dataset=simfl.Digits(), partition=simfl.Iid(), model=simfl.Mlp(hidden=(64,)),
                        n_clients=50, batch_size=16, local_epochs=2, lr=0.1),
        population=simfl.Population(
            compute=simfl.Compute(median_samples_per_s=25.0, sigma=0.6),
            availability=simfl.Bernoulli(p=0.9)),
        network=simfl.Network(
            uplink=simfl.ErasureChannel(p=0.2, rate=simfl.FixedRate(rate_bps=1e6)),
            downlink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=10e6)),
            arq_max_attempts=2),
        server=simfl.Server(algorithm=simfl.FedAvg(), sampler=simfl.Uniform(),
                            clients_per_round=10, deadline_s=6.0),
        run=simfl.Run(rounds=40, eval_every_rounds=1, target_accuracy=0.85),
    )
