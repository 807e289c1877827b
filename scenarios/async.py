"""Asynchronous vs buffered vs synchronous FedAvg: who reaches the target first when the
population's speeds differ tenfold and the uplink loses uploads?

50 phones hold IID shares of scikit-learn's digits and train an MLP (64 hidden units)
for two local epochs. Training speeds are lognormal with sigma = 1 (the slowest tenth
is over ten times slower than the fastest tenth); the uplink (1 Mb/s) loses 30 % of
attempts and retries once; every phone is online with probability 0.9 whenever the
server looks. Each mode works with 10 phones at a time and gives each at most 12 s:

* ``sync``: rounds of 10 invitations; the round closes when all 10 are in or at 12 s
  (slow phones are ``late``), FedAvg weighted by data;
* ``async`` (this script's default, FedAsync): every arrival is mixed in at once with
  weight 0.6 (tau + 1)^-1/2, tau = versions since the phone's model;
* ``buffered`` (FedBuff): every 5 arrivals the server steps along the mean of their
  (tau + 1)^-1/2-weighted updates.

The three runs share the seed, so they have the same phones (speeds, data shares) and
the same initial model; channel draws are keyed by client and round (sync) or
invitation (async, buffered), so the uplink losses differ between modes. Each runs
300 simulated seconds and is scored every 5 s. Compare with

    simfl run async
    simfl run async --set server.mode=sync
    simfl run async --set server.mode=buffered --set server.mode.buffer_size=5

or run the whole study (three runs, about two minutes on a laptop) and its figures::

    python scenarios/async.py --out runs/async_study

which writes OUT/<mode>/ (run folders), OUT/staleness.png (histogram of the staleness
of every applied update, async and buffered) and OUT/accuracy.png (accuracy against
simulated time, the three modes), and prints each mode's time to 85 % accuracy and
the updates' mean staleness.
"""

import argparse
import csv
import json
from pathlib import Path

import simfl

#: the three modes of the study: run folder -> ``--set`` overrides
MODES = {
    "sync": ["server.mode=sync"],
    "async": ["server.mode=async"],
    "buffered": ["server.mode=buffered", "server.mode.buffer_size=5"],
}


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="async",
        seed=11,
        task=simfl.Task(dataset=simfl.Digits(), partition=simfl.Iid(),
                        model=simfl.Mlp(hidden=(64,)), n_clients=50, batch_size=16,
                        local_epochs=2, lr=0.1),
        population=simfl.Population(
            compute=simfl.Compute(median_samples_per_s=25.0, sigma=1.0),
            availability=simfl.Bernoulli(p=0.9)),
        network=simfl.Network(
            uplink=simfl.ErasureChannel(p=0.3, rate=simfl.FixedRate(rate_bps=1e6)),
            downlink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=10e6)),
            arq_max_attempts=2),
        server=simfl.Server(algorithm=simfl.FedAvg(), sampler=simfl.Uniform(),
                            clients_per_round=10, deadline_s=12.0,
                            mode=simfl.AsyncMode(alpha=0.6, staleness="polynomial",
                                                 staleness_a=0.5)),
        run=simfl.Run(rounds=None, horizon_s=300.0, eval_every_s=5.0, target_accuracy=0.85),
    )


def read_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def figures(out: Path) -> dict[str, dict]:
    """Draw OUT/staleness.png and OUT/accuracy.png; return each mode's numbers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    numbers: dict[str, dict] = {}
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for mode in ("async", "buffered"):
        tau = [int(r["staleness"]) for r in read_rows(out / mode / "updates.csv")]
        if tau:
            ax.hist(tau, bins=range(0, max(tau) + 2), alpha=0.6, label=f"{mode} ({len(tau)} updates)",
                    align="left")
    ax.set_xlabel("staleness tau (server versions)")
    ax.set_ylabel("applied updates")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "staleness.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for mode in MODES:
        evals = read_rows(out / mode / "evals.csv")
        ax.plot([float(e["t_s"]) for e in evals], [float(e["accuracy"]) for e in evals],
                label=mode)
        summary = json.loads((out / mode / "summary.json").read_text())
        numbers[mode] = {key: summary.get(key) for key in (
            "time_to_target_s", "final_accuracy", "rounds", "aggregated_updates",
            "mean_staleness")}
    ax.axhline(scenario().run.target_accuracy, color="grey", linestyle=":")
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("test accuracy")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "accuracy.png", dpi=120)
    plt.close(fig)
    return numbers


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Sync vs async vs buffered time to accuracy.")
    parser.add_argument("--out", type=Path, required=True, metavar="OUT",
                        help="folder that receives one run folder per mode and the figures")
    args = parser.parse_args(argv)
    for mode, sets in MODES.items():
        run_dir = args.out / mode
        if not (run_dir / "summary.json").is_file():  # a complete run is kept, not re-run
            run = simfl.apply_overrides(scenario(), [simfl.parse_override(s) for s in sets])
            simfl.run(run, run_dir)
    for mode, values in figures(args.out).items():
        print(mode, json.dumps(values))


if __name__ == "__main__":
    main()
