#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Record real benchmark logs on the lab nodes for the training_report tests.

    make lab            # the lab nodes must be up
    python tools/record_training_logs.py [--only NAME ...] [--dest tests/unit/fixtures/training_logs]

Each recording is one run of playbooks/verify_training.yml with the SSH launcher (the path an HPC site
uses), with its own launcher, hosts, ranks and benchmark arguments; the launcher's log is copied
unchanged to DEST/lab_<name>.log. Two recordings are interrupted on purpose while they run, as jobs are
in real life: the launcher killed mid-run (a log that stops before the final result) and one rank killed
on node2 (a job that fails). Their playbook fails, which is expected; every other one must pass.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from gpuops_testlib.ansible_run import REPO_ROOT, ansible_env, run_playbook  # noqa: E402  (tests/ on sys.path)

VERIFY_PLAYBOOK = os.path.join(REPO_ROOT, "playbooks", "verify_training.yml")
LAB_INVENTORY = os.path.join(REPO_ROOT, "inventories", "lab")
DEFAULT_DEST = os.path.join(REPO_ROOT, "tests", "unit", "fixtures", "training_logs")
NODE_CONTAINER = "gpuops-lab-%s"
REMOTE_WORK_DIR = "/var/tmp/gpuops-training"


def lab_benchmark_args():
    """The benchmark arguments of the lab inventory (small_cnn on CPU, a few iterations)."""
    with open(os.path.join(REPO_ROOT, "inventories", "lab", "group_vars", "all.yml"), encoding="utf-8") as handle:
        return [str(arg) for arg in yaml.safe_load(handle)["lab_benchmark_args"]]


def with_iterations(args, iterations):
    """args with --num-iters replaced: long enough for a run to be interrupted half-way."""
    position = args.index("--num-iters")
    return args[:position + 1] + [str(iterations)] + args[position + 2:]


LAB = lab_benchmark_args()
# name: (controller, hosts, slots per host, benchmark arguments, interruption)
RECORDINGS = {
    "gloo_2node_tf": ("gloo", "node1,node2", 1, LAB, None),
    "gloo_1node_tf": ("gloo", "node1", 1, LAB, None),
    "mpi_2node_4rank_tf": ("mpi", "node1,node2", 2, LAB, None),
    "mpi_1node_2rank_tf": ("mpi", "node1", 2, LAB, None),
    "mpi_2node_knobs_tf": ("mpi", "node1,node2", 1, LAB + [
        "--fp16-allreduce", "--hierarchical-allreduce", "--fusion-threshold-mb", "32", "--cycle-time-ms", "2"], None),
    "gloo_2node_resnet50_tf": ("gloo", "node1,node2", 1, [
        "--framework", "tensorflow", "--device", "cpu", "--model", "resnet50", "--batch-size", "4", "--image-size", "64",
        "--num-warmup-batches", "1", "--num-iters", "3", "--num-batches-per-iter", "1"], None),
    "gloo_2node_launcher_killed": ("gloo", "node1,node2", 1, with_iterations(LAB, 40), ("launcher", "Iter #3")),
    "mpi_2node_rank_killed": ("mpi", "node1,node2", 1, with_iterations(LAB, 40), ("rank on node2", "Iter #3")),
}


def remote_log(run_name):
    """The launcher's log as it is being written on node1, or '' before it exists."""
    result = subprocess.run(["podman", "exec", NODE_CONTAINER % "node1", "cat", "%s/%s.log" % (REMOTE_WORK_DIR, run_name)],
                            capture_output=True, text=True, check=False)
    return result.stdout if result.returncode == 0 else ""


def interrupt(run_name, what, after_line, done):
    """Waits until the log shows after_line, then kills the launcher on node1 or the ranks on node2."""
    deadline = time.monotonic() + 600
    while not done.is_set() and time.monotonic() < deadline:
        if after_line in remote_log(run_name):
            if what == "launcher":
                target, pattern = "node1", "horovodrun|mpirun"
            else:
                target, pattern = "node2", "gpuops_benchmark.py"
            subprocess.run(["podman", "exec", NODE_CONTAINER % target, "pkill", "-KILL", "-f", pattern], check=False)
            print("  killed the %s after %r appeared" % (what, after_line), flush=True)
            return
        time.sleep(0.5)


def record(name, spec, dest, log_dir, env):
    controller, hosts, slots, program_args, interruption = spec
    run_name = "record-" + name.replace("_", "-")
    extra = {"gpuops_launcher": "ssh", "ssh_launcher_controller": controller, "gpuops_training_hosts": hosts,
             "ssh_launcher_slots_per_host": slots, "ssh_launcher_program_args": program_args,
             "ssh_launcher_run_name": run_name,
             "ssh_launcher_log_path": os.path.join(log_dir, run_name + ".log"),
             "gpuops_training_expect_ranks": len(hosts.split(",")) * slots, "gpuops_training_baseline_img_per_sec": None,
             "gpuops_training_baseline_report": None}
    print("%s: %s, hosts %s, %d slot(s) each" % (name, controller, hosts, slots), flush=True)
    done = threading.Event()
    watcher = None
    if interruption:
        watcher = threading.Thread(target=interrupt, args=(run_name,) + interruption + (done,))
        watcher.start()
    started = time.monotonic()
    result = run_playbook(VERIFY_PLAYBOOK, LAB_INVENTORY, extra, env=env, timeout=1800)
    done.set()
    if watcher:
        watcher.join()
    source = os.path.join(log_dir, run_name + ".log")
    if not os.path.exists(source):
        sys.stderr.write(result.stdout[-4000:])
        raise SystemExit("%s: no log was fetched" % name)
    if interruption is None and result.rc != 0:
        sys.stderr.write(result.stdout[-4000:])
        raise SystemExit("%s: the playbook failed" % name)
    target = os.path.join(dest, "lab_%s.log" % name)
    shutil.copyfile(source, target)
    print("  %s (%.0f s, playbook rc=%d)" % (os.path.relpath(target, REPO_ROOT), time.monotonic() - started,
                                             result.rc), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(RECORDINGS), help="record only these")
    parser.add_argument("--dest", default=DEFAULT_DEST)
    args = parser.parse_args()
    for container in ("node1", "node2"):
        if subprocess.run(["podman", "container", "exists", NODE_CONTAINER % container], check=False).returncode != 0:
            raise SystemExit("the lab node %s is not running: start the lab with make lab first" % container)
    env = ansible_env(json_output=False)
    with tempfile.TemporaryDirectory() as log_dir:
        for name in args.only or RECORDINGS:
            record(name, RECORDINGS[name], args.dest, log_dir, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
