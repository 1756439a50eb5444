#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Warm start time of the lab control plane, measured with the same playbook people run.

    python bench/lab_start.py [--runs N]

Builds first when the cache is incomplete (that time is printed apart and not counted), then N times:
playbooks/lab.yml up (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, fake nodes Ready,
MPIJob CRD Established, MPI Operator holding its lease) and down again. Uses a run directory and cluster name
of its own, so a lab that is already up is not touched.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE_ROOT = os.environ.get("GPUOPS_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "gpuops")
TARGET_SECONDS = 30.0


def playbook(state, run_dir, env):
    extra = {"lab_state": state, "lab_control_plane_run_dir": run_dir, "lab_control_plane_cluster_name": "gpuops-bench",
             "lab_control_plane_build": False}
    ansible_playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    cmd = [ansible_playbook, "-i", os.path.join(REPO_ROOT, "inventories", "lab"), os.path.join(REPO_ROOT, "playbooks", "lab.yml"),
           "-e", json.dumps(extra)]
    started = time.monotonic()
    result = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-4000:] + result.stderr[-2000:])
        raise SystemExit("playbooks/lab.yml lab_state=%s failed" % state)
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    started = time.monotonic()
    build = subprocess.run([os.path.join(REPO_ROOT, "tools", "build_kube_binaries.sh")], capture_output=True, text=True, check=False)
    if build.returncode != 0:
        sys.stderr.write(build.stderr[-4000:])
        raise SystemExit("tools/build_kube_binaries.sh failed")
    print("build step: %.1f s (%s)" % (time.monotonic() - started, build.stderr.strip().splitlines()[-1]))

    with tempfile.TemporaryDirectory() as tmp:
        link_parent = os.path.join(tmp, "ansible_collections", "gpuops")
        os.makedirs(link_parent)
        os.symlink(REPO_ROOT, os.path.join(link_parent, "cluster"))
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO_ROOT, "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=tmp)
        env.pop("KUBECONFIG", None)
        run_dir = os.path.join(CACHE_ROOT, "lab", "bench-%d" % os.getpid())
        ups, downs = [], []
        try:
            for run in range(1, args.runs + 1):
                ups.append(playbook("present", run_dir, env))
                downs.append(playbook("absent", run_dir, env))
                print("run %d: up %.1f s, down %.1f s" % (run, ups[-1], downs[-1]))
        finally:
            if len(downs) < len(ups):
                playbook("absent", run_dir, env)

    median = statistics.median(ups)
    print("lab control plane warm start (playbooks/lab.yml up, %d runs): median %.1f s, min %.1f s, max %.1f s; "
          "down: median %.1f s; target < %.0f s: %s"
          % (len(ups), median, min(ups), max(ups), statistics.median(downs), TARGET_SECONDS, "met" if median < TARGET_SECONDS else "NOT met"))
    return 0 if median < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
