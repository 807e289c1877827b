"""The child process's entry point: run the one arm its JSON argument names and print the
result (with the process's own peak memory) as the last line."""

from __future__ import annotations

import json

from .cnn import arm_cnn
from .flower_arm import arm_flower
from .gpu import arm_gpu
from .kernel import arm_kernel
from .multicell import arm_multicell
from .pfl_workload import run_pfl_arm
from .reference_arms import arm_plain, arm_simfl
from .scale import arm_scale


def worker(argv: list[str]) -> None:
    """Child entry point: run one arm, print its result as the last line (JSON)."""
    import resource

    args = json.loads(argv[0])
    import torch

    torch.set_num_threads(args["threads"])
    arm = args["arm"]
    if arm in ("simfl_batched", "simfl_inline"):
        out = arm_simfl(arm.split("_")[1], args["model"], args["cohort"], args["rounds"])
    elif arm == "plain":
        out = arm_plain(args["model"], args["cohort"], args["rounds"])
    elif arm == "flower":
        out = arm_flower(args["model"], args["cohort"], args["rounds"])
    elif arm.startswith("pfl/"):
        out = run_pfl_arm(arm[len("pfl/"):], args["rounds"], args.get("device", "cpu"))
    elif arm == "kernel":
        out = arm_kernel(args["n_clients"], args["per_round"], args["rounds"])
    elif arm == "multicell":
        out = arm_multicell(args["n_clients"], args["per_round"], args["rounds"],
                            args["interference"])
    elif arm == "cnn":
        out = arm_cnn(args["cohorts"], args["repeats"])
    elif arm == "scale":
        out = arm_scale(args["n_clients"], args["contending"], args["rounds"], args["mac"],
                        args.get("radio", False), args.get("access_prob"),
                        args.get("channels", 4), args.get("uplink", "ideal"), args.get("arq"))
    else:
        out = arm_gpu(args["rounds"], args["device"], args["users"])
    out["self_max_rss_b"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print("\n" + json.dumps(out), flush=True)
