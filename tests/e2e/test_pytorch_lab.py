# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PyTorch on the lab make lab made (playbooks/lab_pytorch.yml, make lab-pytorch): the PyTorch image without Horovod
(PyPI's torch, the CUDA build, training on CPUs) loaded into both nodes' containerd by the image_archive role, and a
PyTorchJob whose master and worker pods run on node1 and node2, started by torchrun with torch.distributed's Gloo
across the pod network, judged by the verdict from the pods' own logs. A second run loads and trains nothing again.
Then, on the same image, the MPIJob launcher's ddp distribution (no torchrun: mpirun starts a rank on each node). The
pod launcher's ddp distribution runs in the named tier pytorch-horovod (tests/pytorch_horovod)."""

from __future__ import annotations

import json
import os
import sys

import pytest

from gpuops_testlib.ansible_run import REPO_ROOT, run_playbook
from gpuops_testlib.lab_pods import (
    SHORT_BENCHMARK_ARGS, WORKLOAD_BENCHMARK, WORKLOAD_PYTHON, controller_inventory, kubectl, verified, workload_image,
)
from main_job import KUBECONFIG, TRAINING_DIR

LAB_INVENTORY = os.path.join(REPO_ROOT, "inventories", "lab")
LAB_PYTORCH = os.path.join(REPO_ROOT, "playbooks", "lab_pytorch.yml")
JOB_NAME = "gpuops-pytorchjob"


@pytest.fixture(scope="module")
def lab_pytorch(second_run):
    """The PyTorch image built (about 3 minutes the first time), loaded into both nodes, and the PyTorchJob run."""
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    return run_playbook(LAB_PYTORCH, LAB_INVENTORY, timeout=1800)


def _built_image(lab_pytorch):  # pylint: disable=redefined-outer-name
    """The PyTorch image lab_pytorch built and loaded into both nodes."""
    return lab_pytorch.result("Build the PyTorch image, or find it built (a 5 GB image; about 3 minutes the first time)",
                              "localhost")["stdout_lines"][-1]


def _pods():
    listed = kubectl("get", "pods", "-n", "default", "-l", "training.kubeflow.org/job-name=" + JOB_NAME, "-o", "json")
    return json.loads(listed.stdout)["items"]


def test_a_pytorchjob_trains_with_ddp_across_both_nodes_and_passes(lab_pytorch):
    assert lab_pytorch.rc == 0, lab_pytorch.explain()
    with open(os.path.join(TRAINING_DIR, "pytorchjob-launcher.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    assert report["passed"] is True and report["ranks"] == 2, report
    assert report["summary"][0].startswith("verdict:     PASSED (a PyTorchJob (default/gpuops-pytorchjob, torchrun in each "
                                           "of its 2 pods, PyTorch's DistributedDataParallel))"), report["summary"]
    # The lab's baseline is TensorFlow's one rank: no scaling figure against it.
    assert [line for line in report["summary"] if line.startswith("scaling:")] == [
        "scaling:     not measured: set gpuops_training_baseline_img_per_sec (one device alone, same model and batch "
        "size)"], report["summary"]
    # The rank census: a rank in each of the two pods, as the launcher placed them.
    assert report["placement"] == {"hosts": {"gpuops-pytorchjob-master-0": 1, "gpuops-pytorchjob-worker-0": 1},
                                   "ranks_named": 2, "expected": [1, 1]}, report["placement"]
    with open(os.path.join(TRAINING_DIR, "pytorchjob-launcher.log"), encoding="utf-8") as handle:
        log = handle.read()
    assert "DistributedDataParallel over gloo (torchrun)" in log and "Total img/sec on 2 CPU(s)" in log, log[-3000:]
    pods = _pods()
    placed = sorted((pod["metadata"]["labels"]["training.kubeflow.org/replica-type"], pod["spec"]["nodeName"])
                    for pod in pods)
    assert [replica for replica, _node in placed] == ["master", "worker"], placed
    assert sorted(node for _replica, node in placed) == ["node1", "node2"], placed
    worker = next(pod for pod in pods if pod["metadata"]["labels"]["training.kubeflow.org/replica-type"] == "worker")
    # The worker waited for the master's name in the Training Operator's init container, run from the lab's image.
    init = worker["status"]["initContainerStatuses"][0]
    assert init["name"] == "init-pytorch" and init["state"]["terminated"]["exitCode"] == 0, init
    assert worker["spec"]["initContainers"][0]["image"] == workload_image()
    sys.stderr.write("pytorchjob launcher, DDP across node1 and node2: %s\n" % "\n".join(report["summary"]))


def test_a_second_run_loads_nothing_and_keeps_the_verdict(lab_pytorch):
    assert lab_pytorch.rc == 0, lab_pytorch.explain()
    again = run_playbook(LAB_PYTORCH, LAB_INVENTORY, timeout=900)
    assert again.rc == 0, again.explain()
    assert again.changed_tasks("node1") == [] and again.changed_tasks("node2") == []
    assert again.result("Build the PyTorch image, or find it built (a 5 GB image; about 3 minutes the first time)",
                        "localhost")["changed"] is False


def test_an_mpijob_starts_every_ddp_rank_with_mpirun_on_both_nodes(lab_pytorch, tmp_path):
    """mpijob_launcher_distribution ddp: no torchrun; mpirun starts each rank over the operator's SSH, and the
    program reads its rank from Open MPI's variables and meets rank 0 on the first worker by its Service name."""
    assert lab_pytorch.rc == 0, lab_pytorch.explain()
    pytorch_image = _built_image(lab_pytorch)
    inventory = controller_inventory(tmp_path / "mpijob-ddp.yml", {
        "gpuops_kubeconfig": KUBECONFIG, "gpuops_launcher": "mpijob", "kube_job_namespace": "default",
        "mpijob_launcher_name": "e2e-mpijob-ddp", "mpijob_launcher_image": pytorch_image,
        "kube_job_image_pull_policy": "Never", "mpijob_launcher_distribution": "ddp",
        "mpijob_launcher_workers": 2, "mpijob_launcher_spread_workers": True, "kube_job_python": WORKLOAD_PYTHON,
        "kube_job_benchmark_path": WORKLOAD_BENCHMARK, "kube_job_benchmark_args": SHORT_BENCHMARK_ARGS[2:],
        "kube_job_wait_timeout": 600, "kube_job_cleanup_enabled": True, "gpuops_training_expect_ranks": 2})
    report, log = verified(tmp_path, inventory, "e2e-mpijob-ddp", ranks=2)
    lines = dict(line.split(":", 1) for line in report["summary"])
    assert lines["verdict"].strip().startswith("PASSED (an MPIJob (default/e2e-mpijob-ddp, each rank started by mpirun, "
                                               "PyTorch's DistributedDataParallel))"), lines
    assert lines["transport"].strip() == "no NCCL: CPU ranks, Gloo over TCP", lines
    assert "DistributedDataParallel over gloo (mpirun)" in log, log[-3000:]
    events = json.loads(kubectl("get", "events", "-n", "default", "--field-selector", "reason=Scheduled",
                                "-o", "json").stdout)["items"]
    placed = sorted(event["message"].rsplit(" to ", 1)[1] for event in events
                    if "default/e2e-mpijob-ddp-worker-" in event["message"])
    assert placed == ["node1", "node2"], placed
    sys.stderr.write("mpijob launcher, DDP started by mpirun on node1 and node2: %s\n" % "\n".join(report["summary"]))
