"""Wi-Fi vs cellular access: time to accuracy for one FL task over 802.11 DCF, slotted
ALOHA, TDMA and OFDMA as the number of clients per round grows.

60 phones hold IID shares of scikit-learn's digits (about 24 samples each) and train
logistic regression with FedAvg (batch 16, one epoch, learning rate 0.1) at a lognormal
speed (median 25 samples/s, sigma 0.6: about 1 s of compute, with a wide spread). Each
round the server invites K phones; they download the model over private 20 Mb/s links
and upload 100 kB (``network.model_bytes``: 0.4 s of airtime alone) over one 2 Mb/s
uplink that the MAC shares among them. The round closes at the last upload (the 30 s
deadline never binds), for 40 rounds, with the time to 80 % test accuracy recorded.
The four MACs (``network.mac``, one whole table each, since their fields differ):

- ``csma_ca``: IEEE 802.11 DCF with its defaults, the 802.11 FHSS PHY's timing as
  tabulated by Bianchi, whose top rate is the uplink's 2 Mb/s; the update travels as
  1023-byte MPDUs, and one MPDU that collides 7 times (``retry_limit``) drops the update;
- ``slotted_aloha``: access requests in 10 ms slots with probability 0.1 (the defaults),
  then ``data_phase = "serialised"``: the granted uploads queue for the one 2 Mb/s data
  channel (the default ``"parallel"`` gives each granted client a 2 Mb/s channel of its
  own, K times the capacity the other MACs have);
- ``tdma``: one 10 ms slot per invited client per frame (an LTE frame; the 0.1 s
  default would be a quarter of an update), a finished client's slot left unused;
- ``ofdma``: the 2 Mb/s shared equally among the active uploads (processor sharing);
  ``downlink = "private"`` keeps the downloads on their private links, as under the
  other MACs (the study compares uplinks).

Findings (``main()``, 80 runs, 2.2 minutes on two busy cores): every MAC's round grows
linearly with K, because the uplink is shared, and with IID data more clients per
round buy few rounds, so the time to 80 % grows with K too, from 1 to 1.3 minutes at 5
clients to 4.3 to 5.2 minutes at 40. OFDMA is the floor, and slotted ALOHA stays 0.5 to
3.5 % above it (a 10 ms request slot is short next to a 0.4 s upload). TDMA pays 1.2 s a
round at 5 clients, rising to 2.9 s at 40, for the slots of clients still computing, and
is the slowest up to 10 clients. DCF's backoff, headers and collisions cost 14 % over
OFDMA at 5 clients and 33 % at 20, and from 20 clients on its retry limit drops whole
updates (9 % of them at 20, 34 % at 40), which shortens its rounds (below TDMA's at 40)
but not its time to accuracy (the slowest of the four on average at 20 and 40 clients).
Compare single runs with

    simfl run wifi_vs_cellular --set network.mac=ofdma --set server.clients_per_round=20
    simfl run wifi_vs_cellular --set network.mac.retry_limit=null

The study (``main()``) sweeps the MAC x K over five seeds as one campaign (``simfl
sweep``; a second call runs only what is missing), then draws OUT/wifi_vs_cellular.png:
the mean round length and the time to 80 % accuracy against K, one line per MAC, each
the mean over seeds with a 95 % t-band (where fewer than three seeds have a value, no
band but each seed's value as a cross; a run that never reached the target is left out
of that mean and counted in the printed table, which also gives the share of invited
updates that were delivered). A seed draws the same clients and compute times under
every MAC (and, where every update arrives, the same training), so the runs are paired:
in every seed OFDMA's rounds are the shortest, ALOHA's next, and TDMA's the longest up to
10 clients::

    python scenarios/wifi_vs_cellular.py --out runs/wifi_vs_cellular --jobs 2
    python scenarios/wifi_vs_cellular.py --out runs/wifi_vs_cellular_quick --quick
"""

from pathlib import Path

import simfl

#: the four uplink MACs, each a whole ``network.mac`` table (their fields differ)
MACS = [
    {"kind": "csma_ca"},
    {"kind": "slotted_aloha", "data_phase": "serialised"},
    {"kind": "tdma", "slot_s": 0.01},
    {"kind": "ofdma", "downlink": "private"},  # downloads on private links, as for the others
]
#: each MAC's name in the figure and the table
LABELS = {"csma_ca": "802.11 DCF", "slotted_aloha": "slotted ALOHA", "tdma": "TDMA",
          "ofdma": "OFDMA"}
#: the study's grid: the MAC and the clients invited per round
GRID = {"network.mac": MACS, "server.clients_per_round": [5, 10, 20, 40]}
#: a smoke test of the machinery: every MAC, five clients, three rounds, one seed
QUICK_GRID = {"network.mac": MACS, "server.clients_per_round": [5]}
SEEDS = "1-5"
TARGET = 0.8


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="wifi_vs_cellular",
        seed=1,
        task=simfl.Task(dataset=simfl.Digits(), partition=simfl.Iid(), model=simfl.Logreg(),
                        n_clients=60, batch_size=16, local_epochs=1, lr=0.1),
        population=simfl.Population(compute=simfl.Compute(median_samples_per_s=25.0, sigma=0.6)),
        network=simfl.Network(
            uplink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=2e6)),
            downlink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=20e6)),
            mac=simfl.CsmaCaMac(), model_bytes=100_000),
        server=simfl.Server(algorithm=simfl.FedAvg(), sampler=simfl.Uniform(),
                            clients_per_round=10, deadline_s=30.0),
        run=simfl.Run(rounds=40, eval_every_rounds=1, target_accuracy=TARGET),
    )


def _round_length_s(row: dict) -> float:
    return row["sim_time_s"] / max(row["rounds"], 1)


def _mac(row: dict) -> str:
    return row["network.mac"]["kind"]


def draw(rows: list[dict], out_png: Path) -> None:
    """Round length and time to target against clients per round (module docstring); a
    point no seed reached the target at is named in its panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from simfl.metrics.seed_means import note_unreached, plot_seed_means

    k = "server.clients_per_round"
    metrics = (("mean round length (s)", _round_length_s),
               (f"time to {TARGET:.0%} accuracy (s)", lambda r: r["time_to_target_s"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(11, 4.4))
    styles = ("-o", "--s", "-.^", ":D")
    macs = [m["kind"] for m in MACS if any(_mac(r) == m["kind"] for r in rows)]
    rounds = max(r["rounds"] for r in rows)
    for ax, (label, value) in zip(axes, metrics):
        missing, n_points = [], 0
        for mac, style in zip(macs, styles):
            points = {k_value: [value(r) for r in rows if (_mac(r), r[k]) == (mac, k_value)
                                and value(r) is not None]
                      for k_value in {r[k] for r in rows if _mac(r) == mac}}
            skipped = plot_seed_means(ax, points, style, LABELS[mac])
            missing += [f"{LABELS[mac]} at {x}" for x in skipped]
            n_points += len(points)
        note_unreached(ax, missing, n_points, TARGET, rounds)
        ax.set_xlabel("clients per round")
        ax.set_ylabel(label)
        ax.set_xticks(sorted({r[k] for r in rows}))
        ax.grid(alpha=0.3)
    axes[1].set_xlim(axes[0].get_xlim())  # the same x in both (an empty panel has none)
    axes[0].legend(title="uplink MAC", fontsize=8)
    fig.suptitle("One FL task over four MACs: 100 kB updates on a shared 2 Mb/s uplink\n"
                 "(mean over seeds with a 95 % band; crosses: each seed where fewer than 3 "
                 "have a value)")
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    from simfl.campaign.study import run_study

    out, rows = run_study(scenario(), argv, description="Run the Wi-Fi vs cellular study and draw it.", grid=GRID,
                          quick_grid=QUICK_GRID, seeds=SEEDS,
                          quick_help="every MAC, five clients per round, three rounds, one seed")
    draw(rows, out / "wifi_vs_cellular.png")
    k = "server.clients_per_round"
    print(f"{'MAC':>13} {'K':>3}  round length (s)  time to {TARGET:.0%} (s)  reached  "
          f"delivered")
    order = [m["kind"] for m in MACS]
    for mac, k_value in sorted({(_mac(r), r[k]) for r in rows},
                               key=lambda p: (order.index(p[0]), p[1])):
        runs = [r for r in rows if (_mac(r), r[k]) == (mac, k_value)]
        lengths = [_round_length_s(r) for r in runs]
        reached = [r["time_to_target_s"] for r in runs if r["time_to_target_s"] is not None]
        tta = f"{sum(reached) / len(reached):19.1f}" if reached else f"{'-':>19}"
        delivered = (sum(r["aggregated_updates"] for r in runs)
                     / sum(r["rounds"] * k_value for r in runs))
        print(f"{mac:>13} {k_value:3d}  {sum(lengths) / len(lengths):16.2f} {tta}  "
              f"{len(reached)}/{len(runs):<5} {delivered:9.1%}")
    print(f"figure: {out / 'wifi_vs_cellular.png'}")


if __name__ == "__main__":
    main()
