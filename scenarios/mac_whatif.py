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

The whole study (a few minutes) is this script's ``main()``: a timing-only sweep of the
access probability p and the number N of contending phones (equal compute speeds, so
all N start contending in the same slot; ``events.csv`` logs per round how many slots
had n contenders and how many successes they carried), then the three training runs
above; each run directory is written under OUT (a complete one is kept, not re-run).
``analysis/mac_whatif.py`` reads them back and plots the per-slot successes against
N p (1-p)^(N-1) and accuracy against simulated time::

    python scenarios/mac_whatif.py --sweep runs/mac_whatif_study
    python analysis/mac_whatif.py runs/mac_whatif_study
"""

import argparse
from pathlib import Path

import simfl

#: contending phones N and access probabilities p of the timing-only sweep
SWEEP_N = (10, 40)
SWEEP_P = (0.01, 0.02, 0.05, 0.1, 0.2, 0.4)
#: the training runs: ideal access, TDMA with 25 ms slots, this file's slotted ALOHA
SCHEMES = {
    "train_ideal": ["network.mac.kind=ideal"],
    "train_tdma": ["network.mac.kind=tdma", "network.mac.slot_s=0.025"],
    "train_aloha": [],
}


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
            mac=simfl.SlottedAlohaMac(access_prob=0.1, slot_s=0.05)),
        server=simfl.Server(algorithm=simfl.FedAvg(), sampler=simfl.AllAvailable(),
                            clients_per_round=20, deadline_s=3.0),
        run=simfl.Run(rounds=40, eval_every_rounds=1, target_accuracy=0.85),
    )


def study_runs() -> dict[str, list[str]]:
    """Run directory name -> the ``--set`` overrides of that run of the study."""
    runs = {f"sweep_N{n}_p{p}": [
        "run.timing_only=true", "run.events=true", "run.rounds=200", f"task.n_clients={n}",
        f"server.clients_per_round={n}", f"network.mac.access_prob={p}",
        "population.compute.sigma=0", "server.deadline_s=10"]
        for n in SWEEP_N for p in SWEEP_P}
    return {**runs, **SCHEMES}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run the MAC what-if study's simulations.")
    parser.add_argument("--sweep", type=Path, required=True, metavar="OUT",
                        help="folder that receives one run directory per run of the study")
    args = parser.parse_args(argv)
    for name, sets in study_runs().items():
        run_dir = args.sweep / name
        if (run_dir / "summary.json").is_file():
            continue
        run = simfl.apply_overrides(scenario(), [simfl.parse_override(s) for s in sets])
        print(run_dir, flush=True)
        simfl.run(run, run_dir)


if __name__ == "__main__":
    main()
