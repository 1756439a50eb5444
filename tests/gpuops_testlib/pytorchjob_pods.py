# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PyTorchJob ml/ddp-bench's pods as the Training Operator makes them, its conditions, its pods' LOGS, and the
scripts that play the operator on gpuops_testlib.fake_job_api's cluster (the pods run, a worker crashes, the master
completes)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def torch_pod(replica_type, index, phase, exit_code=None, waiting=None, init_waiting=None):
    labels = {"training.kubeflow.org/job-name": "ddp-bench", "training.kubeflow.org/replica-type": replica_type,
              "training.kubeflow.org/replica-index": str(index)}
    if replica_type == "master":
        labels["training.kubeflow.org/job-role"] = "master"
    status = {"phase": phase}
    if exit_code is not None:
        status["containerStatuses"] = [{"name": "pytorch", "state": {"terminated": {
            "exitCode": exit_code, "reason": "Error" if exit_code else "Completed"}}}]
    if waiting is not None:
        status["containerStatuses"] = [{"name": "pytorch", "image": "pytorch:2.5.1-cuda12.4",
                                        "state": {"waiting": {"reason": waiting[0], "message": waiting[1]}}}]
    if init_waiting is not None:
        status["initContainerStatuses"] = [{"name": "init-pytorch", "image": "alpine:3.10",
                                            "state": {"waiting": {"reason": init_waiting[0], "message": init_waiting[1]}}}]
    return {"metadata": {"name": "ddp-bench-{0}-{1}".format(replica_type, index), "labels": labels,
                         "creationTimestamp": "2025-06-01T10:00:00Z"},
            "spec": {"nodeName": "node1"}, "status": status}


CREATED = ("Created", "PyTorchJobCreated", "PyTorchJob ddp-bench is created.")
RUNNING = ("Running", "PyTorchJobRunning", "PyTorchJob ddp-bench is running.")


def pods_run(api):
    api.set_conditions("ml", "ddp-bench", CREATED, RUNNING)
    api.pods = [torch_pod("master", 0, "Running"), torch_pod("worker", 0, "Running"), torch_pod("worker", 1, "Running")]


def worker_crashes(api):
    api.pods[2] = torch_pod("worker", 1, "Failed", exit_code=1)


def master_completes(api):
    api.set_conditions("ml", "ddp-bench", CREATED, RUNNING, ("Succeeded", "PyTorchJobSucceeded", "done"))
    api.pods = [torch_pod(pod["metadata"]["labels"]["training.kubeflow.org/replica-type"], index, "Succeeded", exit_code=0)
                for index, pod in zip((0, 0, 1), api.pods)]


LOGS = {"ddp-bench-master-0": "Total img/sec on 6 GPU(s): 600.0 +-1.0\n", "ddp-bench-worker-0": "Rank 2 on node2\n",
        "ddp-bench-worker-1": "Rank 4 on node3\nRuntimeError: NCCL error\n"}
