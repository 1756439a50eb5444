# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops_launcher=tfjob on the lab make lab made: the Kubeflow Training Operator beside the MPI Operator, and
TFJobs of real pods on both nodes training with TensorFlow's own distribution (in step, and with a parameter
server), judged by the verdict; check mode, a second run, and the faults (an image that cannot be pulled, more
GPUs than a node has, a worker killed mid-run), each reported within seconds with the replicas' logs kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from gpuops_testlib.ansible_run import ansible_env, mode_options, run_playbook, start_playbook
from gpuops_testlib.lab_control_plane import LAB_INVENTORY
from gpuops_testlib.lab_pods import (
    LONG_BENCHMARK, NODE_CONTAINER_PREFIX, SHORT_BENCHMARK_ARGS, VERIFY_TRAINING, WORKLOAD_BENCHMARK, WORKLOAD_PYTHON,
    cache_env, controller_inventory, fault_mid_run, kubectl, module_namespace, read_pod, verify_training, wait_for,
    workload_image,
)
from gpuops_testlib.versions import pinned
from main_job import KUBECONFIG, LAB_DIR, REPO_ROOT

NAMESPACE = "e2e-tfjob"
RUN_TASK = "Run the TFJob and wait until it succeeds (failing as soon as it cannot)"
FAIL_TASK = "Fail with why the run failed and the end of its log"
# A path the workload image does not have: the program comes from the role's ConfigMap there.
PROGRAM_NOT_IN_IMAGE = "/opt/gpuops-program/gpuops_benchmark.py"
# The role sets the framework and the device itself.
TF_BENCHMARK_ARGS = SHORT_BENCHMARK_ARGS[4:]


def _inventory(path, name, **variables):
    return controller_inventory(path, dict({
        "gpuops_kubeconfig": KUBECONFIG, "gpuops_launcher": "tfjob", "kube_job_namespace": NAMESPACE,
        "tfjob_launcher_name": name, "tfjob_launcher_image": workload_image(),
        "kube_job_image_pull_policy": "Never", "tfjob_launcher_workers": 2, "tfjob_launcher_gpus_per_worker": 1,
        "tfjob_launcher_device": "cpu", "tfjob_launcher_spread_workers": True,
        "kube_job_python": WORKLOAD_PYTHON, "kube_job_benchmark_path": WORKLOAD_BENCHMARK,
        "kube_job_benchmark_args": TF_BENCHMARK_ARGS, "kube_job_wait_timeout": 600}, **variables))


def _verify(tmp_path, name, options=(), **variables):
    return verify_training(tmp_path, _inventory(tmp_path / (name + ".yml"), name, **variables), options)


def _report(tmp_path, name):
    with open(str(tmp_path / "cache" / "training" / (name + ".json")), encoding="utf-8") as handle:
        return json.load(handle)


_tfjob_namespace = module_namespace("tfjob_namespace", NAMESPACE)


def _pods(name):
    listed = kubectl("get", "pods", "-n", NAMESPACE, "-l", "training.kubeflow.org/job-name=" + name, "-o", "json")
    return json.loads(listed.stdout)["items"]


def test_the_training_operator_serves_tfjobs_beside_the_mpi_operator_and_leaves_its_mpijob_crd_alone(second_run):
    """make lab deployed both operators, then ran its MPIJob to a passing verdict (second_run)."""
    assert second_run.rc == 0, second_run.explain()
    mpijobs = json.loads(kubectl("get", "crd", "mpijobs.kubeflow.org", "-o", "json").stdout)
    assert [version["name"] for version in mpijobs["spec"]["versions"]] == ["v2beta1"]
    crds = kubectl("get", "crd", "-o", "name").stdout.split()
    kubeflow = sorted(crd for crd in crds if crd.endswith(".kubeflow.org"))
    assert kubeflow == ["customresourcedefinition.apiextensions.k8s.io/" + name
                        for name in ("mpijobs.kubeflow.org", "pytorchjobs.kubeflow.org", "tfjobs.kubeflow.org")]
    webhook = json.loads(kubectl("get", "validatingwebhookconfiguration", "validator.training-operator.kubeflow.org",
                                 "-o", "json").stdout)
    assert sorted(hook["name"] for hook in webhook["webhooks"]) == [
        "validator.pytorchjob.training-operator.kubeflow.org", "validator.tfjob.training-operator.kubeflow.org"]
    deployment = json.loads(kubectl("get", "deployment", "-n", "kubeflow", "training-operator", "-o", "json").stdout)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    # The lab names its workload image for the PyTorchJob workers' init container (Docker Hub is out of reach).
    assert container["args"] == ["--enable-scheme=tfjob", "--enable-scheme=pytorchjob",
                                 "--pytorch-init-container-image=" + workload_image()]
    assert deployment["status"]["availableReplicas"] == 1


def test_a_tfjob_in_step_passes_the_verdict_after_a_check_that_creates_nothing_and_runs_once(tfjob_namespace, tmp_path):
    planned = _verify(tmp_path, "in-step", options=("--check", "--diff"))
    assert planned.rc == 0, planned.explain()
    spec = planned.result(RUN_TASK)["tfjob"]["spec"]
    assert spec["successPolicy"] == "AllWorkers" and sorted(spec["tfReplicaSpecs"]) == ["Worker"]
    assert spec["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["command"][2:8] == [
        "--framework", "tensorflow", "--distribution", "tf_config", "--device", "cpu"]
    assert not _pods("in-step")

    ran = _verify(tmp_path, "in-step")
    assert ran.rc == 0, ran.explain()
    report = _report(tmp_path, "in-step")
    assert report["passed"] is True and report["ranks"] == 2, report
    sys.stderr.write("tfjob launcher, in step: %s\n" % "\n".join(report["summary"]))
    workers = [pod for pod in _pods("in-step") if pod["metadata"]["labels"]["training.kubeflow.org/replica-type"] == "worker"]
    assert sorted(pod["spec"]["nodeName"] for pod in workers) == ["node1", "node2"]

    again = _verify(tmp_path, "in-step")
    assert again.rc == 0, again.explain()
    assert again.result(RUN_TASK)["changed"] is False


def _delete(name):
    """Delete a TFJob and wait until its pods are gone: until then they hold their nodes' GPUs."""
    kubectl("delete", "tfjob", "-n", NAMESPACE, name, "--wait=true", check=False)
    wait_for(lambda: not _pods(name), 120, "the pods of TFJob %s to be gone" % name)


def _deploy_training_operator(version):
    return run_playbook(os.path.join(REPO_ROOT, "playbooks", "gpu_stack.yml"), LAB_INVENTORY,
                        [json.dumps({"training_operator_version": version})], mode_options(tags="training_operator"),
                        env=ansible_env(TMPDIR=os.path.join(LAB_DIR, "tmp")), timeout=600)


def _operator_objects():
    crd = json.loads(kubectl("get", "crd", "tfjobs.kubeflow.org", "-o", "json").stdout)
    deployment = json.loads(kubectl("get", "deployment", "-n", "kubeflow", "training-operator", "-o", "json").stdout)
    return crd, deployment


def test_the_training_operator_is_applied_again_in_place_keeping_its_crds_and_jobs(tfjob_namespace):
    """Another release over the installed one: the same kustomization under another version (the lab has one
    release), so each object is patched in place, its version label with it, and the TFJobs stay."""
    crd, deployment = _operator_objects()
    jobs = kubectl("get", "tfjobs", "-n", NAMESPACE, "-o", "name").stdout.split()
    try:
        upgraded = _deploy_training_operator("v1.9.99-gpuops.1")
        assert upgraded.rc == 0, upgraded.explain()
        crd_after, deployment_after = _operator_objects()
        assert (crd_after["metadata"]["uid"], deployment_after["metadata"]["uid"]) == (
            crd["metadata"]["uid"], deployment["metadata"]["uid"])
        for found in (crd_after, deployment_after):
            assert found["metadata"]["labels"]["gpuops.io/training-operator-version"] == "v1.9.99-gpuops.1"
        assert deployment_after["status"]["availableReplicas"] == 1
        assert kubectl("get", "tfjobs", "-n", NAMESPACE, "-o", "name").stdout.split() == jobs
    finally:
        back = _deploy_training_operator(pinned("training_operator"))
    assert back.rc == 0, back.explain()
    assert _operator_objects()[0]["metadata"]["labels"]["gpuops.io/training-operator-version"] == \
        pinned("training_operator")


def test_a_tfjob_with_a_parameter_server_passes_the_verdict_with_every_workers_figures(tfjob_namespace, tmp_path):
    """With the program from a ConfigMap, at a path the image does not have, as on a stock TensorFlow image."""
    # The role deletes it at the end, and waits until its pods are gone.
    ran = _verify(tmp_path, "with-ps", tfjob_launcher_parameter_servers=1, kube_job_cleanup_enabled=True,
                  tfjob_launcher_benchmark_source="configmap", kube_job_benchmark_path=PROGRAM_NOT_IN_IMAGE)
    assert ran.rc == 0, ran.explain()
    assert not _pods("with-ps")
    replicas = ran.result(RUN_TASK)["tfjob"]["spec"]["tfReplicaSpecs"]
    for replica in ("Chief", "PS", "Worker"):
        pod = replicas[replica]["template"]["spec"]
        assert {"name": "benchmark-program", "configMap": {"name": "gpuops-benchmark-program"}} in pod["volumes"], pod
        assert PROGRAM_NOT_IN_IMAGE in pod["containers"][0]["command"]
    program = json.loads(kubectl("get", "configmap", "-n", NAMESPACE, "gpuops-benchmark-program", "-o", "json").stdout)
    with open(os.path.join(REPO_ROOT, "roles", "training_benchmark", "files", "gpuops_benchmark.py"), encoding="utf-8") as handle:
        assert program["data"]["gpuops_benchmark.py"] == handle.read()
    report = _report(tmp_path, "with-ps")
    assert report["passed"] is True and report["ranks"] == 2, report
    assert "ParameterServerStrategy" in report["summary"][0], report["summary"]
    with open(str(tmp_path / "cache" / "training" / "with-ps.log"), encoding="utf-8") as handle:
        log = handle.read()
    # The chief's log comes first, and it holds each worker's own figures.
    assert log.startswith("==== pod with-ps-chief-0 (chief 0) ====")
    assert "Rank 0 on with-ps-worker-0: Img/sec per CPU" in log and "Rank 1 on with-ps-worker-1: Img/sec per CPU" in log
    sys.stderr.write("tfjob launcher, parameter server: %s\n" % "\n".join(report["summary"]))


@pytest.mark.parametrize("name, variables, expected", [
    ("no-image", {"tfjob_launcher_image": "localhost/gpuops-no-such-image:1"}, "ErrImageNeverPull"),
    ("too-many-gpus", {"tfjob_launcher_gpus_per_worker": 3}, "Insufficient nvidia.com/gpu"),
])
def test_a_tfjob_whose_pods_cannot_start_fails_within_seconds(tfjob_namespace, tmp_path, name, variables, expected):
    started = time.time()
    try:
        run = _verify(tmp_path, name, **variables)
        seconds = time.time() - started
    finally:
        _delete(name)
    assert run.rc != 0
    message = dict(run.failed())[FAIL_TASK]["msg"]
    assert expected in message, message
    assert seconds < 60, "reported after %.0f s" % seconds


def _kill_worker_1(name):
    """SIGKILL worker 1's benchmark (its container's first process) from the node that runs it."""
    node = NODE_CONTAINER_PREFIX + read_pod(NAMESPACE, name + "-worker-1")["spec"]["nodeName"]
    subprocess.run(["podman", "exec", node, "pkill", "-KILL", "-f", "gpuops_benchmark.py .*--distribution tf_config"],
                   check=True, capture_output=True)


def test_a_worker_killed_mid_run_fails_the_tfjob_within_seconds_and_the_logs_are_kept(tfjob_namespace, tmp_path):
    inventory = _inventory(tmp_path / "killed.yml", "killed",
                           tfjob_launcher_command=LONG_BENCHMARK + ["--distribution", "tf_config"])
    try:
        run, seconds = fault_mid_run(start_playbook(VERIFY_TRAINING, inventory, env=cache_env(tmp_path)),
                                     lambda: "Iter #" in kubectl("logs", "-n", NAMESPACE, "killed-worker-1",
                                                                 check=False).stdout,
                                     lambda: _kill_worker_1("killed"))
    finally:
        _delete("killed")
    assert run.rc != 0
    message = dict(run.failed())[FAIL_TASK]["msg"]
    assert "killed-worker-1" in message and "TFJob" in message, message
    kept_at = tmp_path / "cache" / "training" / "killed.log"
    assert kept_at.exists(), run.explain()
    with open(str(kept_at), encoding="utf-8") as handle:
        kept = handle.read()
    assert "==== pod killed-worker-0 (worker 0) ====" in kept and "Rank 1 on killed-worker-1: Iter #" in kept
    sys.stderr.write("tfjob launcher, worker killed: the task returned %.1f s later\n" % seconds)
    assert seconds < 30
