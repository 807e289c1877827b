"""FEMNIST writers as clients under day/night availability: a CNN on natural non-IID data.

Each LEAF FEMNIST writer is one client and keeps its own images (partition ``native``:
the writer's handwriting and class mix, the natural non-IID split), and the clients
train the FedAvg paper's CNN. Phones are online with a daily sinusoidal rate, four
times higher at the peak (3 a.m., on the charger) than at the trough, 0.5 on average;
each round invites 10 online writers and waits at most 10 minutes for slow phones
(about one image per second). The question: how does a day/night swing in who can be
reached shape the time-to-accuracy curve, against flat availability at the same mean?

The data are LEAF's FEMNIST JSON files (LEAF's ``data/femnist/preprocess.sh`` writes
``data/train`` and ``data/test``; e.g. ``-s niid --sf 0.05 -k 0 -t sample`` gives a few
hundred writers). The first 100 writers of the train files are the clients, and their
samples in the test files the test set. Give the folder in the environment variable
SIMFL_FEMNIST or with ``--set task.dataset.path=...``:

    SIMFL_FEMNIST=~/leaf/data/femnist/data simfl run femnist --out runs/femnist
    SIMFL_FEMNIST=~/leaf/data/femnist/data simfl run femnist --out runs/femnist_flat \\
        --set population.availability=bernoulli --set population.availability.p=0.5
    simfl plot runs/femnist runs/femnist_flat --out femnist.png

Without the files, the embedded MNIST sample stands in (no writers there: each client
gets two label shards instead):

    simfl run femnist --set task.dataset=mnist5k
"""

import os

import simfl


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="femnist",
        seed=1,
        task=simfl.Task(
            dataset=simfl.Leaf(path=os.environ.get("SIMFL_FEMNIST", "data/femnist/data"),
                               benchmark="femnist"),
            partition=simfl.Native(fallback=simfl.Shards(per_client=2)),
            model=simfl.Cnn(), n_clients=100, batch_size=10, local_epochs=1, lr=0.05),
        population=simfl.Population(
            compute=simfl.Compute(median_samples_per_s=1.0, sigma=0.5),
            availability=simfl.Diurnal(strategy="sine", mean_p=0.5, peak_trough_ratio=4.0,
                                       period_s=86400.0, peak_s=3 * 3600.0)),
        network=simfl.Network(
            uplink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=2e6)),
            downlink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=10e6))),
        server=simfl.Server(algorithm=simfl.FedAvg(), sampler=simfl.Uniform(),
                            clients_per_round=10, deadline_s=600.0),
        run=simfl.Run(rounds=300, eval_every_rounds=5),
    )
