"""Your own PyTorch model and data: a small residual CNN with BatchNorm and Dropout, Adam,
augmentation, a lossy uplink and a deadline.

``make_net(input_shape, n_classes)`` returns an ordinary ``nn.Module``; simfl runs it in
train mode for local training and in eval mode for evaluation, federates BatchNorm's
running statistics with FedAvg's weights, and writes the final and the best global model
into the run folder (``model.pt``, ``model_best.pt``). Samples reach the module as images
(C, H, W). Each client trains with Adam (state reset every round) on randomly shifted
copies of its samples. 20 phones, a lossy uplink (20 % of attempts lost, one retry) and
an 8 s round deadline, so slow or unlucky phones miss rounds. The bundled digits stand
in for your data; with your own arrays saved as ``numpy.savez("mine.npz", x_train=...,
y_train=..., x_test=..., y_test=...)`` (images as [N, C, H, W])::

    simfl run own_model --set 'task.dataset={"kind": "npz", "path": "mine.npz"}'
"""

import simfl
from torch import nn


class Residual(nn.Module):
    """x + conv(relu(bn(conv(x)))): the building block of a ResNet."""

    def __init__(self, channels):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1))

    def forward(self, x):
        return x + self.body(x)


def make_net(input_shape, n_classes):
    channels, height, width = input_shape
    return nn.Sequential(
        nn.Conv2d(channels, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), Residual(8),
        nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.2),
        nn.Linear(8 * (height // 2) * (width // 2), n_classes))


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="own_model",
        seed=1,
        task=simfl.Task(dataset=simfl.Digits(), partition=simfl.Iid(),
                        model=simfl.TorchModule(factory=make_net), optimizer=simfl.Adam(),
                        augment=simfl.Augment(crop_padding=1, horizontal_flip=False),
                        n_clients=20, batch_size=16, local_epochs=1, lr=0.01),
        population=simfl.Population(compute=simfl.Compute(median_samples_per_s=40.0, sigma=0.5)),
        network=simfl.Network(
            uplink=simfl.ErasureChannel(p=0.2, rate=simfl.FixedRate(rate_bps=1e6)),
            downlink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=10e6)),
            arq_max_attempts=2),
        server=simfl.Server(algorithm=simfl.FedAvg(), clients_per_round=5, deadline_s=8.0),
        run=simfl.Run(rounds=20, eval_every_rounds=1),
    )
