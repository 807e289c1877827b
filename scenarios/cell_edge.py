"""Cell edge: how large a cell, how wide a band and which scheduler before FL rounds
miss their deadline?

60 phones are placed uniformly in a disc of radius R around one access point
(log-distance path loss with exponent 3.5 and 40 dB at 1 m, 8 dB shadowing, 23 dBm,
7 dB noise figure). Each round the server invites K of them; they download the model at
the access point's 30 dBm, train logistic regression on their IID share of scikit-learn's
digits, and upload 250 kB (``network.model_bytes``, the size of a 62,500-parameter model:
the upload is the study's subject, so the training stays cheap) over a band of B Hz
that the round's uploads share (``network.mac.kind = "ofdma"``): with ``equal`` the band
is split equally among the uploads active at each moment (processor sharing), with
``min_latency`` it is split once per round so that every upload finishes together. The
round closes at the last upload or at the 10 s deadline; an attempt below 0 dB SNR is
lost. The downloads keep links of their own (``network.mac.downlink = "private"``), so
that the study measures the uplink band alone. Compare single runs with

    simfl run cell_edge --set population.placement.radius_m=600
    simfl run cell_edge --set network.mac.scheduler=min_latency

The study (``main()``) sweeps R x B x scheduler x K over three seeds as one campaign
(``simfl sweep``; a second call runs only what is missing), then draws OUT/cell_edge.png:
the mean round length and the time to 80 % accuracy against R, one line per band and
scheduler, one column per K, each the mean over seeds with a 95 % t-band (where fewer than
three seeds have a value, no band but each seed's value as a cross; a run that never
reached the target is left out of that mean and counted in the printed table)::

    python scenarios/cell_edge.py --out runs/cell_edge            # 72 runs, a few minutes
    python scenarios/cell_edge.py --out runs/cell_edge_quick --quick

With ``--selective`` the study compares the schedulers that read the channel on a band
with frequency-selective fading instead (:func:`selective_scenario`: 25 resource blocks
of 40 kHz, an independent Rayleigh gain per block and TTI of 10 ms): ``round_robin``
deals the blocks in turn, ``proportional_fair`` and ``max_rate`` give each block to an
upload that is in a good fade on it, so they gain from the multi-user diversity, and
``max_rate`` leaves the cell edge waiting (over R x scheduler with K = 10; 1 MHz)::

    python scenarios/cell_edge.py --out runs/cell_edge_selective --selective
    simfl run cell_edge --set network.mac.selectivity=rayleigh \
        --set network.mac.resource_blocks=25 --set network.mac.tti_s=0.01 \
        --set network.mac.scheduler=proportional_fair
"""

import sys
from pathlib import Path

import simfl

#: the study's grid: cell radius, band, scheduler, clients per round
GRID = {
    "population.placement.radius_m": [100.0, 300.0, 600.0],
    "network.radio.bandwidth_hz": [1e6, 5e6],
    "network.mac.scheduler": ["equal", "min_latency"],
    "server.clients_per_round": [5, 15],
}
#: a smoke test of the machinery: two radii, one band and K, three rounds, one seed
QUICK_GRID = {
    "population.placement.radius_m": [100.0, 600.0],
    "network.radio.bandwidth_hz": [1e6],
    "network.mac.scheduler": ["equal", "min_latency"],
    "server.clients_per_round": [5],
}
#: the selective band's comparison (``--selective``): the schedulers that read the channel
SELECTIVE_GRID = {
    "population.placement.radius_m": [100.0, 300.0, 600.0],
    "network.radio.bandwidth_hz": [1e6],
    "network.mac.scheduler": ["round_robin", "proportional_fair", "max_rate"],
    "server.clients_per_round": [10],
}
SELECTIVE_QUICK_GRID = {**SELECTIVE_GRID, "population.placement.radius_m": [100.0, 600.0]}
SEEDS = "1-3"
TARGET = 0.8


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="cell_edge",
        seed=1,
        task=simfl.Task(dataset=simfl.Digits(), partition=simfl.Iid(), model=simfl.Logreg(),
                        n_clients=60, batch_size=16, local_epochs=1, lr=0.1),
        population=simfl.Population(
            compute=simfl.Compute(median_samples_per_s=50.0, sigma=0.3),
            placement=simfl.DiscPlacement(radius_m=300.0, min_m=10.0)),
        network=simfl.Network(
            uplink=simfl.IdealChannel(), downlink=simfl.IdealChannel(),
            radio=simfl.Radio(shadowing_db=8.0, bandwidth_hz=1e6),
            mac=simfl.OfdmaMac(scheduler="equal", downlink="private"),
            sinr_threshold_db=0.0, model_bytes=250_000),
        server=simfl.Server(algorithm=simfl.FedAvg(), sampler=simfl.Uniform(),
                            clients_per_round=10, deadline_s=10.0),
        run=simfl.Run(rounds=30, eval_every_rounds=1, target_accuracy=TARGET),
    )


def selective_scenario() -> simfl.Scenario:
    """:func:`scenario` on a band whose 25 resource blocks fade independently, scheduled
    every 10 ms (a fresh Rayleigh gain per block and TTI)."""
    import dataclasses

    base = scenario()
    mac = simfl.OfdmaMac(scheduler="round_robin", downlink="private", resource_blocks=25,
                         selectivity="rayleigh", tti_s=0.01)
    return dataclasses.replace(base, name="cell_edge_selective",
                               network=dataclasses.replace(base.network, mac=mac))


def draw(rows: list[dict], out_png: Path):
    """Round length and time to target against the cell radius (module docstring). A
    point that no seed reached the target at is named in its panel, with the rounds the
    runs had; a panel where none did says so instead of drawing an empty axis. Returns
    the (closed) figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from simfl.metrics.seed_means import note_unreached, plot_seed_means

    radius, band, sched, k = GRID.keys()
    ks = sorted({r[k] for r in rows})
    lines = sorted({(r[band], r[sched]) for r in rows})
    rounds = max(r["rounds"] for r in rows)
    metrics = (("round length (s)", lambda r: r["sim_time_s"] / max(r["rounds"], 1)),
               (f"time to {TARGET:.0%} accuracy (s)", lambda r: r["time_to_target_s"]))
    fig, axes = plt.subplots(len(metrics), len(ks), figsize=(max(5 * len(ks), 8), 7),
                             squeeze=False, sharex=True)
    styles = ("-o", "--s", "-.^", ":D")
    for col, k_value in enumerate(ks):
        for row, (label, value) in enumerate(metrics):
            ax = axes[row][col]
            missing, n_points = [], 0
            for (b, s), style in zip(lines, styles * 4):
                points = {x: [value(r) for r in rows if value(r) is not None
                              and (r[radius], r[band], r[sched], r[k]) == (x, b, s, k_value)]
                          for x in {r[radius] for r in rows
                                    if (r[band], r[sched], r[k]) == (b, s, k_value)}}
                skipped = plot_seed_means(ax, points, style, f"{b / 1e6:g} MHz, {s}")
                missing += [f"{b / 1e6:g} MHz, {s} at {x:g} m" for x in skipped]
                n_points += len(points)
            note_unreached(ax, missing, n_points, TARGET, rounds)
            ax.set_ylabel(label)
            ax.set_title(f"{k_value} clients per round" if row == 0 else "")
            ax.grid(alpha=0.3)
        axes[-1][col].set_xlabel("cell radius (m)")
    axes[0][0].legend(title="band, scheduler", fontsize=8)
    fig.suptitle("Cell edge: upload of 250 kB over a shared band, 10 s deadline\n(mean over "
                 "seeds with a 95 % band;\ncrosses: each seed where fewer than 3 have a value)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    plt.close(fig)
    return fig


def main(argv: list[str] | None = None) -> None:
    from simfl.campaign.study import run_study

    args = list(sys.argv[1:] if argv is None else argv)
    selective = "--selective" in args  # the schedulers on a frequency-selective band
    if selective:
        args.remove("--selective")
    out, rows = run_study(selective_scenario() if selective else scenario(), args,
                          description="Run the cell-edge study and draw it (--selective: "
                          "the schedulers on a frequency-selective band).",
                          grid=SELECTIVE_GRID if selective else GRID,
                          quick_grid=SELECTIVE_QUICK_GRID if selective else QUICK_GRID,
                          seeds=SEEDS,
                          quick_help="two radii, one band and K, three rounds, one seed")
    draw(rows, out / "cell_edge.png")
    radius, band, sched, k = GRID.keys()
    print(f"{'R (m)':>6} {'B (MHz)':>8} {'scheduler':>17} {'K':>3}  round length (s)  "
          f"time to {TARGET:.0%} (s)  reached")
    for key in sorted({(r[radius], r[band], r[sched], r[k]) for r in rows}):
        runs = [r for r in rows if (r[radius], r[band], r[sched], r[k]) == key]
        lengths = [r["sim_time_s"] / max(r["rounds"], 1) for r in runs]
        reached = [r["time_to_target_s"] for r in runs if r["time_to_target_s"] is not None]
        tta = f"{sum(reached) / len(reached):19.1f}" if reached else f"{'-':>19}"
        print(f"{key[0]:6.0f} {key[1] / 1e6:8g} {key[2]:>17} {key[3]:3d}  "
              f"{sum(lengths) / len(lengths):16.2f} {tta}  {len(reached)}/{len(runs)}")
    print(f"figure: {out / 'cell_edge.png'}")


if __name__ == "__main__":
    main()
