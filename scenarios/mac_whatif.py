"""MAC what-if: 20 phones share one uplink through slotted ALOHA; what do contention and
the access scheme cost in time to accuracy?

Every round the server invites all 20 phones (always online) and waits at most 3 s.
Each phone trains a logistic-regression model on its IID share of scikit-learn's
digits (lognormal speeds, about 1.4 s of compute), then contends for the uplink in
50 ms slots, transmitting in each slot with probability 0.1; a slot carries a
success only if exactly one phone transmits (on average N p (1-p)^(N-1) successes per
slot with N contenders). A phone still contending at the deadline is ``collided``.
The granted upload (2.6 kB at 1 Mb/s, about 21 ms) then goes through without further
contention. Compare the access schemes with

    simfl run mac_whatif --set network.mac.kind=ideal
    simfl run mac_whatif --set network.mac.kind=tdma --set network.mac.slot_s=0.025
    simfl run mac_whatif --set network.mac.access_prob=0.05

``analysis/mac_whatif.py`` sweeps the access probability and the number of
contending phones in timing-only mode, checks the simulated per-slot successes against
N p (1-p)^(N-1), and plots time to accuracy for ideal access, TDMA and slotted ALOHA.
"""

import simfl
from simfl.core.config import SlottedAlohaMac


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="mac_whatif",
        seed=5,
        task=simfl.Task(dataset=simfl.Digits(), partition=simfl.Iid(), model=simfl.Logreg(),
                        n_clients=20, batch_size=16, local_epochs=1, lr=0.1),
        population=simfl.Population(compute=simfl.Compute(median_samples_per_s=50.0, sigma=0.3),
                                    availability=simfl.Always()),
        network=simfl.Network(
            uplink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=1e6)),
            downlink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=10e6)),
            mac=SlottedAlohaMac(access_prob=0.1, slot_s=0.05)),
        server=simfl.Server(algorithm=simfl.FedAvg(), sampler=simfl.AllAvailable(),
                            clients_per_round=20, deadline_s=3.0),
        run=simfl.Run(rounds=40, eval_every_rounds=1, target_accuracy=0.85),
    )
