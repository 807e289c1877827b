"""Compressed uploads over a slow uplink: shorter uploads against noisier updates, as
time to accuracy for float32, QSGD, top-k and int8 updates.

50 phones hold IID shares of scikit-learn's digits (about 29 samples each) and train an
MLP 64-256-256-10 (d = 85,002 parameters in 6 tensors: 340 kB as float32) with FedAvg
(batch 20, two local epochs, learning rate 0.1) at a lognormal speed (median 20
samples/s, sigma 0.6: about 3 s of compute, with a wide spread). Each round the server
invites 10 phones; they download the model over 20 Mb/s and upload their update over a
private 250 kb/s uplink (an ideal channel, no MAC contention). The round closes at the
last upload or at the 15 s deadline: a dense upload takes 10.9 s of airtime alone, so
the deadline binds for float32 updates and a third of them arrive late and are dropped.
Each run lasts 600 simulated seconds, with the test accuracy every 5 s and the time to
85 % recorded. The four schemes (``server.compression``, docs/compression.md), with the
exact bits of one upload:

- ``none``: float32, 2,720,064 bits (10.9 s at 250 kb/s);
- ``qsgd`` with s = 16 levels: 510,044 bits (2.0 s);
- ``top_k`` at 1 % with error feedback: k = 850 entries of 49 bits, 41,650 bits (0.17 s);
- ``int8``: 680,208 bits (2.7 s).

Findings (``main()``, 4 schemes x 8 seeds, 32 runs, 47 s on two busy cores; each value
the mean over seeds ± the half-width of its 95 % t-interval, then the seeds' min-max):
QSGD reached 85 % first, at 221 ± 19 s (185-260), then int8 at 237 ± 19 s (200-275),
float32 at 349 ± 31 s (300-420) and top-k at 358 ± 51 s (255-425); every run reached
it. Paired by seed, QSGD beat int8 in all eight seeds, by 15.6 ± 1.5 s: the two needed
the same number of rounds in every seed (21 to 27), so QSGD's 0.7 s shorter upload is
its whole lead. QSGD beat float32 by 128 ± 30 s (37 %): float32's rounds are held at
the 15 s deadline, where 32 % of its uploads arrive late and are dropped, yet it needs
about as many rounds. Top-k's 0.17 s uploads give the shortest rounds (8.0 s against
QSGD's 9.8 s and float32's 15.0 s; the slowest invitee's compute then sets the round),
but its sparse updates need about twice the rounds (35 to 53), so it gains nothing
over float32 (top-k minus float32: 9 ± 56 s). Test accuracy after 600 s: QSGD 0.929,
int8 0.927, top-k 0.903, float32 0.899. Compare single runs with

    simfl run compression --set server.compression.kind=int8
    simfl run compression --set server.compression.kind=top_k --set server.compression.fraction=0.1

The study (``main()``) runs the four schemes over eight seeds as one campaign (``simfl
sweep``; a second call runs only what is missing), then draws OUT/compression.png: the
test accuracy against simulated time (the mean over seeds with a 95 % t-band, see
``simfl plot``), the uplink bits delivered per round, and the time to 85 % (the mean
with its 95 % t-interval and each seed's value; a run that never reached the target is
left out of that mean and counted in the printed table). A seed draws the same clients
and compute times under every scheme, so the runs are paired::

    python scenarios/compression.py --out runs/compression --jobs 2
    python scenarios/compression.py --out runs/compression_quick --quick
"""

from pathlib import Path

import simfl

#: the four schemes, each a whole ``server.compression`` table
SCHEMES = [
    {"kind": "none"},
    {"kind": "qsgd", "levels": 16},
    {"kind": "top_k", "fraction": 0.01, "error_feedback": True},
    {"kind": "int8"},
]
#: each scheme's name in the figure
LABELS = {"none": "float32", "qsgd": "QSGD s=16", "top_k": "top-k 1% + EF", "int8": "int8"}
GRID = {"server.compression": SCHEMES}
#: a smoke test of the machinery: every scheme, three rounds, one seed
QUICK_GRID = GRID
SEEDS = "1-8"
TARGET = 0.85


def scenario() -> simfl.Scenario:
    return simfl.Scenario(
        name="compression",
        seed=1,
        task=simfl.Task(dataset=simfl.Digits(), partition=simfl.Iid(),
                        model=simfl.Mlp(hidden=(256, 256)), n_clients=50, batch_size=20,
                        local_epochs=2, lr=0.1),
        population=simfl.Population(compute=simfl.Compute(median_samples_per_s=20.0, sigma=0.6)),
        network=simfl.Network(
            uplink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=250e3)),
            downlink=simfl.IdealChannel(rate=simfl.FixedRate(rate_bps=20e6))),
        server=simfl.Server(algorithm=simfl.FedAvg(), sampler=simfl.Uniform(),
                            clients_per_round=10, deadline_s=15.0,
                            compression=simfl.NoCompression()),
        run=simfl.Run(rounds=None, horizon_s=600.0, eval_every_s=5.0, target_accuracy=TARGET),
    )


def _scheme(row: dict) -> str:
    return row["server.compression"]["kind"]


def upload_bits(compression: dict) -> int:
    """The exact payload bits of one upload of the study's model under ``compression``."""
    from simfl.core.config import apply_overrides
    from simfl.experiment.payload import tensor_sizes

    chosen = apply_overrides(scenario(), [("server.compression", compression)])
    return chosen.server.compression.bits(tensor_sizes(chosen))


def delivered_per_round(run_dir: Path, bits: int) -> tuple[float, float]:
    """Uplink bits per round of one run that reached the server on time and late (after
    the deadline: carried, then dropped)."""
    from simfl.metrics.run_folders import read_table

    _, rounds = read_table(run_dir / "rounds.csv")
    n = max(len(rounds), 1)
    return (bits * sum(int(r["n_received"]) for r in rounds) / n,
            bits * sum(int(r["n_late"]) for r in rounds) / n)


def draw(out: Path, rows: list[dict], out_png: Path):
    """Accuracy against time, bits per round and time to target (module docstring): the
    log axis of bits fits every bar, and schemes that no seed brought to the target are
    named in the last panel (which says so when none did). Returns the (closed) figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from simfl.metrics.curves import build_lines
    from simfl.metrics.plot_style import legend_title, line_styles
    from simfl.metrics.run_folders import read_run
    from simfl.metrics.seed_means import mark_empty, mean_band, note_missing

    schemes = [s for s in SCHEMES if any(_scheme(r) == s["kind"] for r in rows)]
    heights: list[float] = []  # of the bars, to fit the log axis around every one
    not_reached: list[str] = []
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), gridspec_kw={"width_ratios": [2, 1, 1]})
    sizes = []
    for i, (s, style) in enumerate(zip(schemes, line_styles(len(schemes)))):
        runs = [r for r in rows if _scheme(r) == s["kind"]]
        line, = build_lines([read_run(out / r["run"]) for r in runs], "accuracy",
                            labels=[LABELS[s["kind"]]])
        sizes.append(len(line.runs))
        if line.lower is None and line.values is not None and len(line.runs) > 1:
            for seed_values in line.values:
                axes[0].plot(line.x, seed_values, drawstyle="steps-post", linewidth=0.6,
                             alpha=0.45, color=style.color)
        axes[0].plot(line.x, line.mean, drawstyle="steps-post", color=style.color,
                     label=line.label)
        if line.lower is not None:
            axes[0].fill_between(line.x, line.lower, line.upper, step="post",
                                 alpha=style.band_alpha, color=style.color, linewidth=0)
        bits = upload_bits(s)
        on_time, late = zip(*(delivered_per_round(out / r["run"], bits) for r in runs))
        (mean, half), late_mean = mean_band(on_time), sum(late) / len(late)
        axes[1].bar(i, mean, yerr=half, color=style.color, capsize=3)
        axes[1].bar(i, late_mean, bottom=mean, color=style.color, alpha=0.35, hatch="//")
        heights += [mean - half if mean - half > 0 else mean, mean + late_mean]
        axes[1].text(i, (mean + late_mean) * 1.15, f"{bits / 1e3:,.1f} kbit\nper upload",
                     ha="center", fontsize=7)
        reached = [r["time_to_target_s"] for r in runs if r["time_to_target_s"] is not None]
        if reached:
            mean, half = mean_band(reached)
            axes[2].errorbar(i, mean, yerr=half, fmt="o", color=style.color, capsize=4)
            axes[2].plot([i + 0.15] * len(reached), reached, "x", color=style.color,
                         markersize=4)
        else:
            not_reached.append(LABELS[s["kind"]])
        axes[2].annotate(f"{len(reached)}/{len(runs)}", (i, 0), xycoords=("data", "axes fraction"),
                         xytext=(0, 3), textcoords="offset points", ha="center", fontsize=7)
    axes[0].axhline(TARGET, color="grey", linestyle="--", linewidth=0.9, label=f"target {TARGET:g}")
    axes[0].set(xlabel="simulated time (s)", ylabel="test accuracy", ylim=(0, 1))
    axes[0].legend(fontsize=8, title=legend_title(sizes, "ci"), title_fontsize=8)
    axes[1].set(yscale="log", ylabel="uplink bits per round (hatched: late)")
    shown = [h for h in heights if h > 0]
    if shown:  # every bar's top inside the axis, with room for its label above
        axes[1].set_ylim(min(shown) / 4, max(shown) * 4)
    axes[2].set(ylabel=f"time to {TARGET:.0%} accuracy (s)")
    rounds = max(r["rounds"] for r in rows)
    if len(not_reached) == len(schemes):
        mark_empty(axes[2], f"{TARGET:.0%} accuracy not reached\nby any run (at most "
                   f"{rounds} rounds, {max(r['sim_time_s'] for r in rows):.0f} s)")
        axes[2].set_xlim(-0.5, len(schemes) - 0.5)
    elif not_reached:
        note_missing(axes[2], [f"not reached by any seed: {', '.join(not_reached)}"])
    for ax in axes[1:]:
        ax.set_xticks(range(len(schemes)), [LABELS[s["kind"]] for s in schemes], fontsize=8,
                      rotation=15)
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.suptitle("Compressed updates over a 250 kb/s uplink, 15 s deadline (mean over seeds, "
                 "95 % t-band or t-interval;\ncrosses: each seed; n/N: seeds that reached "
                 "the target)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out_png, dpi=100)
    plt.close(fig)
    return fig


def main(argv: list[str] | None = None) -> None:
    from simfl.campaign.study import run_study
    from simfl.metrics.seed_means import mean_band

    out, rows = run_study(scenario(), argv, description="Run the compression study and draw it.",
                          grid=GRID, quick_grid=QUICK_GRID, seeds=SEEDS,
                          quick_help="every scheme, three rounds, one seed")
    draw(out, rows, out / "compression.png")
    print(f"{'scheme':>6} {'bits/upload':>11} {'on time/rnd':>11} {'late':>5} {'round (s)':>9} "
          f"{'final acc':>9}  time to {TARGET:.0%} (s): mean ± 95% t, min-max, reached")
    for s in SCHEMES:
        runs = [r for r in rows if _scheme(r) == s["kind"]]
        if not runs:
            continue
        bits = upload_bits(s)
        on_time, late = zip(*(delivered_per_round(out / r["run"], bits) for r in runs))
        per_round = sum(on_time) / len(runs)
        late_share = sum(late) / (sum(on_time) + sum(late))
        length = sum(r["sim_time_s"] / max(r["rounds"], 1) for r in runs) / len(runs)
        final = sum(r["final_accuracy"] for r in runs) / len(runs)
        reached = [r["time_to_target_s"] for r in runs if r["time_to_target_s"] is not None]
        tta = (f"{mean_band(reached)[0]:6.1f} ± {mean_band(reached)[1]:5.1f}, "
               f"{min(reached):g}-{max(reached):g}" if reached else "-")
        print(f"{s['kind']:>6} {bits:11,d} {per_round:11.4g} {late_share:5.0%} {length:9.2f} "
              f"{final:9.3f}  "
              f"{tta}, {len(reached)}/{len(runs)}")
    print(f"figure: {out / 'compression.png'}")


if __name__ == "__main__":
    main()
