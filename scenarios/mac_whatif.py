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
had n contenders and how many successes they carried), written to OUT/slots/N=.._p=..,
then the three training runs above for each of three seeds, written to
OUT/time_to_accuracy/KEY=VALUE_seedS (a complete run is kept, not re-run). The folder
names are the grid values; what tells the runs apart is their config.json, so
``simfl plot OUT/time_to_accuracy`` draws one line per access scheme, the mean over
seeds with a 95% band. ``analysis/mac_whatif.py`` reads every run folder below OUT and
plots the per-slot successes against N p (1-p)^(N-1) and accuracy against simulated
time::

    python scenarios/mac_whatif.py --sweep runs/mac_whatif_study
    python analysis/mac_whatif.py runs/mac_whatif_study
    simfl plot runs/mac_whatif_study/time_to_accuracy --out mac_tta.png
"""

import argparse
from pathlib import Path

import simfl

#: contending phones N and access probabilities p of the timing-only sweep
SWEEP_N = (10, 40)
SWEEP_P = (0.01, 0.02, 0.05, 0.1, 0.2, 0.4)
#: the training runs' access schemes: ideal access, TDMA with 25 ms slots, this file's
#: slotted ALOHA (p = 0.1, 50 ms slots); grid values as ``--set`` pairs
SCHEMES = (
    ("network.mac.kind=ideal",),
    ("network.mac.kind=tdma", "network.mac.slot_s=0.025"),
    ("network.mac.kind=slotted_aloha",),
)
#: seeds of each training run
SEEDS = (5, 6, 7)

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


def folder_name(sets: tuple[str, ...] | list[str]) -> str:
    """A run folder's name from its grid values: the last two parts of each key."""
    return "_".join(".".join(key.split(".")[-2:]) + "=" + value
                    for key, value in (pair.split("=", 1) for pair in sets))


def study_runs(seeds: tuple[int, ...] = SEEDS) -> dict[str, list[str]]:
    """Run folder (relative to OUT) -> the ``--set`` overrides of that run of the study."""
    runs = {f"slots/N={n}_p={p}": [
        "run.timing_only=true", "run.events=true", "run.rounds=200", f"task.n_clients={n}",
        f"server.clients_per_round={n}", f"network.mac.access_prob={p}",
        "population.compute.sigma=0", "server.deadline_s=10"]
        for n in SWEEP_N for p in SWEEP_P}
    for sets in SCHEMES:
        for seed in seeds:
            runs[f"time_to_accuracy/{folder_name(sets)}_seed{seed}"] = [*sets, f"seed={seed}"]
    return runs


def parse_seeds(text: str) -> tuple[int, ...]:
    """``5-7`` or ``1,4,9``."""
    try:
        if "-" in text:
            first, last = (int(v) for v in text.split("-"))
            return tuple(range(first, last + 1))
        return tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected A-B or a comma list") from None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run the MAC what-if study's simulations.")
    parser.add_argument("--sweep", type=Path, required=True, metavar="OUT",
                        help="folder that receives one run folder per run of the study")
    parser.add_argument("--seeds", type=parse_seeds, default=SEEDS, metavar="A-B",
                        help="seeds of the training runs (default 5-7)")
    args = parser.parse_args(argv)
    for name, sets in study_runs(args.seeds).items():
        run_dir = args.sweep / name
        if (run_dir / "summary.json").is_file():
            continue
        run = simfl.apply_overrides(scenario(), [simfl.parse_override(s) for s in sets])
        print(run_dir, flush=True)
        simfl.run(run, run_dir)


if __name__ == "__main__":
    main()
