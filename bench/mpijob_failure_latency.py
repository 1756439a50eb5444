#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How soon a failed MPIJob is reported: gpuops.cluster.mpijob against a generic kubernetes.core.k8s wait.

    python bench/mpijob_failure_latency.py [--kubeconfig PATH] [--repeat N] [--generic-timeout S]

Both are run the way users run them, one ansible-playbook per trial, side by side on the same lab
control plane (real kube-apiserver and MPI Operator, pods simulated by kwok). In each trial an MPIJob is
created and waited for; once its two workers run, one worker is failed at a recorded time, the way the
kubelet reports a dead container (phase Failed, exit code 137), and the time from that failure to the
end of ansible-playbook is measured. Two failures are tried:

* crash: the rank's container dies (OOMKilled). The MPI Operator only counts the failed worker; the job
  would fail later, once mpirun on the launcher notices and the launcher's retries are spent.
* evicted: the kubelet evicts the worker. The MPI Operator sets the MPIJob's Failed condition itself.

gpuops.cluster.mpijob waits with wait=true (its failure predicate ends the wait); kubernetes.core.k8s
waits with wait_condition type=Succeeded, which knows no failure and waits until its wait_timeout.

The launcher pod is held Pending by a scheduling gate: kwok would otherwise complete it at once and the
job would succeed before a worker could fail. Without --kubeconfig a lab control plane of its own is
started with playbooks/lab.yml in a temporary run directory and stopped at the end.
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
from gpuops_testlib.ansible_run import ansible_env, finish, start_playbook, write_play  # noqa: E402  (tests/ on sys.path)
from gpuops_testlib.lab_control_plane import LabError, checked_lab_playbook  # noqa: E402

JOB_NAME_LABEL = "training.kubeflow.org/job-name"
CLUSTER_NAME = "gpuops-bench-mpijob"

FAILURES = {
    "crash": {"exit_code": 137, "container_reason": "OOMKilled", "reason": None, "message": None},
    "evicted": {"exit_code": 137, "container_reason": "Error", "reason": "Evicted",
                "message": "The node was low on resource: memory."},
}


def lab(state, run_dir, env):
    try:
        checked_lab_playbook(state, run_dir, CLUSTER_NAME, dict(env, ANSIBLE_STDOUT_CALLBACK="default"))
    except LabError as error:
        raise SystemExit(str(error))


def held_job(namespace, name):
    def template(role, gates=()):
        spec = {"containers": [{"name": role, "image": "localhost/gpuops-horovod:simulated", "imagePullPolicy": "Never",
                                "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}]}
        if gates:
            spec["schedulingGates"] = [{"name": gate} for gate in gates]
        return {"spec": spec}

    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": name, "namespace": namespace},
            "spec": {"slotsPerWorker": 1, "runPolicy": {"cleanPodPolicy": "None"},
                     "launcherCreationPolicy": "WaitForWorkersReady",
                     "mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": template("launcher", ["gpuops.io/lab-hold"])},
                                         "Worker": {"replicas": 2, "template": template("worker")}}}}


def wait_task(method, kubeconfig, definition, timeout):
    if method == "mpijob":
        module = {"gpuops.cluster.mpijob": {"kubeconfig": kubeconfig, "definition": definition, "wait": True,
                                            "wait_timeout": timeout}}
    else:
        module = {"kubernetes.core.k8s": {"kubeconfig": kubeconfig, "state": "present", "definition": definition,
                                          "wait": True, "wait_condition": {"type": "Succeeded", "status": "True"},
                                          "wait_timeout": timeout}}
    return dict({"name": "wait", "register": "out", "ignore_errors": True}, **module)


def fail_worker(core, namespace, pod_name, failure):
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    container = core.read_namespaced_pod(pod_name, namespace).spec.containers[0]
    status = {"phase": "Failed",
              "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": now},
                             {"type": "ContainersReady", "status": "False", "lastTransitionTime": now}],
              "containerStatuses": [{"name": container.name, "image": container.image, "imageID": "", "ready": False,
                                     "restartCount": 0, "started": False,
                                     "state": {"terminated": {"exitCode": failure["exit_code"],
                                                              "reason": failure["container_reason"],
                                                              "startedAt": now, "finishedAt": now}}}]}
    if failure["reason"]:
        status.update(reason=failure["reason"], message=failure["message"])
    core.patch_namespaced_pod_status(pod_name, namespace, {"status": status})


def trial(core, env, tmp, kubeconfig, method, kind, timeout):
    from kubernetes import client

    namespace = "bench-%s" % uuid.uuid4().hex[:6]
    name = "fail-%s" % kind
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
    try:
        deadline = time.monotonic() + 60
        while not core.list_namespaced_service_account(namespace, field_selector="metadata.name=default").items:
            if time.monotonic() > deadline:
                raise SystemExit("no default service account in %s" % namespace)
            time.sleep(0.2)
        play = [{"name": "bench", "hosts": "localhost", "connection": "local", "gather_facts": False,
                 "vars": {"ansible_python_interpreter": sys.executable},
                 "tasks": [wait_task(method, kubeconfig, held_job(namespace, name), timeout)]}]
        started = start_playbook(write_play(os.path.join(tmp, "%s-%s.yml" % (method, kind)), play), env=env)
        process = started[1]
        deadline = time.monotonic() + 60
        while True:
            pods = core.list_namespaced_pod(namespace, label_selector="%s=%s" % (JOB_NAME_LABEL, name)).items
            running = [p for p in pods if "-worker-" in p.metadata.name and p.status.phase == "Running"]
            if len(running) == 2 and any("-launcher" in p.metadata.name for p in pods):
                break
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise SystemExit("the job's workers never ran (%s)" % [(p.metadata.name, p.status.phase) for p in pods])
            time.sleep(0.2)
        time.sleep(3)
        failed_at = time.time()
        fail_worker(core, namespace, name + "-worker-1", FAILURES[kind])
        done = finish(started, timeout=timeout + 120)
        latency = time.time() - failed_at
        result = done.document["plays"][0]["tasks"][0]["hosts"]["localhost"]
        outcome = ("FAILED: " + result.get("reason", result.get("msg", ""))) if result.get("failed") else "ok"
        return latency, outcome
    finally:
        core.delete_namespace(namespace)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", help="a running lab's kubeconfig; default: start a lab of its own")
    parser.add_argument("--repeat", type=int, default=3, help="trials of gpuops.cluster.mpijob per failure kind")
    parser.add_argument("--generic-timeout", type=int, default=60,
                        help="wait_timeout of both waits (the generic one runs into it)")
    args = parser.parse_args()

    from kubernetes import client, config

    with tempfile.TemporaryDirectory() as tmp:
        env = ansible_env(collections_dir=tmp)
        run_dir = None
        kubeconfig = args.kubeconfig
        if not kubeconfig:
            run_dir = os.path.join(tmp, "lab")
            started = time.monotonic()
            lab("present", run_dir, env)
            print("lab control plane up in %.1f s" % (time.monotonic() - started))
            kubeconfig = os.path.join(run_dir, "kubeconfig")
        try:
            core = client.CoreV1Api(config.new_client_from_config(config_file=kubeconfig))
            rows = []
            for kind in sorted(FAILURES):
                for method, repeat in (("mpijob", args.repeat), ("k8s", 1)):
                    for index in range(repeat):
                        latency, outcome = trial(core, env, tmp, kubeconfig, method, kind, args.generic_timeout)
                        rows.append((kind, method, index + 1, latency, outcome))
                        print("%-8s %-7s trial %d: %6.2f s  %s" % (kind, method, index + 1, latency, outcome[:110]))
                        sys.stdout.flush()
        finally:
            if run_dir:
                lab("absent", run_dir, env)

    labels = {"mpijob": "gpuops.cluster.mpijob wait=true",
              "k8s": "kubernetes.core.k8s wait_condition=Succeeded"}
    print()
    print("failure -> ansible-playbook returned (wait_timeout %d s, pods simulated by kwok)" % args.generic_timeout)
    print("%-8s | %-46s | %-22s | %s" % ("failure", "wait", "seconds (median, n)", "ratio"))
    for kind in sorted(FAILURES):
        medians = {}
        for method in ("mpijob", "k8s"):
            values = [row[3] for row in rows if row[0] == kind and row[1] == method]
            medians[method] = statistics.median(values)
            ratio = "" if method == "mpijob" else "%.0fx slower" % (medians["k8s"] / medians["mpijob"])
            print("%-8s | %-46s | %8.2f (n=%d)          | %s" % (kind, labels[method], medians[method], len(values), ratio))


if __name__ == "__main__":
    main()
