"""Battery: devices that run flat mid-training and recharge overnight; the cost in time to accuracy.

100 battery-powered edge devices (a 10 Wh pack, 36 kJ; 1 W idle, 5 W training, 4 W
transmitting) train logistic regression on scikit-learn's digits with FedAvg, 10 per
round, a 20-minute deadline and about 10 minutes of local work per round. Simulated
time 0 is midnight; every device is plugged in from 22:00 to 06:00 (10 W, CC-CV above
80 %), runs from the charger then, and starts the run between 30 % and 100 % charged.
Unplugged, idle drain alone empties a full pack in 10 hours, so through the afternoon
devices die, some in the middle of a round (``n_battery`` in rounds.csv), the server
finds fewer and then no devices to invite, and training stalls until the evening
plug-in brings them back above 20 %. Compare with infinite batteries::

    simfl run battery --quiet --out runs/battery
    simfl run battery --quiet --out runs/battery_inf --set population.battery=null
    simfl plot runs/battery runs/battery_inf --out runs/battery.png

The run covers 36 simulated hours (a day and a half) by ``run.horizon_s``.
"""

import simfl


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="battery",
        seed=1,
        task=simfl.Task(dataset=simfl.Digits(), partition=simfl.Iid(), model=simfl.Logreg(),
                        n_clients=100, batch_size=8, local_epochs=1, lr=0.02),
        population=simfl.Population(
            compute=simfl.Compute(median_samples_per_s=0.025, sigma=0.3),
            battery=simfl.Battery(capacity_j=36_000.0, initial_soc=1.0, initial_soc_min=0.3,
                                  restart_soc=0.2,
                                  charging=simfl.Charging(power_w=10.0, start_hour=22.0,
                                                          end_hour=6.0, cv_soc=0.8)),
            energy=simfl.Energy(idle_w=1.0, compute_w=5.0, tx_w=4.0, rx_w=1.0)),
        network=simfl.Network(
            uplink=simfl.ErasureChannel(p=0.1, rate=simfl.FixedRate(rate_bps=1e5)),
            downlink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=1e6)),
            arq_max_attempts=2),
        server=simfl.Server(algorithm=simfl.FedAvg(), sampler=simfl.Uniform(),
                            clients_per_round=10, deadline_s=1200.0),
        run=simfl.Run(rounds=None, horizon_s=36 * 3600.0, eval_every_s=1800.0,
                      target_accuracy=0.8),
    )
