"""The benchmark's command line: the options, the machine's description and load, each
workload's arms run through the harness, the tables, and the JSON of every result."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

from .flops import matmul_peak_gflops
from .flower_arm import flower_available
from .harness import ROOT, run_arm
from .multicell import MULTICELL_VARIANTS, multicell_table
from .reference import ALL_ARMS, BATCH, N_CLIENTS, REFERENCE_ARMS, WARMUP_ROUNDS, steady_median_ms
from .pfl_workload import PFL_ARMS, PER_USER, BATCH as PFL_BATCH, COHORT, pfl_available
from .tables import cnn_table, kernel_table, pfl_table, reference_table


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main(description: str) -> None:
    """Parse the command line (``description``: its help's first line) and run it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--arms", default=",".join(ALL_ARMS),
                        help=f"comma-separated subset of {','.join(ALL_ARMS)}")
    parser.add_argument("--models", default="logreg,mlp")
    parser.add_argument("--cohorts", default="10,100")
    parser.add_argument("--rounds", type=int, default=20, help="reference rounds (default 20)")
    parser.add_argument("--scale-rounds", type=int, default=100)
    parser.add_argument("--scale-clients", type=int, default=10**6)
    parser.add_argument("--scale-contending", type=int, default=10**4)
    parser.add_argument("--scale-mac", default="slotted_aloha",
                        choices=("slotted_aloha", "slotted_aloha_vectorised", "ideal"),
                        help="uplink access of the scale workload (ideal if aloha is not "
                             "registered; _vectorised: the cohort contention model)")
    parser.add_argument("--scale-access-prob", type=float, default=None,
                        help="slotted ALOHA's access probability in the scale workload "
                             "(default 1 / --scale-contending)")
    parser.add_argument("--scale-channels", type=int, default=4,
                        help="slotted ALOHA's access channels in the scale workload (default 4)")
    parser.add_argument("--scale-uplink", default="ideal",
                        help="the scale workload's uplink: ideal (default), quickstart (the "
                             "quickstart scenario's lossy uplink and its ARQ attempts) or a "
                             "channel kind with its defaults (e.g. gilbert_elliott)")
    parser.add_argument("--scale-arq", type=int, default=None,
                        help="ARQ attempts of the scale workload's uplink (default: "
                             "quickstart's with its uplink, else 1)")
    parser.add_argument("--scale-radio", action="store_true",
                        help="place the scale workload's clients in a 500 m disc around one "
                             "access point, with the shared radio (8 dB shadowing)")
    parser.add_argument("--pfl-rounds", type=int, default=4,
                        help="rounds of each pfl-workload arm per repetition; the first is "
                             "a warm-up (default 4)")
    parser.add_argument("--pfl-repeats", type=int, default=3,
                        help="interleaved repetitions of the pfl workload's arms (default 3)")
    parser.add_argument("--pfl-core", type=int, default=0,
                        help="the core the pfl workload's arms are pinned to")
    parser.add_argument("--pfl-device", default="cpu",
                        help="the device of the pfl workload's arms (cpu, or cuda on a GPU)")
    parser.add_argument("--gpu-device", default="cuda", help="device of the gpu workload")
    parser.add_argument("--cnn-repeats", type=int, default=3,
                        help="measured repetitions of each cnn cell (after one warm-up)")
    parser.add_argument("--cnn-core", type=int, default=0,
                        help="the core the cnn workload is pinned to")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="torch threads of each arm (default: every core)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: 6 reference rounds, 3 scale rounds, 3 gpu rounds of 100 users")
    parser.add_argument("--timeout-s", type=float, default=900.0, help="per reference/gpu arm")
    parser.add_argument("--scale-timeout-s", type=float, default=300.0,
                        help="of the scale workload (its target is 60 s)")
    parser.add_argument("--json", type=Path, help="also write every result here")
    parser.add_argument("--multicell-clients", type=int, default=10**5)
    parser.add_argument("--multicell-per-round", type=int, default=285,
                        help="clients invited per round in the multicell workload (default "
                             "285: 5 per cell)")
    parser.add_argument("--multicell-rounds", type=int, default=3)
    parser.add_argument("--multicell-repeats", type=int, default=3,
                        help="interleaved repetitions of each multicell variant (default 3)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing simfl
    arms = [a for a in args.arms.split(",") if a]
    unknown = set(arms) - set(ALL_ARMS)
    if unknown:
        parser.error(f"unknown arms {sorted(unknown)}; choose from {', '.join(ALL_ARMS)}")
    rounds = 6 if args.quick else args.rounds
    scale_rounds = 3 if args.quick else args.scale_rounds
    import torch

    peak = matmul_peak_gflops(args.threads)
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, python {platform.python_version()}, "
          f"torch {torch.__version__}, {args.threads} torch threads per arm")
    print(f"fp32 matmul peak (2048^3 GEMM, best of 10): {peak:.0f} GFLOP/s")
    # with every core given to torch, any other busy process stalls each multi-threaded
    # op (seen: 10x and more); the load average says whether the machine was quiet
    print(f"load average at start (1/5/15 min): {_load()}\n")
    report: dict = {"matmul_peak_gflops": peak, "threads": args.threads, "reference": {},
                    "load_at_start": os.getloadavg()}
    problems = []

    reference = [a for a in arms if a in REFERENCE_ARMS]
    if "flower" in reference and not flower_available():
        print("flower: skipped (flwr[simulation] not installed: pip install -e '.[bench]' "
              "into a separate environment)\n")
        reference.remove("flower")
    results: dict = {}
    for model in args.models.split(","):
        for cohort in (int(c) for c in args.cohorts.split(",")):
            for arm in reference:
                spec = {"arm": arm, "model": model, "cohort": cohort, "rounds": rounds,
                        "threads": args.threads}
                r = run_arm(spec, args.timeout_s)
                if "round_s" in r:
                    r["ms"] = steady_median_ms(r["round_s"])
                if arm.startswith("simfl") and "error" not in r and \
                        r["trained_updates"] != r["aggregated_updates"]:
                    problems.append(f"{arm} {model} K={cohort}: trained {r['trained_updates']} "
                                    f"!= aggregated {r['aggregated_updates']}")
                results.setdefault((model, cohort), {})[arm] = r
                took = r.get("error") or f"{r['ms']:.1f} ms/round"
                print(f"  done: {model} K={cohort} {arm}: {took}", file=sys.stderr)
    if results:
        print(f"reference workload: FedAvg, mnist5k, {N_CLIENTS} clients x 40 samples, batch {BATCH}, "
              f"1 local epoch, {rounds} rounds; median ms per round after {WARMUP_ROUNDS} warm-up "
              "rounds, evaluation included; 'vs X' = X's time / this arm's time")
        print("\n".join(reference_table(results, peak)) + "\n")
        report["reference"] = {f"{m}/{k}": v for (m, k), v in results.items()}

    if "cnn" in arms:
        cohorts = [int(c) for c in args.cohorts.split(",")]
        repeats = 1 if args.quick else args.cnn_repeats
        r = run_arm({"arm": "cnn", "cohorts": cohorts, "repeats": repeats, "threads": 1,
                     "core": args.cnn_core}, args.timeout_s)
        report["cnn"] = r
        if "error" in r:
            print(f"cnn workload: {r['error']}\n")
        else:
            print("\n".join(cnn_table(r, cohorts, args.cnn_core)) + "\n")

    if "scale" in arms:
        r = run_arm({"arm": "scale", "n_clients": args.scale_clients, "threads": args.threads,
                     "contending": args.scale_contending, "rounds": scale_rounds,
                     "mac": args.scale_mac, "radio": args.scale_radio,
                     "access_prob": args.scale_access_prob, "channels": args.scale_channels,
                     "uplink": args.scale_uplink, "arq": args.scale_arq},
                    args.scale_timeout_s)
        report["scale"] = r
        if "error" in r:
            print(f"scale workload (MAC {args.scale_mac} if registered): {r['error']}\n")
        else:
            if r["trained_updates"] != r["aggregated_updates"]:
                problems.append("scale: trained_updates != aggregated_updates")
            print(f"scale workload: timing only, {args.scale_clients:,} registered clients, "
                  f"{args.scale_contending:,} invited per round, MAC {r['mac']}, {r['rounds']} rounds, "
                  f"uplink {r['uplink']} ({r['arq']} ARQ attempt(s))"
                  + (", placed clients on the shared radio" if args.scale_radio else "")
                  + (f", access_prob {args.scale_access_prob or 1 / args.scale_contending:g} "
                     f"on {args.scale_channels} channel(s)" if "aloha" in r["mac"] else ""))
            tx = r.get("transmissions")
            print(f"  wall {r['wall_s']:.1f} s (CPU {r['cpu_s']:.1f} s), {r['events']:,} events, "
                  f"{r['events'] / r['wall_s']:,.0f} events/s, peak {r['peak_b'] / 2**30:.2f} GB"
                  + ("" if tx is None else
                     f", {tx:,} transmissions, {tx / r['wall_s']:,.0f} transmissions/s") + "\n")

    if "pfl" in arms:
        rounds_pfl = 2 if args.quick else args.pfl_rounds
        repeats = 1 if args.quick else args.pfl_repeats
        if not pfl_available():
            print("pfl: its arm is skipped (pfl is not installed in this environment: "
                  "pip install -e '.[pfl]' into a separate one)")
        runs: dict = {arm: [] for arm in PFL_ARMS}
        for rep in range(repeats):  # arms interleaved: A, B, C, A, B, C, ...
            for arm in PFL_ARMS:
                r = run_arm({"arm": f"pfl/{arm}", "rounds": rounds_pfl, "threads": 1,
                             "core": args.pfl_core, "device": args.pfl_device}, args.timeout_s)
                runs[arm].append(r)
                took = r.get("error") or r.get("skipped") or f"{sum(r['cpu_s']):.1f} CPU s"
                print(f"  done: pfl workload {arm} (repetition {rep + 1}): {took}", file=sys.stderr)
        report["pfl"] = runs
        print(f"pfl workload: pfl-research's CIFAR-10 benchmark setting on synthetic CIFAR-shaped "
              f"data (1,000 users x {PER_USER} images of 32x32x3, cohort {COHORT}, 1 local "
              f"epoch at batch {PFL_BATCH}, simple_cnn of 1,626,442 parameters); {rounds_pfl} "
              f"rounds per arm and repetition (the first a warm-up), {repeats} repetitions "
              f"interleaved, one torch thread, pinned to core {args.pfl_core}, on "
              f"{args.pfl_device}; simfl_network: "
              "OFDMA on the shared radio with fading, losses and a 30 s deadline (it trains "
              "only the updates that arrive)")
        print("\n".join(pfl_table(runs, rounds_pfl * COHORT, PER_USER // PFL_BATCH)) + "\n")

    if "kernel" in arms:
        runs = [run_arm({"arm": "kernel", "n_clients": 10**5, "per_round": 10**4,
                         "rounds": 3 if args.quick else 20, "threads": 1,
                         "core": args.pfl_core}, args.scale_timeout_s)
                for _ in range(1 if args.quick else 3)]
        report["kernel"] = runs
        print("\n".join(kernel_table(runs, args.pfl_core)) + "\n")

    if "multicell" in arms:  # interference on and off, interleaved, pinned, one thread
        runs = {variant: [] for variant in MULTICELL_VARIANTS}
        for rep in range(1 if args.quick else args.multicell_repeats):
            for variant in MULTICELL_VARIANTS:
                r = run_arm({"arm": "multicell", "n_clients": args.multicell_clients,
                             "per_round": args.multicell_per_round, "threads": 1,
                             "rounds": 1 if args.quick else args.multicell_rounds,
                             "interference": variant, "core": args.pfl_core},
                            args.scale_timeout_s)
                runs[variant].append(r)
                took = r.get("error") or f"{r['cpu_s']:.1f} CPU s"
                print(f"  done: multicell {variant} (repetition {rep + 1}): {took}",
                      file=sys.stderr)
        report["multicell"] = runs
        print("\n".join(multicell_table(runs, args.multicell_clients,
                                         args.multicell_per_round, args.pfl_core)) + "\n")

    if "gpu" in arms:
        users = 100 if args.quick else 1000
        r = run_arm({"arm": "gpu", "rounds": 3 if args.quick else 20, "device": args.gpu_device,
                     "users": users, "threads": args.threads}, args.timeout_s)
        report["gpu"] = r
        if "error" in r or "skipped" in r:
            print(f"gpu workload: {r.get('error') or 'skipped: ' + r['skipped']}\n")
        else:
            print(f"gpu workload ({r['device']}): {users} users x 50 random 3x32x32 images, "
                  f"FedAvg's CNN, cohort 50, 5 steps at batch 10, batched executor: "
                  f"{r['updates_per_s']:,.1f} client updates/s "
                  f"({steady_median_ms(r['round_s']):.1f} ms/round)\n")

    print(f"load average at end (1/5/15 min): {_load()}")
    report["load_at_end"] = os.getloadavg()
    print("trained_updates == aggregated_updates in every simfl run:",
          "yes" if not problems else "NO\n  " + "\n  ".join(problems))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))
