"""CIFAR-10 with skewed labels over a lossy uplink: what erasures cost a CNN.

100 clients hold Dirichlet(0.3) label mixes of CIFAR-10's 50,000 training images, so
most see a few classes well and the rest barely, and train the FedAvg paper's CNN (for
32x32 colour images). Each round 10 online clients are invited; their uploads cross an
uplink that erases 30 % of the attempts with no retransmission, so about 3 of the 10
updates are lost at random each round. The question: how much later does the CNN reach
a given accuracy when a third of the updates vanish, and does a retry
(``network.arq_max_attempts=2``) buy that back for the extra airtime?

The data are the binary version of CIFAR-10 (``cifar-10-binary.tar.gz``, unpacked to
``cifar-10-batches-bin``); the pickled "python version" is refused. ``test_batch.bin`` is
the test set. Give the folder in the environment variable SIMFL_CIFAR10 or with
``--set task.dataset.path=...``:

    SIMFL_CIFAR10=~/data/cifar-10-batches-bin simfl run cifar10 --out runs/cifar_lossy
    SIMFL_CIFAR10=~/data/cifar-10-batches-bin simfl run cifar10 --out runs/cifar_ideal \\
        --set network.uplink=ideal
    SIMFL_CIFAR10=~/data/cifar-10-batches-bin simfl run cifar10 --out runs/cifar_retry \\
        --set network.arq_max_attempts=2
    simfl plot runs/cifar_lossy runs/cifar_ideal runs/cifar_retry --out cifar10.png

Without the files, on the embedded MNIST sample (the same CNN, built for 28x28 grey):

    simfl run cifar10 --set task.dataset=mnist5k
"""

import os

import simfl


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="cifar10",
        seed=1,
        task=simfl.Task(
            dataset=simfl.Cifar10(path=os.environ.get("SIMFL_CIFAR10", "data/cifar-10-batches-bin")),
            partition=simfl.Dirichlet(alpha=0.3), model=simfl.Cnn(), n_clients=100,
            batch_size=32, local_epochs=1, lr=0.05),
        population=simfl.Population(
            compute=simfl.Compute(median_samples_per_s=20.0, sigma=0.5),
            availability=simfl.Bernoulli(p=0.8)),
        network=simfl.Network(
            uplink=simfl.ErasureChannel(p=0.3, rate=simfl.FixedRate(rate_bps=5e6)),
            downlink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=20e6)),
            arq_max_attempts=1),
        server=simfl.Server(algorithm=simfl.FedAvg(), sampler=simfl.Uniform(),
                            clients_per_round=10, deadline_s=300.0),
        run=simfl.Run(rounds=200, eval_every_rounds=5),
    )
