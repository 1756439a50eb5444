# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab control plane is real: scheduling, API validation and the MPI Operator's reconciliation.

Pods never run: kwok marks them Running (and Job pods Succeeded) once the real scheduler has bound them.
"""

from __future__ import annotations

import json
import time

import pytest
from kubernetes import client as k8s_client

from gpuops_testlib.lab_leftovers import processes_of_run
from gpuops_testlib.waiting import wait_for

GPU = "nvidia.com/gpu"
MPIJOB_GROUP, MPIJOB_VERSION, MPIJOB_PLURAL = "kubeflow.org", "v2beta1", "mpijobs"


def gpu_pod(name, gpus, requests=None):
    limits = {GPU: str(gpus)}
    return k8s_client.V1Pod(
        metadata=k8s_client.V1ObjectMeta(name=name),
        spec=k8s_client.V1PodSpec(
            containers=[k8s_client.V1Container(
                name="main", image="registry.invalid/cuda-sample:never-pulled",
                resources=k8s_client.V1ResourceRequirements(limits=limits, requests=requests or limits))],
            restart_policy="Never"))


def gpu_nodes(lab):
    return {node.metadata.name: int(node.status.allocatable.get(GPU, "0"))
            for node in lab.core.list_node().items if int(node.status.allocatable.get(GPU, "0")) > 0}


def test_fake_nodes_mirror_the_lab_inventory(lab):
    nodes = {node.metadata.name: node for node in lab.core.list_node().items}
    assert set(nodes) == {"node1", "node2", "lab-cpu1"}
    for name in ("node1", "node2"):
        labels = nodes[name].metadata.labels
        assert nodes[name].status.allocatable[GPU] == "2"
        assert labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB"
        assert labels["nvidia.com/gpu.count"] == "2"
        assert labels["nvidia.com/gpu.present"] == "true"
    assert GPU not in nodes["lab-cpu1"].status.allocatable
    assert "nvidia.com/gpu.present" not in nodes["lab-cpu1"].metadata.labels
    for node in nodes.values():
        ready = [c for c in node.status.conditions if c.type == "Ready"]
        assert ready and ready[0].status == "True", node.metadata.name


def test_the_controller_manager_and_the_scheduler_run_without_leader_election(lab):
    """Alone in the lab, they have nobody to hand over to: with leader election, a lease renewal that misses its
    deadline on a loaded machine makes the process exit, and nothing starts it again."""
    flags = {}
    for pid, program in processes_of_run(lab.run_dir).items():
        if program in ("kube-controller-manager", "kube-scheduler"):
            with open("/proc/%d/cmdline" % pid, "rb") as handle:
                flags[program] = [part.decode() for part in handle.read().split(b"\0") if part.startswith(b"--leader")]
    assert flags == {"kube-controller-manager": ["--leader-elect=false"], "kube-scheduler": ["--leader-elect=false"]}


def test_gpu_pods_are_scheduled_only_onto_gpu_nodes(lab, namespace):
    capacity = gpu_nodes(lab)
    total = sum(capacity.values())
    for i in range(total):
        lab.core.create_namespaced_pod(namespace, gpu_pod("gpu-%d" % i, 1))

    def all_running():
        pods = lab.core.list_namespaced_pod(namespace).items
        return pods if len(pods) == total and all(p.status.phase == "Running" for p in pods) else None

    pods = wait_for(all_running, 60, "%d one-GPU pods to be bound and Running" % total)
    placed = {}
    for pod in pods:
        assert pod.spec.node_name in capacity, "%s landed on %s, which has no GPU" % (pod.metadata.name, pod.spec.node_name)
        placed[pod.spec.node_name] = placed.get(pod.spec.node_name, 0) + 1
    # Every GPU is used exactly once: the scheduler counted nvidia.com/gpu per node.
    assert placed == capacity


def test_gpu_pod_stays_pending_when_no_node_has_room(lab, namespace):
    capacity = gpu_nodes(lab)
    for i, gpus in enumerate(capacity.values()):
        lab.core.create_namespaced_pod(namespace, gpu_pod("fill-%d" % i, gpus))
    wait_for(lambda: all(p.status.phase == "Running" for p in lab.core.list_namespaced_pod(namespace).items),
             60, "the pods filling every GPU to run")
    lab.core.create_namespaced_pod(namespace, gpu_pod("one-too-many", 1))

    def unschedulable():
        pod = lab.core.read_namespaced_pod("one-too-many", namespace)
        for condition in pod.status.conditions or []:
            if condition.type == "PodScheduled" and condition.status == "False" and condition.reason == "Unschedulable":
                return pod, condition
        return None

    pod, condition = wait_for(unschedulable, 60, "the scheduler to report the extra pod Unschedulable")
    assert pod.status.phase == "Pending"
    assert not pod.spec.node_name
    assert "Insufficient %s" % GPU in condition.message, condition.message
    # It stays so: nothing frees a GPU, so a later look still finds it Pending.
    time.sleep(2)
    assert lab.core.read_namespaced_pod("one-too-many", namespace).status.phase == "Pending"


def test_invalid_pod_is_rejected_with_the_api_servers_validation_message(lab, namespace):
    bad = gpu_pod("bad-gpu-request", 2, requests={GPU: "1"})
    with pytest.raises(k8s_client.exceptions.ApiException) as raised:
        lab.core.create_namespaced_pod(namespace, bad)
    assert raised.value.status == 422
    message = json.loads(raised.value.body)["message"]
    assert 'spec.containers[0].resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2' in message, message


def test_invalid_mpijob_is_rejected_by_the_crd_schema(lab, namespace):
    body = mpijob("bad", workers=2)
    body["spec"]["mpiImplementation"] = "NCCL"
    with pytest.raises(k8s_client.exceptions.ApiException) as raised:
        lab.custom.create_namespaced_custom_object(MPIJOB_GROUP, MPIJOB_VERSION, namespace, MPIJOB_PLURAL, body)
    assert raised.value.status == 422
    message = json.loads(raised.value.body)["message"]
    assert 'spec.mpiImplementation: Unsupported value: "NCCL"' in message, message


def mpijob(name, workers):
    def template(gpus):
        container = {"name": "main", "image": "registry.invalid/horovod:never-pulled", "command": ["mpirun", "hostname"]}
        if gpus:
            container["resources"] = {"limits": {GPU: str(gpus)}}
        return {"spec": {"containers": [container]}}

    return {
        "apiVersion": "%s/%s" % (MPIJOB_GROUP, MPIJOB_VERSION),
        "kind": "MPIJob",
        "metadata": {"name": name},
        "spec": {
            "slotsPerWorker": 1,
            # Keep the worker pods after success so that the test can look at them.
            "runPolicy": {"cleanPodPolicy": "None"},
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": template(0)},
                "Worker": {"replicas": workers, "template": template(1)},
            },
        },
    }


def test_mpijob_v2beta1_is_reconciled_by_the_real_mpi_operator(lab, namespace):
    name = "pi"
    lab.custom.create_namespaced_custom_object(MPIJOB_GROUP, MPIJOB_VERSION, namespace, MPIJOB_PLURAL, mpijob(name, 2))

    def status():
        job = lab.custom.get_namespaced_custom_object(MPIJOB_GROUP, MPIJOB_VERSION, namespace, MPIJOB_PLURAL, name)
        return {c["type"]: c["status"] for c in job.get("status", {}).get("conditions", [])}

    def succeeded():
        return status().get("Succeeded") == "True"

    wait_for(succeeded, 120, lambda: "MPIJob %s to succeed; conditions now %s" % (name, status()))

    job = lab.custom.get_namespaced_custom_object(MPIJOB_GROUP, MPIJOB_VERSION, namespace, MPIJOB_PLURAL, name)
    uid = job["metadata"]["uid"]

    def owned(obj):
        return any(ref.uid == uid and ref.controller for ref in obj.metadata.owner_references or [])

    launcher = lab.batch.read_namespaced_job(name + "-launcher", namespace)
    assert owned(launcher)
    assert any(c.type == "Complete" and c.status == "True" for c in launcher.status.conditions)

    capacity = gpu_nodes(lab)
    workers = {p.metadata.name: p for p in lab.core.list_namespaced_pod(namespace).items if p.metadata.name.startswith(name + "-worker-")}
    assert sorted(workers) == [name + "-worker-0", name + "-worker-1"]
    for pod in workers.values():
        assert owned(pod)
        assert pod.spec.node_name in capacity

    service = lab.core.read_namespaced_service(name, namespace)
    assert owned(service)
    assert service.spec.cluster_ip == "None"

    config = lab.core.read_namespaced_config_map(name + "-config", namespace)
    assert owned(config)
    hostfile = config.data["hostfile"].split("\n")
    for i in range(2):
        assert "%s-worker-%d.%s.%s.svc slots=1" % (name, i, name, namespace) in hostfile, config.data["hostfile"]

    secret = lab.core.read_namespaced_secret(name + "-ssh", namespace)
    assert owned(secret)
    assert secret.type == "kubernetes.io/ssh-auth"
    assert "ssh-privatekey" in secret.data
