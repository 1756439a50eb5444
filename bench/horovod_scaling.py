#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Horovod throughput on one lab node against two, measured side by side in one run.

Brings the lab nodes up on the workload image (tools/build_workload_image.sh, playbooks/lab_nodes.yml
with lab_nodes_image), then runs playbooks/verify_training.yml with the SSH launcher twice: on node1
alone, then on node1 and node2. Both verdicts come from gpuops.cluster.training_report; the second
run is given the first's per-rank figure as its baseline, so the report's scaling efficiency and
the ratio printed here are the same measurement.

    python3 bench/horovod_scaling.py                      # mpirun, the lab's defaults
    python3 bench/horovod_scaling.py --controller gloo -- --model small_cnn --batch-size 32

Every lab node is a container on this one machine: the "nodes" share its cores, so the figure says
how Horovod's communication and the node sharing cost, not how real hosts would scale.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from gpuops_testlib.ansible_run import CACHE_ROOT, REPO_ROOT, ansible_env, checked, run_playbook  # noqa: E402  (tests/ on sys.path)


def run(cmd, **kwargs):
    result = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, check=False, **kwargs)
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-4000:] + result.stderr[-4000:])
        sys.exit("horovod_scaling: %s failed (exit %d)" % (" ".join(cmd[:3]), result.returncode))
    return result.stdout


def playbook(name, inventory, extra, timeout=900):
    """playbooks/<name> to its end, its text output kept; stops the bench when it fails."""
    return checked(run_playbook(os.path.join("playbooks", name), inventory, extra, env=ansible_env(json_output=False),
                                timeout=timeout))


def verify(args, hosts, run_name, log_dir, baseline=None):
    extra = {
        "gpuops_launcher": "ssh",
        "ssh_launcher_controller": args.controller,
        "ssh_launcher_hosts": hosts,
        "ssh_launcher_slots_per_host": args.slots,
        "ssh_launcher_program_args": args.program_args,
        "ssh_launcher_log_path": os.path.join(log_dir, run_name + ".log"),
        "ssh_launcher_run_name": run_name,
        "training_benchmark_framework": args.framework,
        # This bench's own rank count and baseline, whatever the inventory sets for its usual runs.
        "gpuops_training_expect_ranks": len(hosts) * args.slots,
        "gpuops_training_baseline_img_per_sec": baseline,
    }
    started = time.monotonic()
    playbook("verify_training.yml", args.inventory, extra, timeout=1800)
    with open(os.path.join(log_dir, run_name + ".json"), encoding="utf-8") as handle:
        report = json.load(handle)
    report["elapsed_s"] = time.monotonic() - started
    return report


def describe(label, report):
    per_rank = ", ".join("%s %.1f" % (rank.get("host") or rank["rank"], rank["img_per_sec"])
                         for rank in sorted(report["per_rank"], key=lambda rank: rank["rank"]))
    return ("%-8s %d rank(s): %8.1f img/sec in total (+-%.1f), %7.1f per %s [%s]  (playbook %.0f s)"
            % (label, report["ranks"], report["img_per_sec_total"]["mean"], report["img_per_sec_total"]["spread"],
               report["img_per_sec_per_device"]["mean"], report["device"], per_rank, report["elapsed_s"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("-i", "--inventory", default=os.path.join(REPO_ROOT, "inventories", "lab"))
    parser.add_argument("--controller", choices=("mpi", "gloo"), default="mpi")
    parser.add_argument("--framework", choices=("tensorflow", "pytorch"), default="tensorflow")
    parser.add_argument("--slots", type=int, default=1, help="ranks per node")
    parser.add_argument("--nodes", nargs=2, default=["node1", "node2"], metavar=("FIRST", "SECOND"))
    parser.add_argument("--keep-nodes", action="store_true", help="leave the lab nodes on the workload image")
    parser.add_argument("--container-prefix", default="gpuops-lab-",
                        help="the inventory's lab_nodes_container_prefix (to tell whether the nodes were up before)")
    parser.add_argument("program_args", nargs="*", help="arguments of the benchmark program, after --")
    args = parser.parse_args()

    image = run(["bash", "tools/build_workload_image.sh", "--framework", args.framework]).strip().splitlines()[-1]
    were_up = subprocess.run(["podman", "container", "exists", args.container_prefix + args.nodes[0]],
                             check=False).returncode == 0
    playbook("lab_nodes.yml", args.inventory, {"lab_nodes_image": image})
    log_dir = os.path.join(CACHE_ROOT, "bench", "horovod_scaling")
    os.makedirs(log_dir, exist_ok=True)
    try:
        one = verify(args, args.nodes[:1], "one-node-%s" % args.controller, log_dir)
        baseline = one["img_per_sec_per_device"]["mean"]
        two = verify(args, args.nodes, "two-nodes-%s" % args.controller, log_dir, baseline=baseline)
    finally:
        # Leave the lab as it was: nodes that were up go back to the plain node image.
        if not args.keep_nodes:
            playbook("lab_nodes.yml", args.inventory, {"lab_state": "present" if were_up else "absent"})

    print("Horovod %s over SSH, %s, model %s, batch %s per rank, image %s"
          % (args.controller, two.get("framework"), two["model"], two["batch_size"], image))
    print(describe("1 node", one))
    print(describe("2 nodes", two))
    ratio = two["img_per_sec_total"]["mean"] / one["img_per_sec_total"]["mean"]
    print("ratio 2 nodes / 1 node, total img/sec: %.2f  (scaling efficiency %.0f %%; training_report says %s)"
          % (ratio, 100 * ratio * one["ranks"] / two["ranks"], two.get("scaling_efficiency")))
    print("reports: %s" % log_dir)


if __name__ == "__main__":
    main()
