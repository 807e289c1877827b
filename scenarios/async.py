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

or run the whole study (each mode under seeds 11, 12 and 13: nine runs) and its
figures::

    python scenarios/async.py --out runs/async_study
    python scenarios/async.py --out runs/async_quick --seeds 11   # three runs

which writes OUT/<mode>_seed<seed>/ (run folders), OUT/staleness.png (histogram of the
staleness of every applied update, async and buffered, seeds pooled) and
OUT/accuracy.png (accuracy against simulated time, one line per mode: the mean over
seeds with its band, see ``simfl plot``), and prints, per seed, each mode's time to
85 % accuracy and the updates' mean staleness. Finished runs are kept: a second call
only draws.
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


def run_folder(out: Path, mode: str, seed: int) -> Path:
    return out / f"{mode}_seed{seed}"


def figures(out: Path, seeds: list[int]) -> dict[str, dict]:
    """Draw OUT/staleness.png and OUT/accuracy.png; return each mode's numbers, a list
    of one value per seed."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from simfl.metrics.plot import make_figure

    seeds_text = f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''}"
    fig = Figure(figsize=(6, 3.5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for mode in ("async", "buffered"):
        tau = [int(r["staleness"]) for seed in seeds
               for r in read_rows(run_folder(out, mode, seed) / "updates.csv")]
        if tau:
            ax.hist(tau, bins=range(0, max(tau) + 2), alpha=0.6, align="left",
                    label=f"{mode} ({len(tau)} updates)")
    ax.set_xlabel("staleness tau (server versions)")
    ax.set_ylabel("applied updates")
    ax.set_title(f"Staleness of the applied updates ({seeds_text} pooled)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "staleness.png", dpi=120)

    # one line per mode: the mean over seeds with its band (each seed, with two)
    fig = make_figure([run_folder(out, mode, seed) for mode in MODES for seed in seeds])
    fig.axes[0].set_title(f"Time to accuracy: sync, FedAsync and FedBuff\n"
                          f"(50 phones, tenfold speed spread, 30% uplink loss; {seeds_text})",
                          fontsize=10)
    fig.tight_layout()
    fig.savefig(out / "accuracy.png")

    numbers: dict[str, dict] = {}
    for mode in MODES:
        summaries = [json.loads((run_folder(out, mode, seed) / "summary.json").read_text())
                     for seed in seeds]
        numbers[mode] = {key: [summary.get(key) for summary in summaries] for key in (
            "time_to_target_s", "final_accuracy", "rounds", "aggregated_updates",
            "mean_staleness")}
    return numbers


def parse_seeds(text: str) -> list[int]:
    try:
        seeds = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seeds = {text!r}: expected whole numbers "
                                         f"separated by commas, such as 11,12,13") from None
    if len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"--seeds = {text!r}: a seed is repeated")
    return seeds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Sync vs async vs buffered time to accuracy.")
    parser.add_argument("--out", type=Path, required=True, metavar="OUT",
                        help="folder that receives one run folder per mode and seed, and "
                             "the figures")
    parser.add_argument("--seeds", type=parse_seeds, default=[11, 12, 13], metavar="S,S,...",
                        help="seeds of each mode (default 11,12,13: three give a band)")
    args = parser.parse_args(argv)
    for mode, sets in MODES.items():
        for seed in args.seeds:
            run_dir = run_folder(args.out, mode, seed)
            if not (run_dir / "summary.json").is_file():  # a complete run is kept
                run = simfl.apply_overrides(scenario(), [simfl.parse_override(s) for s in
                                                         [*sets, f"seed={seed}"]])
                simfl.run(run, run_dir)
    for mode, values in figures(args.out, args.seeds).items():
        print(mode, json.dumps(values))


if __name__ == "__main__":
    main()
