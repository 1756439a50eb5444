# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The batch Job kind: the body built from the options, its status, and its wait against a fake cluster."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.batch_job import BATCH_JOB, build_batch_job
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.errors import InvalidArgumentError, JobFailedError
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.lifecycle import Settings, ensure_present
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.status import job_status
from gpuops_testlib.fake_job_api import FakeMPIJobApi

SINGLE_NODE = dict(name="dgx-single", namespace="training", image="horovod:0.28.1",
                   command=["horovodrun", "-np", "8", "-H", "localhost:8", "python3", "/opt/bench.py"],
                   gpus=8, shm_size="8Gi", env={"NCCL_DEBUG": "INFO"}, resources={"cpu": 32, "memory": "256Gi"},
                   node_selector={"nvidia.com/gpu.product": "H100"}, image_pull_policy="IfNotPresent",
                   volumes=[{"name": "data", "mount_path": "/data", "read_only": True,
                             "persistentVolumeClaim": {"claimName": "imagenet"}}])


def test_a_single_node_job_is_one_pod_never_restarted_with_gpus_shm_and_a_data_volume():
    assert build_batch_job(SINGLE_NODE) == {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "dgx-single", "namespace": "training"},
        "spec": {"backoffLimit": 0, "template": {
            "metadata": {"labels": {"gpuops.io/role": "launcher"}},
            "spec": {
                "restartPolicy": "Never",
                "nodeSelector": {"nvidia.com/gpu.product": "H100"},
                "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}},
                            {"name": "data", "persistentVolumeClaim": {"claimName": "imagenet"}}],
                "containers": [{
                    "name": "launcher", "image": "horovod:0.28.1", "imagePullPolicy": "IfNotPresent",
                    "command": ["horovodrun", "-np", "8", "-H", "localhost:8", "python3", "/opt/bench.py"],
                    "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
                    "resources": {"limits": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8"},
                                  "requests": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8"}},
                    "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"},
                                     {"name": "data", "mountPath": "/data", "readOnly": True}]}]}}},
    }


def test_host_network_keeps_the_cluster_dns_and_privilege_and_retries_are_opt_in():
    body = build_batch_job(dict(name="master", image="i", command=["mpirun"], host_network=True, privileged=True,
                                backoff_limit=2, active_deadline_seconds=600))
    pod = body["spec"]["template"]["spec"]
    assert (pod["hostNetwork"], pod["dnsPolicy"]) == (True, "ClusterFirstWithHostNet")
    assert pod["containers"][0]["securityContext"] == {"privileged": True}
    assert (body["spec"]["backoffLimit"], body["spec"]["activeDeadlineSeconds"]) == (2, 600)


def test_infiniband_in_the_pod_rdma_resource_ipc_lock_shm_and_host_paths_without_privilege():
    """RDMA through a device plugin's resource: the pod asks for it beside its GPUs, adds only IPC_LOCK (to pin the
    memory RDMA registers), and gets the /dev/shm size, the host paths and its data volume; nothing is privileged."""
    pod = build_batch_job(dict(SINGLE_NODE, shm_size="32Gi", capabilities=["IPC_LOCK", "IPC_LOCK"],
                               resources={"rdma/rdma_shared_device_a": 1, "memory": "512Gi"},
                               host_paths=["/dev/infiniband"]))["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    wanted = {"nvidia.com/gpu": "8", "rdma/rdma_shared_device_a": "1", "memory": "512Gi"}
    assert container["resources"] == {"limits": wanted, "requests": wanted}
    assert pod["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "32Gi"}},
                              {"name": "host-path-0", "hostPath": {"path": "/dev/infiniband"}},
                              {"name": "data", "persistentVolumeClaim": {"claimName": "imagenet"}}]
    assert container["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"},
                                         {"name": "host-path-0", "mountPath": "/dev/infiniband"},
                                         {"name": "data", "mountPath": "/data", "readOnly": True}]
    # The workers' Job of the job launcher is built the same way: privilege, where asked for, adds to the capability.
    both = build_batch_job(dict(SINGLE_NODE, privileged=True, capabilities=["IPC_LOCK"]))["spec"]["template"]["spec"]
    assert both["containers"][0]["securityContext"] == {"privileged": True, "capabilities": {"add": ["IPC_LOCK"]}}


def test_image_pull_secrets_are_referenced_by_the_pod_and_a_bad_name_is_refused():
    pod = build_batch_job(dict(SINGLE_NODE, image_pull_secrets=["gpuops-registry"]))["spec"]["template"]["spec"]
    assert pod["imagePullSecrets"] == [{"name": "gpuops-registry"}]
    assert "imagePullSecrets" not in build_batch_job(SINGLE_NODE)["spec"]["template"]["spec"]
    with pytest.raises(InvalidArgumentError) as caught:
        build_batch_job(dict(SINGLE_NODE, image_pull_secrets="gpuops-registry"))
    assert caught.value.problems == ["image_pull_secrets must be a list of Secret names, got 'gpuops-registry'"]


def test_every_problem_is_listed_before_anything_is_built():
    with pytest.raises(InvalidArgumentError) as caught:
        build_batch_job(dict(name="Bad_Name", image="", command="horovodrun", gpus=-1, backoff_limit=-1,
                             volumes=[{"name": "data", "mount_path": "data"},
                                      {"name": "two", "mount_path": "/two", "nfs": {}, "hostPath": {}}]))
    assert caught.value.problems == [
        "name 'Bad_Name' must be a DNS-1123 label of at most 63 characters: lowercase letters, digits and '-', "
        "starting and ending with a letter or digit",
        "image is required (the benchmark's container image)",
        "command must be a non-empty list of strings, got 'horovodrun'",
        "backoff_limit must be at least 0, got -1",
        "gpus must be at least 0, got -1",
        "volumes[0] must be a dict with name, an absolute mount_path and a volume source such as "
        "persistentVolumeClaim: {claimName: data}, got {'name': 'data', 'mount_path': 'data'}",
        "volumes[1] (two) must have exactly one volume source, got ['hostPath', 'nfs']",
    ]


def test_a_batch_jobs_complete_condition_is_success_and_it_runs_once_every_parallel_pod_is_ready():
    complete = {"status": {"conditions": [{"type": "Complete", "status": "True", "reason": "CompletionsReached"}]}}
    assert job_status(complete)["phase"] == "Succeeded"
    assert job_status({"status": {"active": 1, "ready": 1}})["phase"] == "Running"
    assert job_status({"spec": {"parallelism": 2}, "status": {"active": 2, "ready": 1}})["phase"] == "Pending"
    assert job_status({"spec": {"parallelism": 2}, "status": {"active": 2, "ready": 2}})["phase"] == "Running"
    assert job_status({"status": {}})["phase"] == "Pending"


def _settings():
    return Settings(wait=True, wait_timeout=60, wait_sleep=0.5, ticks_factory=lambda: iter(range(0, 1000)),
                    sleep=lambda seconds: None)


def test_a_failed_job_is_reported_with_its_pods_log():
    def fail(api):
        api.add_pod("dgx-single", "launcher", "Failed", exit_code=1, reason="Error")
        api.set_conditions("training", "dgx-single", ("Failed", "BackoffLimitExceeded",
                                                      "Job has reached the specified backoff limit"))

    api = FakeMPIJobApi(kind=BATCH_JOB, logs={"dgx-single-launcher-x7k2p": "horovodrun: rank 3 exited\n"},
                        script={3: fail})
    with pytest.raises(JobFailedError) as caught:
        ensure_present(BATCH_JOB, api, build_batch_job(SINGLE_NODE), _settings())
    details = caught.value.details
    assert details["reason"] == ("the Job failed: BackoffLimitExceeded: Job has reached the specified "
                                 "backoff limit")
    assert details["launcher_log"] == "horovodrun: rank 3 exited\n"
    assert [pod["name"] for pod in details["failed_pods"]] == ["dgx-single-launcher-x7k2p"]


def test_an_image_that_cannot_be_pulled_fails_the_wait_at_once():
    def pull_fails(api):
        api.add_pod("dgx-single", "launcher", "Pending", waiting=("ErrImagePull", "not found"))

    api = FakeMPIJobApi(kind=BATCH_JOB, script={2: pull_fails})
    with pytest.raises(JobFailedError) as caught:
        ensure_present(BATCH_JOB, api, build_batch_job(SINGLE_NODE), _settings())
    assert caught.value.details["reason"].startswith("container(s) cannot start: pod dgx-single-launcher-x7k2p: "
                                                     "container launcher (image horovod:0.28.1): ErrImagePull")


def test_parallel_ssh_workers_are_an_indexed_job_ready_once_sshd_answers():
    body = build_batch_job(dict(name="workers", image="i", command=["/usr/sbin/sshd", "-De", "-p", "22122"],
                                parallelism=2, subdomain="workers", readiness_port=22122, host_network=True,
                                one_pod_per_node=True))
    assert {key: body["spec"][key] for key in ("parallelism", "completions", "completionMode")} == {
        "parallelism": 2, "completions": 2, "completionMode": "Indexed"}
    pod = body["spec"]["template"]["spec"]
    assert pod["subdomain"] == "workers"
    assert pod["affinity"] == {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"batch.kubernetes.io/job-name": "workers"}}}]}}
    assert pod["containers"][0]["readinessProbe"] == {"tcpSocket": {"port": 22122}, "periodSeconds": 1}


def test_a_port_beyond_65535_and_a_subdomain_that_is_no_label_are_refused():
    with pytest.raises(InvalidArgumentError) as caught:
        build_batch_job(dict(name="w", image="i", command=["sshd"], readiness_port=70000, subdomain="Not_A_Label",
                             parallelism=0))
    assert caught.value.problems == [
        "parallelism must be at least 1, got 0",
        "readiness_port must be a TCP port (at most 65535), got 70000",
        "subdomain 'Not_A_Label' must be a DNS-1035 label (a headless Service's name)",
    ]


def test_without_a_command_the_image_runs_its_own():
    body = build_batch_job(dict(name="smoke", image="nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0", gpus=1))
    container = body["spec"]["template"]["spec"]["containers"][0]
    assert "command" not in container
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"
