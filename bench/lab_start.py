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
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from gpuops_testlib.ansible_run import CACHE_ROOT, ansible_env  # noqa: E402  (tests/ is on sys.path only now)
from gpuops_testlib.lab_control_plane import LabError, build_binaries, checked_lab_playbook  # noqa: E402

CLUSTER_NAME = "gpuops-bench"
TARGET_SECONDS = 30.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    started = time.monotonic()
    try:
        build_log = build_binaries()[1]
    except LabError as error:
        raise SystemExit(str(error))
    print("build step: %.1f s (%s)" % (time.monotonic() - started, build_log.strip().splitlines()[-1]))

    with tempfile.TemporaryDirectory() as tmp:
        env = ansible_env(collections_dir=tmp, json_output=False)
        run_dir = os.path.join(CACHE_ROOT, "lab", "bench-%d" % os.getpid())
        ups, downs = [], []
        try:
            for run in range(1, args.runs + 1):
                ups.append(checked_lab_playbook("present", run_dir, CLUSTER_NAME, env))
                downs.append(checked_lab_playbook("absent", run_dir, CLUSTER_NAME, env))
                print("run %d: up %.1f s, down %.1f s" % (run, ups[-1], downs[-1]))
        except LabError as error:
            raise SystemExit(str(error))
        finally:
            if len(downs) < len(ups):
                checked_lab_playbook("absent", run_dir, CLUSTER_NAME, env)

    median = statistics.median(ups)
    print("lab control plane warm start (playbooks/lab.yml up, %d runs): median %.1f s, min %.1f s, max %.1f s; "
          "down: median %.1f s; target < %.0f s: %s"
          % (len(ups), median, min(ups), max(ups), statistics.median(downs), TARGET_SECONDS, "met" if median < TARGET_SECONDS else "NOT met"))
    return 0 if median < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
