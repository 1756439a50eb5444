#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bulk node labelling: gpuops.cluster.node_labels against a loop of kubernetes.core.k8s tasks, side by side.

    python bench/label_nodes.py [--nodes 1000] [--kubeconfig PATH] [--parallelism 16] [--loop-nodes K]

Creates N plain Node objects on the lab control plane (started here with playbooks/lab.yml, under a run
directory and cluster name of its own, unless --kubeconfig names a running one), then times, each as a whole
ansible-playbook run:
  1. kubernetes.core.k8s, state: patched, looped over the N nodes, setting 4 labels;
  2. gpuops.cluster.node_labels setting 4 other labels on the same N nodes in one task;
  3. the same node_labels task again, when nothing is left to change.
Both runs change every node (different label keys), so each does N real patches. Targets: (1)/(2) >= 10,
and (3) < 10 s. The nodes are deleted at the end. The lab has no kubelet; the apiserver stores the labels.
--loop-nodes K runs the k8s loop over the first K nodes only and scales its time to N, and says so: the loop
costs seconds per node, the comparison is meant for all N.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from gpuops_testlib.ansible_run import CACHE_ROOT, REPO_ROOT, ansible_env, checked, run_playbook  # noqa: E402  (tests/ on sys.path)
from gpuops_testlib.lab_control_plane import LabError, checked_lab_playbook  # noqa: E402

CLUSTER_NAME = "gpuops-bench-labels"
BULK_PLAYBOOK = os.path.join(REPO_ROOT, "bench", "playbooks", "label_nodes_bulk.yml")
LOOP_PLAYBOOK = os.path.join(REPO_ROOT, "bench", "playbooks", "label_nodes_k8s_loop.yml")
NODE_PREFIX = "bench-label-"
TARGET_RATIO = 10.0
TARGET_NO_CHANGE_SECONDS = 10.0

LOOP_LABELS = {"bench.gpuops.io/loop-gpu-present": "true", "bench.gpuops.io/loop-gpu-product": "NVIDIA-H100-80GB-HBM3",
               "bench.gpuops.io/loop-gpu-count": "8", "bench.gpuops.io/loop-rack": "r01"}
BULK_LABELS = {"bench.gpuops.io/bulk-gpu-present": "true", "bench.gpuops.io/bulk-gpu-product": "NVIDIA-H100-80GB-HBM3",
               "bench.gpuops.io/bulk-gpu-count": "8", "bench.gpuops.io/bulk-rack": "r01"}


def timed_playbook(env, playbook, extra):
    """One whole ansible-playbook run: (seconds, how many changes it reported)."""
    done = checked(run_playbook(playbook, extra_vars=extra, env=env))
    return done.seconds, done.host_stats("localhost").get("changed", 0)


def lab_playbook(state, run_dir, env):
    try:
        return checked_lab_playbook(state, run_dir, CLUSTER_NAME, dict(env, ANSIBLE_STDOUT_CALLBACK="default"))
    except LabError as error:
        raise SystemExit(str(error))


def create_nodes(core, names):
    def create(name):
        core.create_node({"apiVersion": "v1", "kind": "Node",
                          "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}})

    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(create, names))


def delete_nodes(core, names):
    from kubernetes.client.exceptions import ApiException

    def delete(name):
        try:
            core.delete_node(name)
        except ApiException as error:
            if error.status != 404:
                raise

    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(delete, names))


def verify(core, names, labels):
    nodes = dict((n.metadata.name, n.metadata.labels or {}) for n in core.list_node().items)
    wrong = [name for name in names if any(nodes.get(name, {}).get(k) != v for k, v in labels.items())]
    if wrong:
        raise SystemExit("%d node(s) lack the labels, e.g. %s" % (len(wrong), wrong[:5]))


def bench(kubeconfig, env, count, parallelism, loop_count):
    from kubernetes import client, config

    core = client.CoreV1Api(config.new_client_from_config(config_file=kubeconfig))
    names = ["%s%04d" % (NODE_PREFIX, index) for index in range(count)]
    stale = [n.metadata.name for n in core.list_node().items if n.metadata.name.startswith(NODE_PREFIX)]
    delete_nodes(core, stale)
    started = time.monotonic()
    create_nodes(core, names)
    print("created %d Node objects in %.1f s" % (count, time.monotonic() - started), flush=True)
    try:
        extra = {"bench_kubeconfig": kubeconfig, "bench_nodes": names, "bench_parallelism": parallelism}
        loop_names = names[:loop_count]
        loop_extra = dict(extra, bench_nodes=loop_names, bench_labels=LOOP_LABELS)
        loop_seconds, loop_changed = timed_playbook(env, LOOP_PLAYBOOK, loop_extra)
        verify(core, loop_names, LOOP_LABELS)
        print("kubernetes.core.k8s loop, %d tasks: %.1f s (changed=%d)" % (loop_count, loop_seconds, loop_changed))
        if loop_count != count:
            loop_seconds = loop_seconds * count / loop_count
            print("  scaled to %d nodes: %.1f s (EXTRAPOLATED from %d)" % (count, loop_seconds, loop_count))
        bulk_seconds, bulk_changed = timed_playbook(env, BULK_PLAYBOOK, dict(extra, bench_labels=BULK_LABELS))
        verify(core, names, BULK_LABELS)
        print("gpuops.cluster.node_labels, 1 task, parallelism %d: %.1f s (changed=%d)"
              % (parallelism, bulk_seconds, bulk_changed))
        again_seconds, again_changed = timed_playbook(env, BULK_PLAYBOOK, dict(extra, bench_labels=BULK_LABELS))
        print("gpuops.cluster.node_labels, no-change re-run: %.1f s (changed=%d)" % (again_seconds, again_changed))
    finally:
        delete_nodes(core, names)
    ratio = loop_seconds / bulk_seconds
    ok = ratio >= TARGET_RATIO and again_seconds < TARGET_NO_CHANGE_SECONDS and again_changed == 0
    print("%d nodes x 4 labels: k8s loop %.1f s, node_labels %.1f s, ratio %.1fx (target >= %.0fx); "
          "no-change re-run %.1f s (target < %.0f s): %s"
          % (count, loop_seconds, bulk_seconds, ratio, TARGET_RATIO, again_seconds, TARGET_NO_CHANGE_SECONDS,
             "met" if ok else "NOT met"))
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--parallelism", type=int, default=16)
    parser.add_argument("--loop-nodes", type=int, help="time the k8s loop on this many nodes and scale (default: all)")
    parser.add_argument("--kubeconfig", help="a running control plane; by default a lab is started and stopped here")
    args = parser.parse_args()
    loop_count = min(args.loop_nodes or args.nodes, args.nodes)

    with tempfile.TemporaryDirectory() as tmp:
        env = ansible_env(collections_dir=tmp)
        if args.kubeconfig:
            return bench(args.kubeconfig, env, args.nodes, args.parallelism, loop_count)
        run_dir = os.path.join(CACHE_ROOT, "lab", "bench-labels-%d" % os.getpid())
        print("lab control plane up in %.1f s" % lab_playbook("present", run_dir, env))
        try:
            return bench(os.path.join(run_dir, "kubeconfig"), env, args.nodes, args.parallelism, loop_count)
        finally:
            lab_playbook("absent", run_dir, env)


if __name__ == "__main__":
    sys.exit(main())
