# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PyTorchJob kind: the body built from the options or a raw definition, its failure predicate, and its wait
against a fake cluster (the master's log, every pod's log)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.errors import InvalidArgumentError, JobFailedError
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.lifecycle import ensure_present
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.pytorchjob import (
    PYTORCHJOB,
    build_pytorchjob,
    desired_job,
    from_definition,
    pytorchjob_failure,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.status import Observation
from gpuops_testlib.fake_job_api import FakeMPIJobApi, settings
from gpuops_testlib.pytorchjob_pods import (
    CREATED,
    LOGS,
    RUNNING,
    master_completes,
    pods_run,
    torch_pod,
    worker_crashes,
)

TORCHRUN = ["python3", "-m", "torch.distributed.run", "--nnodes", "3", "--nproc-per-node", "2", "--node-rank", "$(RANK)",
            "--master-addr", "$(MASTER_ADDR)", "--master-port", "$(MASTER_PORT)", "/opt/gpuops/benchmark/gpuops_benchmark.py",
            "--framework", "pytorch", "--distribution", "ddp"]
DDP_JOB = dict(name="ddp-bench", namespace="ml", image="pytorch:2.5.1-cuda12.4", command=TORCHRUN, workers=3,
               procs_per_worker=2, gpus_per_worker=2, env={"PYTHONFAULTHANDLER": 1}, resources={"cpu": 8, "memory": "32Gi"},
               node_selector={"nvidia.com/gpu.present": True},
               tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}], shm_size="2Gi",
               spread_workers=True, clean_pod_policy="Running", backoff_limit=0, image_pull_policy="IfNotPresent",
               volumes=[{"name": "gpuops-benchmark", "mount_path": "/opt/gpuops/benchmark", "read_only": True,
                         "configMap": {"name": "gpuops-benchmark-program"}}])


def pod(count):
    """The pod spec of DDP_JOB's master and workers alike."""
    limits = {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "2"}
    return {"replicas": count, "restartPolicy": "Never", "template": {"spec": {
        "containers": [{"name": "pytorch", "image": "pytorch:2.5.1-cuda12.4", "imagePullPolicy": "IfNotPresent",
                        "command": TORCHRUN, "env": [{"name": "PYTHONFAULTHANDLER", "value": "1"}],
                        "resources": {"limits": limits, "requests": dict(limits)},
                        "ports": [{"name": "pytorchjob-port", "containerPort": 23456}],
                        "volumeMounts": [{"name": "gpuops-benchmark", "mountPath": "/opt/gpuops/benchmark", "readOnly": True},
                                         {"name": "dshm", "mountPath": "/dev/shm"}]}],
        "nodeSelector": {"nvidia.com/gpu.present": "true"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "volumes": [{"name": "gpuops-benchmark", "configMap": {"name": "gpuops-benchmark-program"}},
                    {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                       "whenUnsatisfiable": "DoNotSchedule",
                                       "labelSelector": {"matchLabels": {"training.kubeflow.org/job-name": "ddp-bench"}}}]}}}


def test_three_pods_are_one_master_and_two_workers_alike_with_gpus_the_program_and_two_processes_each():
    assert build_pytorchjob(DDP_JOB) == {
        "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "ddp-bench", "namespace": "ml"},
        "spec": {"pytorchReplicaSpecs": {"Master": pod(1), "Worker": pod(2)}, "nprocPerNode": "2",
                 "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 0}}}


def test_one_pod_is_the_master_alone_and_the_operator_default_processes():
    spec = build_pytorchjob(dict(name="one", image="pytorch", command=["torchrun", "train.py"]))["spec"]
    assert sorted(spec["pytorchReplicaSpecs"]) == ["Master"] and "nprocPerNode" not in spec
    assert "resources" not in spec["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]


def test_infiniband_rdma_resource_ipc_lock_and_host_paths_without_privilege_on_every_pod():
    body = build_pytorchjob(dict(name="ib", image="pytorch", command=["torchrun"], workers=2, gpus_per_worker=8,
                                 resources={"rdma/ib": 1}, capabilities=["IPC_LOCK"], host_paths=["/dev/infiniband"],
                                 image_pull_secrets=["gpuops-registry"]))
    for replica in body["spec"]["pytorchReplicaSpecs"].values():
        spec = replica["template"]["spec"]
        [container] = spec["containers"]
        assert container["resources"]["limits"] == {"rdma/ib": "1", "nvidia.com/gpu": "8"}
        assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
        assert container["volumeMounts"] == [{"name": "host-path-0", "mountPath": "/dev/infiniband"}]
        assert spec["imagePullSecrets"] == [{"name": "gpuops-registry"}]


def test_every_bad_input_is_named_in_one_error():
    with pytest.raises(InvalidArgumentError) as refused:
        build_pytorchjob(dict(name="Bad_Name", command="torchrun", workers=0, procs_per_worker=0, port=70000,
                              clean_pod_policy="Sometimes"))
    assert refused.value.problems == [
        "workers must be at least 1, got 0", "procs_per_worker must be at least 1, got 0",
        "name 'Bad_Name' must be a DNS-1035 label: lowercase letters, digits and '-', starting with a letter and ending "
        "with a letter or digit",
        "image is required with state=present (the container image of every pod), unless definition is given",
        "command must be a list of strings, got 'torchrun'",
        "clean_pod_policy must be one of None, Running, All, got 'Sometimes'",
        "port must be a TCP port (at most 65535), got 70000"]


def test_the_longest_pod_name_must_fit_in_63_characters():
    with pytest.raises(InvalidArgumentError) as refused:
        build_pytorchjob(dict(name="a" * 54, image="pytorch", command=["torchrun"], workers=12))
    assert refused.value.problems == ["name '{0}' is too long: the longest pod name '{0}-worker-10' must be at most 63 "
                                      "characters".format("a" * 54)]


def test_a_definition_is_checked_for_its_replicas_and_the_pytorch_container():
    definition = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "raw"},
                  "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec": {"containers": [
                      {"name": "trainer", "image": "pytorch"}]}}}}}}
    with pytest.raises(InvalidArgumentError) as refused:
        from_definition(definition)
    assert refused.value.problems == ["definition.spec.pytorchReplicaSpecs.Master has no container named pytorch: the "
                                      "Training Operator refuses the PyTorchJob"]
    definition["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["name"] = "pytorch"
    assert from_definition(definition, namespace="ml")["metadata"] == {"name": "raw", "namespace": "ml"}
    with pytest.raises(InvalidArgumentError) as both:
        desired_job(dict(definition=definition, workers=2))
    assert both.value.problems == ["definition is mutually exclusive with workers: give a raw PyTorchJob or the "
                                   "high-level options, not both"]


def live(*conditions):
    job = build_pytorchjob(DDP_JOB)
    job["status"] = {"conditions": [{"type": kind, "status": "True", "reason": reason, "message": message}
                                    for kind, reason, message in conditions]}
    return job


def test_a_failed_worker_fails_the_job_at_once_naming_the_pod():
    observation = Observation(live(CREATED, RUNNING), pods=[
        torch_pod("master", 0, "Running"), torch_pod("worker", 0, "Running"), torch_pod("worker", 1, "Failed", exit_code=1)])
    assert pytorchjob_failure(observation) == (
        "worker pod(s) failed: ddp-bench-worker-1: container pytorch exit code 1 (Error); their replicas have "
        "restartPolicy Never, so the Training Operator does not restart them and the PyTorchJob cannot succeed")
    elastic = live(CREATED, RUNNING)
    elastic["spec"]["elasticPolicy"] = {"minReplicas": 1, "maxReplicas": 3}
    assert pytorchjob_failure(Observation(elastic, pods=observation.pods)) is None


def test_a_worker_init_container_that_cannot_pull_its_image_ends_the_wait():
    observation = Observation(live(CREATED), pods=[torch_pod("master", 0, "Running"), torch_pod(
        "worker", 0, "Pending", init_waiting=("ImagePullBackOff", "Back-off pulling image \"alpine:3.10\""))])
    assert pytorchjob_failure(observation) == (
        "container(s) cannot start: pod ddp-bench-worker-0: container init-pytorch (image alpine:3.10): ImagePullBackOff: "
        "Back-off pulling image \"alpine:3.10\"")


def test_the_failed_condition_and_a_rejection_end_the_wait_and_success_is_no_failure():
    failed = Observation(live(CREATED, ("Failed", "PyTorchJobFailed", "PyTorchJob ddp-bench is failed because 1 Master "
                                                                      "replica(s) failed.")))
    assert pytorchjob_failure(failed) == ("the PyTorchJob failed: PyTorchJobFailed: PyTorchJob ddp-bench is failed "
                                          "because 1 Master replica(s) failed.")
    rejected = Observation(live(), warnings=[{"type": "Warning", "reason": "ValidationError",
                                              "message": "spec.pytorchReplicaSpecs[Master].replicas: must be 1"}])
    assert pytorchjob_failure(rejected) == ("the Training Operator rejected the PyTorchJob: "
                                            "spec.pytorchReplicaSpecs[Master].replicas: must be 1")
    done = Observation(live(CREATED, ("Succeeded", "PyTorchJobSucceeded", "done")),
                       pods=[torch_pod("worker", 1, "Failed", exit_code=1)])
    assert pytorchjob_failure(done) is None


def test_a_failed_worker_fails_the_wait_with_the_masters_and_every_pods_log():
    api = FakeMPIJobApi(kind=PYTORCHJOB, logs=LOGS, script={2: pods_run, 4: worker_crashes})
    with pytest.raises(JobFailedError) as raised:
        ensure_present(PYTORCHJOB, api, build_pytorchjob(DDP_JOB), settings(wait=True))
    details = raised.value.details
    assert str(raised.value).startswith("PyTorchJob ml/ddp-bench FAILED after 2.0 s: worker pod(s) failed: "
                                        "ddp-bench-worker-1: container pytorch exit code 1 (Error)")
    assert (details["master_log_pod"], [log["pod"] for log in details["replica_logs"]]) == (
        "ddp-bench-master-0", ["ddp-bench-master-0", "ddp-bench-worker-0", "ddp-bench-worker-1"])
    assert details["replica_logs"][2]["text"].endswith("RuntimeError: NCCL error\n")


def test_the_master_completing_succeeds_the_wait_with_every_pods_log():
    api = FakeMPIJobApi(kind=PYTORCHJOB, logs=LOGS, script={2: pods_run, 3: master_completes})
    result = ensure_present(PYTORCHJOB, api, build_pytorchjob(DDP_JOB), settings(wait=True))
    assert (result["phase"], result["master_log"]) == ("Succeeded", LOGS["ddp-bench-master-0"])
    assert [(log["replica_type"], log["index"]) for log in result["replica_logs"]] == [("master", 0), ("worker", 0),
                                                                                       ("worker", 1)]
