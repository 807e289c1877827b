"""Day/night availability (FedLaAvg's ``number`` strategy): FedAvg oscillates, FedLaAvg does not.

50 clients each hold one shard of scikit-learn's digits sorted by label, so nearly every
client sees a single class. Clients of classes 0-4 are online for 10 rounds ("day"),
then those of classes 5-9 for 10 rounds ("night"), and so on. Each round the server
takes 5 online clients. FedAvg follows whichever half is online and forgets the other
(its test accuracy swings with the period); FedLaAvg steps along the mean of every
client's latest update, so the absent half still counts and the curve stays smooth.

    simfl run diurnal --out runs/diurnal_fedavg
    simfl run diurnal --set server.algorithm.kind=fedlaavg \\
        --set server.sampler.kind=longest_absent --out runs/diurnal_fedlaavg
    simfl plot runs/diurnal_fedavg runs/diurnal_fedlaavg --x round --out diurnal.png
"""

import simfl


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="diurnal",
        seed=1,
        task=simfl.Task(dataset=simfl.Digits(), partition=simfl.Shards(per_client=1),
                        model=simfl.Logreg(), n_clients=50, batch_size=10, local_steps=10,
                        lr=0.05),
        population=simfl.Population(
            compute=simfl.Compute(median_samples_per_s=100.0, sigma=0.0),
            availability=simfl.Diurnal(strategy="number", period_rounds=10, alpha=0.5)),
        network=simfl.Network(uplink=simfl.IdealChannel(), downlink=simfl.IdealChannel()),
        server=simfl.Server(algorithm=simfl.FedAvg(), sampler=simfl.Uniform(),
                            clients_per_round=5, deadline_s=60.0),
        run=simfl.Run(rounds=200, eval_every_rounds=1),
    )
