# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.cluster.mpijob and the mpijob_launcher role against the lab control plane, run with ansible-playbook.

The MPI Operator (the version versions.yml pins) reconciles the jobs for real (worker pods, launcher Job, Service, ConfigMap, SSH
Secret, status conditions); kwok plays the kubelet, so pods are simulated: they are marked Running (and
the launcher's pod Succeeded) without any container. There is therefore no container log, and the role
must say so rather than judge anything: the training itself, in real pods, is tested by the e2e tier on the
lab made by make lab. A worker failure is made by writing the worker pod's status as a kubelet would
(phase Failed, container terminated), at a time the test records, to measure how soon it is reported.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid

import pytest

from gpuops_testlib.ansible_run import AnsibleRun, finish, mode_options, start_playbook, write_play
from gpuops_testlib.ansible_run import ansible_env as shared_ansible_env
from gpuops_testlib.ansible_run import run_playbook as shared_run_playbook

GROUP, VERSION, PLURAL = "kubeflow.org", "v2beta1", "mpijobs"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
FAILURE_REPORT_LIMIT_S = 10.0


@pytest.fixture(scope="module")
def ansible_env(tmp_path_factory):
    """ansible-playbook with this checkout as gpuops.cluster and the JSON callback on stdout."""
    return shared_ansible_env(str(tmp_path_factory.mktemp("collections")))


class Run(AnsibleRun):
    """One ansible-playbook run on localhost, explained task by task."""

    @property
    def stats(self):
        return self.host_stats()

    def explain(self, host="localhost"):
        keys = ("msg", "reason", "changed", "failed", "problems", "phase", "launcher_log_error")
        return json.dumps([(task, dict((k, v) for k, v in result.items() if k in keys))
                           for task, _host, result in self.tasks(host)], indent=1)[-6000:]


def write_playbook(directory, name, tasks, roles=None):
    play = {"name": name, "hosts": "localhost", "connection": "local", "gather_facts": False,
            "vars": {"ansible_python_interpreter": sys.executable}}
    if roles:
        play["roles"] = roles
    if tasks:
        play["tasks"] = tasks
    return write_play(os.path.join(str(directory), name + ".yml"), play)


def run_playbook(env, playbook, extra=None, check=False, diff=False, timeout=300):
    return shared_run_playbook(playbook, extra_vars=extra, options=mode_options(check, diff), env=env, timeout=timeout,
                               result_class=Run)


def mpijob_task(task_name, args):
    return {"name": task_name, "gpuops.cluster.mpijob": args, "register": "out", "ignore_errors": True}


def cpu_job_args(lab, namespace, name, **more):
    args = dict(kubeconfig=lab.kubeconfig, name=name, namespace=namespace,
                image="localhost/gpuops-horovod:simulated", image_pull_policy="Never",
                command=["mpirun", "-np", "4", "python3", "/opt/gpuops/benchmark/gpuops_benchmark.py", "--model", "resnet18"],
                worker_command=["/usr/sbin/sshd", "-De"], workers=2, slots_per_worker=2,
                resources={"cpu": "2", "memory": "4Gi"},
                env={"OMP_NUM_THREADS": 2, "HOROVOD_CYCLE_TIME": 1})
    args.update(more)
    return args


def mpijobs(lab, namespace):
    return lab.custom.list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL)["items"]


def test_check_mode_creates_nothing(lab, namespace, ansible_env, tmp_path):
    args = cpu_job_args(lab, namespace, "check", resources={"cpu": "2", "memory": "4Gi", "hugepages-2Mi": "256Mi"})
    playbook = write_playbook(tmp_path, "check", [mpijob_task("create", args)])
    run = run_playbook(ansible_env, playbook, check=True, diff=True)
    result = run.result("create")
    assert not result.get("failed"), run.explain()
    assert result["changed"] is True
    assert result["method"] == "created"
    assert result["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 2
    worker = result["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    assert worker["resources"]["limits"] == {"cpu": "2", "memory": "4Gi", "hugepages-2Mi": "256Mi"}
    assert result["diff"]["before"] == {}
    assert mpijobs(lab, namespace) == []
    assert lab.core.list_namespaced_pod(namespace).items == []


def test_invalid_arguments_fail_before_any_api_call(lab, namespace, ansible_env, tmp_path):
    playbook = write_playbook(tmp_path, "bad", [mpijob_task(
        "create", cpu_job_args(lab, namespace, "bad", workers=0, resources={"memory": "4 GB"}))])
    result = run_playbook(ansible_env, playbook).result("create")
    assert result["failed"]
    assert result["problems"] == [
        "workers must be at least 1, got 0",
        "resources: '4 GB' is not a valid quantity for memory (expected a non-negative number with an optional "
        "suffix such as m, Mi, Gi or G, e.g. 500m, 16Gi, 2)"]
    assert mpijobs(lab, namespace) == []


def test_launcher_role_runs_the_job_and_fails_naming_why_when_the_launcher_left_no_log(
        lab, namespace, ansible_env, tmp_path):
    log_path = str(tmp_path / "out" / "launcher.log")
    report_path = str(tmp_path / "out" / "report.json")
    role = {"role": "gpuops.cluster.mpijob_launcher", "vars": {
        "kube_job_kubeconfig": lab.kubeconfig, "kube_job_namespace": namespace,
        "mpijob_launcher_name": "bench", "mpijob_launcher_image": "localhost/gpuops-horovod:simulated",
        "kube_job_image_pull_policy": "Never", "mpijob_launcher_workers": 2,
        "mpijob_launcher_slots_per_worker": 2,
        "kube_job_benchmark_args": ["--framework", "pytorch", "--model", "resnet18", "--batch-size", "16"],
        "kube_job_env": {"OMP_NUM_THREADS": "2"},
        "kube_job_resources": {"cpu": "2", "memory": "4Gi"},
        "mpijob_launcher_clean_pod_policy": "None",
        "kube_job_wait_timeout": 120,
        "kube_job_report_path": report_path,
        "verify_training_log_path": log_path}}
    playbook = write_playbook(tmp_path, "bench", [], roles=[role])

    first = run_playbook(ansible_env, playbook)
    job = first.result("Run the benchmark as an MPIJob and wait until it succeeds (failing as soon as it fails)")
    assert job["changed"] is True
    assert job["method"] == "created"
    assert job["phase"] == "Succeeded"
    assert job["replica_statuses"]["Launcher"]["succeeded"] == 1
    assert job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"] == [
        "mpirun", "-np", "4", "--allow-run-as-root", "-bind-to", "none", "-map-by", "slot", "-x", "PATH",
        "-x", "LD_LIBRARY_PATH", "-x", "OMP_NUM_THREADS",
        "python3", "/opt/gpuops/benchmark/gpuops_benchmark.py", "--framework", "pytorch", "--model", "resnet18",
        "--batch-size", "16"]
    # kwok runs no container: the API cannot serve the launcher's log, and the result says which pod and why.
    assert job["launcher_log_source"] == "none"
    assert job["launcher_log"] == ""
    assert job["launcher_log_pod"].startswith("bench-launcher-")
    assert "could not serve the log of launcher pod " + job["launcher_log_pod"] in job["launcher_log_error"]
    # The role stops there, naming the job and the reason; nothing is judged and no report is written.
    failed = first.result("Fail when the job left no log")
    assert failed["failed"] is True
    assert failed["msg"] == ("MPIJob %s/bench finished without a log to verify: %s"
                             % (namespace, job["launcher_log_error"])), failed["msg"]
    assert first.results("Judge the training log") == []
    assert not os.path.exists(log_path) and not os.path.exists(report_path)

    # The objects the MPI Operator made for the job are real.
    uid = mpijobs(lab, namespace)[0]["metadata"]["uid"]
    workers = [p for p in lab.core.list_namespaced_pod(namespace, label_selector=JOB_NAME_LABEL + "=bench").items
               if p.metadata.name.startswith("bench-worker-")]
    assert sorted(p.metadata.name for p in workers) == ["bench-worker-0", "bench-worker-1"]
    assert all(p.metadata.owner_references[0].uid == uid for p in workers)

    # The job itself is not started again.
    second = run_playbook(ansible_env, playbook)
    again = second.result("Run the benchmark as an MPIJob and wait until it succeeds (failing as soon as it fails)")
    assert (again["changed"], again["method"], again["phase"]) == (False, "unchanged", "Succeeded")


def test_other_spec_fails_without_force_replaces_with_it_and_absent_deletes(lab, namespace, ansible_env, tmp_path):
    args = cpu_job_args(lab, namespace, "replace", wait=True, wait_timeout=120)
    create = write_playbook(tmp_path, "create", [mpijob_task("create", args)])
    created = run_playbook(ansible_env, create).result("create")
    assert (created.get("failed"), created["phase"]) == (None, "Succeeded"), created.get("msg")
    first_uid = mpijobs(lab, namespace)[0]["metadata"]["uid"]

    bigger = write_playbook(tmp_path, "bigger", [mpijob_task("create", dict(args, workers=3))])
    refused = run_playbook(ansible_env, bigger).result("create")
    assert refused["failed"]
    # One worker more: the count the launcher's wait for the workers' names reads (WORKERS), and the replicas.
    assert refused["differences"] == [
        'spec.mpiReplicaSpecs.Launcher.template.spec.initContainers[0].env[1].value: "2" -> "3"',
        "spec.mpiReplicaSpecs.Worker.replicas: 2 -> 3"]
    assert mpijobs(lab, namespace)[0]["metadata"]["uid"] == first_uid

    forced = write_playbook(tmp_path, "forced", [mpijob_task("create", dict(args, workers=3, force=True))])
    replaced = run_playbook(ansible_env, forced).result("create")
    assert not replaced.get("failed"), replaced.get("msg")
    assert (replaced["changed"], replaced["method"], replaced["phase"]) == (True, "replaced", "Succeeded")
    [job] = mpijobs(lab, namespace)
    assert job["metadata"]["uid"] != first_uid
    assert job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 3

    absent = write_playbook(tmp_path, "absent", [mpijob_task("delete", dict(
        kubeconfig=lab.kubeconfig, name="replace", namespace=namespace, state="absent", wait=True))])
    deleted = run_playbook(ansible_env, absent).result("delete")
    assert (deleted.get("failed"), deleted["changed"], deleted["method"]) == (None, True, "deleted")
    assert mpijobs(lab, namespace) == []
    # Foreground propagation: the job was gone only once its pods were.
    assert [p.metadata.name for p in lab.core.list_namespaced_pod(namespace).items
            if p.metadata.name.startswith("replace-worker-")] == []
    assert run_playbook(ansible_env, absent).result("delete")["changed"] is False


def held_launcher_job(namespace, name):
    """An MPIJob whose launcher pod is held by a scheduling gate.

    kwok completes a Job's pod as soon as it runs, which in the lab would end the job before a worker
    could fail. Held, the launcher stays Pending, as a real launcher stays busy running mpirun.
    """
    def template(role, gates=None):
        spec = {"containers": [{"name": role, "image": "localhost/gpuops-horovod:simulated",
                                "imagePullPolicy": "Never",
                                "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}]}
        if gates:
            spec["schedulingGates"] = [{"name": gate} for gate in gates]
        return {"spec": spec}

    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"slotsPerWorker": 1, "runPolicy": {"cleanPodPolicy": "None"},
                     "launcherCreationPolicy": "WaitForWorkersReady",
                     "mpiReplicaSpecs": {
                         "Launcher": {"replicas": 1, "template": template("launcher", ["gpuops.io/lab-hold"])},
                         "Worker": {"replicas": 2, "template": template("worker")}}}}


FAILURES = {
    # A rank's process dies (out of memory): the pod fails, the MPI Operator only counts it.
    "crash": {"phase": "Failed", "reason": None, "exit_code": 137, "container_reason": "OOMKilled"},
    # The kubelet evicts the pod: the MPI Operator marks the MPIJob Failed itself.
    "evicted": {"phase": "Failed", "reason": "Evicted", "exit_code": 137, "container_reason": "Error",
                "message": "The node was low on resource: memory."},
}


def fail_worker(lab, namespace, pod_name, failure):
    """Write the pod's status as the kubelet does when its container ends with an error."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    pod = lab.core.read_namespaced_pod(pod_name, namespace)
    container = pod.spec.containers[0]
    status = {"phase": failure["phase"],
              "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": now},
                             {"type": "ContainersReady", "status": "False", "lastTransitionTime": now}],
              "containerStatuses": [{"name": container.name, "image": container.image, "imageID": "",
                                     "ready": False, "restartCount": 0, "started": False,
                                     "state": {"terminated": {"exitCode": failure["exit_code"],
                                                              "reason": failure["container_reason"],
                                                              "startedAt": now, "finishedAt": now}}}]}
    if failure["reason"]:
        status["reason"] = failure["reason"]
        status["message"] = failure["message"]
    lab.core.patch_namespaced_pod_status(pod_name, namespace, {"status": status})


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail("timed out after %s s waiting for %s" % (timeout, what), pytrace=False)


@pytest.mark.parametrize("kind", sorted(FAILURES))
def test_failed_worker_is_reported_within_10_seconds(lab, namespace, ansible_env, tmp_path, kind):
    name = "fail-" + kind
    playbook = write_playbook(tmp_path, "wait", [mpijob_task("wait", dict(
        kubeconfig=lab.kubeconfig, definition=held_launcher_job(namespace, name), wait=True, wait_timeout=300))])
    waiting = start_playbook(playbook, env=ansible_env)
    try:
        def ready():
            pods = lab.core.list_namespaced_pod(namespace, label_selector=JOB_NAME_LABEL + "=" + name).items
            workers = [p for p in pods if p.metadata.name.startswith(name + "-worker-") and p.status.phase == "Running"]
            launchers = [p for p in pods if p.metadata.name.startswith(name + "-launcher")]
            return len(workers) == 2 and launchers
        wait_until(ready, 60, "2 running workers and a (held) launcher pod")
        # Let the module settle into its wait loop, then fail a worker at a known time.
        time.sleep(3)
        failed_at = time.time()
        fail_worker(lab, namespace, name + "-worker-1", FAILURES[kind])
        run = finish(waiting, timeout=120, result_class=Run)
    finally:
        if waiting[1].poll() is None:
            waiting[1].kill()
            waiting[1].communicate()
    returned_at = time.time()
    result = run.result("wait")
    assert result["failed"], run.explain()
    detect_latency = result["detected_at"] - failed_at
    return_latency = returned_at - failed_at
    sys.stderr.write("MPIJob worker failure (%s): detected %.2f s after the failure, ansible-playbook returned "
                     "%.2f s after it (wait_timeout 300 s, wait_sleep 1 s)\n" % (kind, detect_latency, return_latency))
    assert 0 <= detect_latency < FAILURE_REPORT_LIMIT_S
    assert return_latency < FAILURE_REPORT_LIMIT_S, "reported %.1f s after the failure" % return_latency
    assert result["msg"].startswith("MPIJob %s/%s FAILED after " % (namespace, name))
    if kind == "crash":
        assert result["reason"].startswith("worker pod(s) failed: %s-worker-1: container worker exit code 137 "
                                           "(OOMKilled)" % name), result["reason"]
    else:
        assert result["reason"] in (
            "the MPIJob failed: MPIJobEvicted: 1/2 workers are evicted",
            "worker pod(s) failed: %s-worker-1: container worker exit code 137 (Error); the MPI Operator does not "
            "replace a failed worker, so mpirun has lost a rank and the job cannot succeed" % name), result["reason"]
    [failed_pod] = result["failed_pods"]
    assert failed_pod["name"] == name + "-worker-1"
    assert failed_pod["terminated_containers"][0]["exit_code"] == 137
    # The scheduler's event for the pod is there (kwok emits no kubelet events).
    assert any(event["reason"] == "Scheduled" for event in failed_pod["events"]), failed_pod["events"]
    assert result["launcher_log_source"] == "none"
    assert result["launcher_log_error"].startswith("launcher pod %s-launcher-" % name)
    assert result["launcher_log_error"].endswith("has not started (phase Pending)")


# The pods' namespace and its Pod Security Admission labels (the job_namespace role, which every launcher includes).
PSA = dict((mode, "pod-security.kubernetes.io/" + mode) for mode in ("enforce", "audit", "warn"))
NAMESPACE_TASK = "Create the namespace, or add the pod security labels its pods need"
REFUSAL_TASK = "Fail when the namespace's pod security would reject the pods"


@pytest.fixture
def new_namespace(lab):
    """A namespace name no object has yet, for the role to create; deleted afterwards."""
    name = "psa-%s" % uuid.uuid4().hex[:6]
    yield name
    lab.kubectl("delete", "namespace", name, "--ignore-not-found", "--wait=true", "--timeout=90s", check=False)


def host_network_launcher(lab, tmp_path, namespace, **more):
    """The mpijob_launcher role with host networking: its pods need the privileged level."""
    role = {"role": "gpuops.cluster.mpijob_launcher", "vars": dict({
        "kube_job_kubeconfig": lab.kubeconfig, "kube_job_namespace": namespace,
        "mpijob_launcher_name": "hostnet", "mpijob_launcher_image": "localhost/gpuops-horovod:simulated",
        "kube_job_image_pull_policy": "Never", "mpijob_launcher_workers": 2,
        "mpijob_launcher_host_network": True, "kube_job_resources": {"cpu": "1", "memory": "1Gi"},
        "mpijob_launcher_clean_pod_policy": "None",
        "kube_job_wait_timeout": 120, "verify_training_log_path": str(tmp_path / "out" / "launcher.log")},
        **more)}
    return write_playbook(tmp_path, "hostnet", [], roles=[role])


def labels_of(lab, namespace):
    return lab.core.read_namespace(namespace).metadata.labels or {}


def test_a_host_network_launcher_creates_its_namespace_with_the_privileged_pod_security_labels(
        lab, new_namespace, ansible_env, tmp_path):
    playbook = host_network_launcher(lab, tmp_path, new_namespace)
    privileged = dict((label, "privileged") for label in PSA.values())

    check = run_playbook(ansible_env, playbook, check=True, diff=True)
    assert check.stats.get("failures", 0) == 0, check.explain()
    assert check.result(NAMESPACE_TASK)["changed"] is True
    shown = check.result("Show the namespace that is created")["diff"]["prepared"]
    assert "name: %s" % new_namespace in shown
    assert all("%s: privileged" % label in shown for label in PSA.values()), shown
    assert lab.kubectl("get", "namespace", new_namespace, "--ignore-not-found", "-o", "name").stdout.strip() == ""

    # The job runs under kwok, which leaves no launcher log: the role stops there, after the pods were admitted.
    first = run_playbook(ansible_env, playbook)
    assert first.result("Fail when the job left no log")["failed"] is True, first.explain()
    assert labels_of(lab, new_namespace).items() >= privileged.items()
    workers = [p for p in lab.core.list_namespaced_pod(new_namespace, label_selector=JOB_NAME_LABEL + "=hostnet").items
               if p.metadata.name.startswith("hostnet-worker-")]
    assert len(workers) == 2 and all(p.spec.host_network for p in workers)

    again = run_playbook(ansible_env, playbook)
    assert again.results(NAMESPACE_TASK)[0].get("skipped") is True, again.explain()


def test_a_namespace_that_enforces_restricted_is_named_and_left_as_it_is(lab, namespace, ansible_env, tmp_path):
    lab.core.patch_namespace(namespace, {"metadata": {"labels": {PSA["enforce"]: "restricted"}}})
    playbook = host_network_launcher(lab, tmp_path, namespace)

    refused = run_playbook(ansible_env, playbook)
    result = refused.result(REFUSAL_TASK)
    assert result["failed"] is True, refused.explain()
    assert result["msg"] == (
        "namespace %s has pod-security.kubernetes.io/enforce=restricted, which rejects the pods that would run "
        "there: they need the privileged level (host networking). Nothing was changed. Set "
        "job_namespace_pod_security_relabel=true to let the role set its enforce, audit and warn labels to "
        "privileged, label the namespace yourself, or run the pods in another namespace." % namespace)
    assert mpijobs(lab, namespace) == []
    assert labels_of(lab, namespace)[PSA["enforce"]] == "restricted"

    # Allowed to relabel, check mode shows the labels it would write and writes none.
    relabel = host_network_launcher(lab, tmp_path, namespace, job_namespace_pod_security_relabel=True)
    check = run_playbook(ansible_env, relabel, check=True, diff=True)
    assert check.stats.get("failures", 0) == 0, check.explain()
    diff = check.result(NAMESPACE_TASK)["diff"]
    assert diff["before"]["metadata"]["labels"][PSA["enforce"]] == "restricted"
    assert dict((key, diff["after"]["metadata"]["labels"][key]) for key in PSA.values()) == dict(
        (key, "privileged") for key in PSA.values())
    assert labels_of(lab, namespace)[PSA["enforce"]] == "restricted"
    assert mpijobs(lab, namespace) == []
