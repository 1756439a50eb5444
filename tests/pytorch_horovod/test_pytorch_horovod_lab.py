# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PyTorch through Horovod, and PyTorch's DDP over SSH, on the lab (the named tier pytorch-horovod).

playbooks/lab_pytorch_horovod.yml (make lab-pytorch-horovod) compiles Horovod against torch once, builds the PyTorch
image with it and imports it into node1's containerd, and builds root's environment with torch and Horovod on both
nodes from the same wheelhouse. It ends with the SSH launcher's DDP across node1 and node2: mpirun starts one
torchrun on each node. Then, on what it made:
- Horovod with torch across both nodes over SSH, started by horovodrun --gloo and by mpirun;
- horovodrun with two ranks in one pod of the image (the pod launcher's horovod distribution);
- on the same image, PyTorch's DDP with no Horovod: torchrun with two ranks in one pod (the pod launcher's ddp);
- the playbook again: nothing is built or changed.
The e2e tier runs PyTorch's DDP across both nodes: a PyTorchJob, and an MPIJob (tests/e2e/test_pytorch_lab.py).
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from gpuops_testlib.ansible_run import REPO_ROOT, run_playbook
from gpuops_testlib.lab_pods import (
    SHORT_BENCHMARK_ARGS, WORKLOAD_BENCHMARK, WORKLOAD_PYTHON, controller_inventory, verified,
)
from gpuops_testlib.versions import pinned
from main_job import KUBECONFIG, TRAINING_DIR

LAB_INVENTORY = os.path.join(REPO_ROOT, "inventories", "lab")
PLAYBOOK = os.path.join(REPO_ROOT, "playbooks", "lab_pytorch_horovod.yml")
VERIFY_TRAINING = os.path.join(REPO_ROOT, "playbooks", "verify_training.yml")
ENV_PYTHON = "/root/venvs/gpuops-torch/bin/python"
BUILD_IMAGE = "Build the PyTorch image with Horovod, or find it built (a 5 GB image; about 3 minutes the first time)"
# The roles whose tasks change on every run: the SSH launcher's run of the benchmark, and the verdict's new report.
MEASUREMENT_ROLES = ("gpuops.cluster.ssh_launcher : ", "gpuops.cluster.training_verdict : ")
# The lab's benchmark without its --framework tensorflow.
LAB_ARGS = ["--device", "cpu", "--model", "small_cnn", "--batch-size", "16", "--num-warmup-batches", "2",
            "--num-iters", "5", "--num-batches-per-iter", "2"]


@pytest.fixture(scope="module")
def built(lab):  # pylint: disable=unused-argument
    """Horovod's compile against torch (about 4 minutes the first time), the image, the environments, DDP over SSH."""
    done = run_playbook(PLAYBOOK, LAB_INVENTORY, timeout=3600)
    sys.stderr.write("lab_pytorch_horovod.yml: rc=%s in %.0f s\n" % (done.rc, done.seconds))
    return done


def _one_pod_on_node1(tmp_path, built, name, benchmark_args, **variables):
    """An inventory for the pod launcher: two ranks in one pod of the image the playbook imported into node1."""
    return controller_inventory(tmp_path / (name + ".yml"), dict({
        "gpuops_kubeconfig": KUBECONFIG, "gpuops_launcher": "pod", "kube_job_namespace": "default",
        "pod_launcher_name": name, "pod_launcher_image": built.result(BUILD_IMAGE, "localhost")["stdout_lines"][-1],
        "kube_job_image_pull_policy": "Never", "kube_job_node_selector": {"kubernetes.io/hostname": "node1"},
        "pod_launcher_ranks": 2, "kube_job_python": WORKLOAD_PYTHON, "kube_job_benchmark_path": WORKLOAD_BENCHMARK,
        "kube_job_benchmark_args": benchmark_args, "kube_job_wait_timeout": 600, "kube_job_cleanup_enabled": True,
        "gpuops_training_expect_ranks": 2}, **variables))


def _report(run_name):
    with open(os.path.join(TRAINING_DIR, run_name + ".json"), encoding="utf-8") as handle:
        report = json.load(handle)
    with open(os.path.join(TRAINING_DIR, run_name + ".log"), encoding="utf-8") as handle:
        return report, handle.read()


def test_ddp_over_ssh_runs_a_torchrun_on_each_node_and_passes(built):
    assert built.rc == 0, built.explain()
    report, log = _report("pytorch-ddp-ssh")
    assert report["passed"] is True and report["ranks"] == 4, report
    lines = dict(line.split(":", 1) for line in report["summary"])
    assert lines["verdict"].strip().startswith(
        "PASSED (torchrun on each host (c10d rendezvous on node1), started by mpirun over SSH (node1, node2))"), lines
    assert lines["transport"].strip() == "no NCCL: CPU ranks, Gloo over TCP", lines
    assert "DistributedDataParallel over gloo (torchrun)" in log and "Total img/sec on 4 CPU(s)" in log, log[-3000:]
    # Both nodes' environments came from the wheelhouse: torch at the pin and the Horovod wheel compiled against it.
    for node in ("node1", "node2"):
        env = built.result("Publish the environment as user_python_env_result", node)["ansible_facts"]["user_python_env_result"]
        assert env["python"] == ENV_PYTHON and env["framework"] == "torch==" + pinned("torch"), env
        assert env["horovod_from"].startswith("wheel horovod-%s-" % pinned("horovod")), env
        assert "PyTorch" in env["frameworks"] and sorted(env["controllers"]) == ["Gloo", "MPI"], env
    sys.stderr.write("ssh launcher, DDP on node1 and node2: %s\n" % "\n".join(report["summary"]))


@pytest.mark.parametrize("controller, launched_by", [("gloo", "horovodrun --gloo"), ("mpi", "mpirun")])
def test_horovod_built_against_torch_trains_on_both_nodes_over_ssh(built, controller, launched_by):
    assert built.rc == 0, built.explain()
    run_name = "pytorch-horovod-" + controller
    ran = run_playbook(VERIFY_TRAINING, LAB_INVENTORY, extra_vars={
        "gpuops_launcher": "ssh", "ssh_launcher_controller": controller, "ssh_launcher_run_name": run_name,
        "ssh_launcher_program_args": ["--framework", "pytorch"] + LAB_ARGS,
        "training_benchmark_python": ENV_PYTHON, "training_benchmark_framework": "pytorch",
        "gpuops_training_baseline_img_per_sec": None}, timeout=1800)
    assert ran.rc == 0, ran.explain()
    report, log = _report(run_name)
    assert report["passed"] is True and report["ranks"] == 4, report
    assert report["summary"][0].startswith("verdict:     PASSED (%s over SSH (node1, node2))" % launched_by), report["summary"]
    assert "PyTorch " + pinned("torch") in log and "Total img/sec on 4 CPU(s)" in log, log[-3000:]
    # The check that Horovod imports found the torch binding with both controllers.
    probe = ran.result("Record what Horovod was built with", "node1")["ansible_facts"]["training_benchmark_horovod"]
    assert probe["gloo"] is True and probe["mpi"] is True, probe
    sys.stderr.write("ssh launcher, Horovod (%s) with torch: %s\n" % (controller, "\n".join(report["summary"])))


def test_horovodrun_runs_two_ranks_of_torch_in_one_pod_of_the_image(built, tmp_path):
    assert built.rc == 0, built.explain()
    inventory = _one_pod_on_node1(tmp_path, built, "pytorch-horovod-pod", ["--framework", "pytorch"] + SHORT_BENCHMARK_ARGS[2:])
    report, log = verified(tmp_path, inventory, "pytorch-horovod-pod", ranks=2)
    assert report["summary"][0] == "verdict:     PASSED (one pod running horovodrun (default/pytorch-horovod-pod))", report["summary"]
    assert "PyTorch " + pinned("torch") in log, log[-3000:]
    sys.stderr.write("pod launcher, horovodrun with torch in one pod: %s\n" % "\n".join(report["summary"]))


def test_the_pod_launcher_runs_ddp_with_torchrun_in_one_pod(built, tmp_path):
    """The role gives the program --framework pytorch --distribution ddp itself."""
    assert built.rc == 0, built.explain()
    inventory = _one_pod_on_node1(tmp_path, built, "pytorch-pod-ddp", SHORT_BENCHMARK_ARGS[2:], pod_launcher_distribution="ddp")
    report, log = verified(tmp_path, inventory, "pytorch-pod-ddp", ranks=2)
    assert report["summary"][0] == "verdict:     PASSED (one pod running torchrun (default/pytorch-pod-ddp))", report["summary"]
    assert "DistributedDataParallel over gloo (torchrun)" in log, log[-3000:]
    sys.stderr.write("pod launcher, DDP in one pod: %s\n" % "\n".join(report["summary"]))


def test_a_second_run_builds_loads_and_installs_nothing_and_measures_again(built):
    """The verdict over SSH is a measurement, taken on every run (as verify_training.yml's always is); nothing
    before it changes: no build, no archive, no import, no environment."""
    assert built.rc == 0, built.explain()
    again = run_playbook(PLAYBOOK, LAB_INVENTORY, timeout=1800)
    assert again.rc == 0, again.explain()
    assert again.changed_tasks("localhost") == [], again.changed_tasks("localhost")
    for host in ("node1", "node2"):
        changed = [name for name, _host, result in again.tasks(host) if result.get("changed")]
        assert [name for name in changed if not name.startswith(MEASUREMENT_ROLES)] == [], changed
    assert again.result("Run the benchmark from node1", "node1")["changed"] is True
