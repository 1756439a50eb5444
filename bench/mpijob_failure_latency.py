#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How soon a worker killed mid-run is reported: gpuops.cluster.mpijob against a generic kubernetes.core wait.

    make lab    # first: the lab whose nodes run real pods
    python bench/mpijob_failure_latency.py [--repeat N] [--generic-timeout S]

Both are run the way users run them, one ansible-playbook per trial, side by side on the lab's cluster (real
kube-apiserver, MPI Operator in a pod, kubelets running the pods in the podman nodes). Each trial creates a
two-worker MPIJob whose ranks train the benchmark (TensorFlow on CPU), waits until the first iteration is in the
launcher's log, then SIGKILLs worker 1's main process on its node, as a crash or the OOM killer would. The
figure is the time from the moment the worker pod's phase turned Failed (as read from the API, every 0.1 s) to
the end of ansible-playbook.

gpuops.cluster.mpijob waits with wait=true (its failure predicate ends the wait). The generic wait is the same
job created with wait=false, then kubernetes.core.k8s_info with wait_condition type=Succeeded, which knows no
failure and waits until its wait_timeout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from gpuops_testlib.ansible_run import finish, start_playbook  # noqa: E402  (tests/ on sys.path)
from gpuops_testlib.lab_pods import (  # noqa: E402
    LAB_KUBECONFIG, job_play, kill_worker, kubectl, launcher_log, mpijob_args, pod_failed, wait_for,
)

WAITS = {"mpijob": "gpuops.cluster.mpijob wait=true", "k8s": "kubernetes.core.k8s_info wait_condition=Succeeded"}


def tasks(method, namespace, name, timeout):
    if method == "mpijob":
        return [{"name": "wait", "register": "out", "ignore_errors": True,
                 "gpuops.cluster.mpijob": mpijob_args(namespace, name, gpus_per_worker=2, wait_timeout=timeout)}]
    return [{"name": "create", "gpuops.cluster.mpijob": mpijob_args(namespace, name, gpus_per_worker=2, wait=False)},
            {"name": "wait", "register": "out", "ignore_errors": True, "kubernetes.core.k8s_info": {
                "kubeconfig": LAB_KUBECONFIG, "api_version": "kubeflow.org/v2beta1", "kind": "MPIJob",
                "namespace": namespace, "name": name, "wait": True,
                "wait_condition": {"type": "Succeeded", "status": "True"}, "wait_timeout": timeout}}]


def trial(tmp, method, timeout):
    namespace = "bench-%s" % uuid.uuid4().hex[:6]
    name = "killed"
    kubectl("create", "namespace", namespace)
    try:
        started = start_playbook(job_play(os.path.join(tmp, "%s-%s.yml" % (method, namespace)),
                                          tasks(method, namespace, name, timeout)))
        try:
            wait_for(lambda: "Iter #" in launcher_log(namespace, name), 600, "the benchmark's first iteration")
            kill_worker(namespace, name + "-worker-1")
            wait_for(lambda: pod_failed(namespace, name + "-worker-1"), 60, "the worker pod's phase Failed")
            failed_at = time.time()
            done = finish(started, timeout=timeout + 120)
            latency = time.time() - failed_at
        finally:
            if started[1].poll() is None:
                started[1].kill()
        result = [task for task in done.document["plays"][0]["tasks"] if task["task"]["name"] == "wait"][0]
        result = result["hosts"]["localhost"]
        return latency, ("FAILED: " + result.get("msg", "")) if result.get("failed") else "ok"
    finally:
        # Gone before the next trial: its pods hold the nodes' GPUs until then.
        kubectl("delete", "namespace", namespace, "--wait=true", "--timeout=300s", check=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="trials of gpuops.cluster.mpijob")
    parser.add_argument("--generic-timeout", type=int, default=60,
                        help="wait_timeout of both waits (the generic one runs into it)")
    args = parser.parse_args()
    if kubectl("get", "--raw=/readyz", check=False).returncode != 0:
        raise SystemExit("the lab is not up (no API server behind %s): run make lab first" % LAB_KUBECONFIG)

    rows = {"mpijob": [], "k8s": []}
    with tempfile.TemporaryDirectory() as tmp:
        for method, repeat in (("mpijob", args.repeat), ("k8s", 1)):
            for index in range(repeat):
                latency, outcome = trial(tmp, method, args.generic_timeout)
                rows[method].append(latency)
                print("%-7s trial %d: %6.2f s  %s" % (method, index + 1, latency, outcome[:150]))
                sys.stdout.flush()

    mpijob = statistics.median(rows["mpijob"])
    generic = statistics.median(rows["k8s"])
    print()
    print("worker killed -> ansible-playbook returned, real pods (wait_timeout %d s)" % args.generic_timeout)
    print("%-50s | %s" % ("wait", "seconds (median, n)"))
    print("%-50s | %6.2f (n=%d)" % (WAITS["mpijob"], mpijob, len(rows["mpijob"])))
    print("%-50s | %6.2f (n=%d)  %.0fx slower" % (WAITS["k8s"], generic, len(rows["k8s"]), generic / mpijob))


if __name__ == "__main__":
    main()
