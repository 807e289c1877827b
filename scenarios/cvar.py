"""Risk-aware FL (CVaR) under the random-access relay: does the rare user's class get learned?

Three users each hold one class of a three-blob data set (``shards`` with one shard per
user). Every round all three train-ready users start an upload, and the relay
(``network.mac.kind = "relay"``, policy ``capacity`` with capacity 1) lets exactly one
through, user i with probability p = (0.5, 0.4, 0.1): the Random Access Model of the
CVaR paper's three-user example (docs/algorithms.md §2). Only the relayed user's update is
trained, and the server adopts its pair (model, t). The server never sees p.

The example's settings: a 2-64-3 ReLU network, risk level alpha = 0.1, lam = 0.1 (the
code's ``gamma``), batch 100, t0 = 0. Scaled down to run in about a minute: 400 rounds of
one local epoch with step sizes 0.02 (model) and 0.02 (t), instead of 4000 rounds of 10
epochs at 1e-3. The test set is balanced over the classes, so the rare user's class is a
third of the test accuracy. Compare the risk-neutral objective (alpha = 1, FedAvg-like):

    simfl run cvar --out runs/cvar_a0.1
    simfl run cvar --set server.algorithm.alpha=1.0 --out runs/cvar_a1
    simfl plot runs/cvar_a0.1 runs/cvar_a1 --x round --out cvar.png
"""

import simfl


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="cvar",
        seed=11,
        task=simfl.Task(dataset=simfl.Blobs(n_samples=3000, n_features=2, centers=3,
                                            cluster_std=2.0),
                        partition=simfl.Shards(per_client=1), model=simfl.Mlp(hidden=(64,)),
                        n_clients=3, batch_size=100, local_epochs=1, lr=0.02),
        population=simfl.Population(compute=simfl.Compute(median_samples_per_s=1000.0, sigma=0.0)),
        network=simfl.Network(uplink=simfl.IdealChannel(), downlink=simfl.IdealChannel(),
                              mac=simfl.RelayMac(policy="capacity", probs=(0.5, 0.4, 0.1),
                                                 capacity=1)),
        server=simfl.Server(algorithm=simfl.CVaR(alpha=0.1, lam=0.1, lr_t=0.02),
                            sampler=simfl.AllAvailable(), clients_per_round=3, deadline_s=60.0),
        run=simfl.Run(rounds=400, eval_every_rounds=5),
    )
