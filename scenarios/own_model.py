"""Your own PyTorch model: a small CNN with BatchNorm and Dropout on the bundled digits.

``make_net(input_shape, n_classes)`` returns an ordinary ``nn.Module``; simfl runs it in
train mode for local training and in eval mode for evaluation, federates BatchNorm's
running statistics with FedAvg's weights, and writes the final and the best global
model into the run folder (``model.pt``, ``model_best.pt``). Samples reach the module
as images (1, 8, 8). 20 phones, a lossy uplink (20 % of attempts lost, one retry) and a
round deadline of 8 s, so slow or unlucky phones miss rounds.
"""

import simfl
from torch import nn


def make_net(input_shape, n_classes):
    channels = input_shape[0]
    return nn.Sequential(
        nn.Conv2d(channels, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.2),
        nn.Linear(8 * (input_shape[1] // 2) * (input_shape[2] // 2), n_classes))


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="own_model",
        seed=1,
        task=simfl.Task(dataset=simfl.Digits(), partition=simfl.Iid(),
                        model=simfl.TorchModule(factory=make_net),
                        n_clients=20, batch_size=16, local_epochs=1, lr=0.05),
        population=simfl.Population(compute=simfl.Compute(median_samples_per_s=40.0, sigma=0.5)),
        network=simfl.Network(
            uplink=simfl.ErasureChannel(p=0.2, rate=simfl.FixedRate(rate_bps=1e6)),
            downlink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=10e6)),
            arq_max_attempts=2),
        server=simfl.Server(algorithm=simfl.FedAvg(), clients_per_round=5, deadline_s=8.0),
        run=simfl.Run(rounds=20, eval_every_rounds=1),
    )
