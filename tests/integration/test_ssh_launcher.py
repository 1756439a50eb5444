# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SSH launcher end to end: playbooks/verify_training.yml with gpuops_launcher=ssh runs the
Horovod benchmark for real across two lab nodes (podman containers on the workload image), with
horovodrun --gloo and with OpenMPI's mpirun, and its training_report verdict is checked.

The nodes are a lab of their own (container prefix, network and key folder apart from the shared
lab's), made by the lab_nodes role, so that this module neither needs nor disturbs the lab other
tests use. The workload image and the Horovod wheels are built when the cache lacks them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gpuops_testlib.ansible_run import REPO_ROOT, ansible_env, run_playbook
from gpuops_testlib.lab_control_plane import tail

WORKLOAD_IMAGE_SCRIPT = os.path.join(REPO_ROOT, "tools", "build_workload_image.sh")
LAB_NODES_PLAYBOOK = os.path.join(REPO_ROOT, "playbooks", "lab_nodes.yml")
VERIFY_PLAYBOOK = os.path.join(REPO_ROOT, "playbooks", "verify_training.yml")

# Addresses and names apart from the shared lab's (10.89.77.0/24, gpuops-lab-*).
NETWORK = "gpuops-ssh-test"
SUBNET = "10.89.78.0/24"
CONTAINER_PREFIX = "gpuops-sshtest-"
NODES = {"node1": "10.89.78.11", "node2": "10.89.78.12"}

INVENTORY = """\
all:
  children:
    gpu_nodes:
      hosts:
%(hosts)s
  vars:
    lab_state_dir: %(state_dir)s
    lab_network_name: %(network)s
    lab_network_subnet: %(subnet)s
    lab_nodes_container_prefix: %(prefix)s
    # SSH nodes only: no kubelet runs in them, so they are plain (unprivileged) containers.
    lab_nodes_kube_node: false
    ansible_user: root
    ansible_ssh_private_key_file: "{{ lab_state_dir }}/ssh/id_ed25519"
    ansible_ssh_common_args: "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
    ansible_python_interpreter: /usr/bin/python3
"""


class SshLab:
    """Two lab nodes on the workload image, and how to run playbooks against them."""

    def __init__(self, root, image):
        self.root = root
        self.image = image
        self.inventory = os.path.join(root, "inventory.yml")
        self.logs = os.path.join(root, "logs")
        self.env = ansible_env(json_output=False)

    def playbook(self, playbook, extra, *options, timeout=1200):
        """The playbook run on the two nodes to its end, with its text output."""
        return run_playbook(playbook, self.inventory, extra, options, env=self.env, timeout=timeout)

    def verify(self, controller, run_name, *options, **extra):
        extra_vars = {"gpuops_launcher": "ssh", "ssh_launcher_controller": controller,
                      "ssh_launcher_log_path": os.path.join(self.logs, run_name + ".log"),
                      "ssh_launcher_run_name": run_name}
        extra_vars.update(extra)
        return self.playbook(VERIFY_PLAYBOOK, extra_vars, *options)

    def report(self, run_name):
        with open(os.path.join(self.logs, run_name + ".json"), encoding="utf-8") as handle:
            return json.load(handle)


@pytest.fixture(scope="module")
def ssh_lab(tmp_path_factory):
    build = subprocess.run(["bash", WORKLOAD_IMAGE_SCRIPT], cwd=REPO_ROOT, capture_output=True, text=True,
                           check=False, timeout=3600)
    sys.stderr.write(build.stderr)
    if build.returncode != 0:
        pytest.fail("building the workload image failed (tools/build_workload_image.sh):\n%s" % tail(build.stderr),
                    pytrace=False)
    image = build.stdout.strip().splitlines()[-1]

    root = str(tmp_path_factory.mktemp("ssh-lab"))
    hosts = "\n".join("        %s:\n          ansible_host: %s" % item for item in sorted(NODES.items()))
    with open(os.path.join(root, "inventory.yml"), "w", encoding="utf-8") as handle:
        handle.write(INVENTORY % {"hosts": hosts, "state_dir": os.path.join(root, "state"), "network": NETWORK,
                                  "subnet": SUBNET, "prefix": CONTAINER_PREFIX})
    lab = SshLab(root, image)
    up = lab.playbook(LAB_NODES_PLAYBOOK, {"lab_nodes_image": image})
    try:
        if up.rc != 0:
            pytest.fail("the lab nodes did not come up on %s (playbooks/lab_nodes.yml):\n%s" % (image, tail(up.stdout)),
                        pytrace=False)
        yield lab
    finally:
        down = lab.playbook(LAB_NODES_PLAYBOOK, {"lab_state": "absent"})
        left = subprocess.run(["podman", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True,
                              check=False).stdout.split()
        stray = [name for name in left if name.startswith(CONTAINER_PREFIX)]
        if down.rc != 0 or stray:
            pytest.fail("taking the SSH test nodes down failed (containers left: %s):\n%s" % (stray, tail(down.stdout)),
                        pytrace=False)


def _assert_two_rank_report(report, controller):
    assert report["passed"] is True, report["failures"]
    assert report["failures"] == []
    assert report["ranks"] == 2
    assert report["device"] == "CPU"
    assert report["framework"] == "tensorflow"
    assert report["model"] == "small_cnn"
    per_rank = sorted(report["per_rank"], key=lambda rank: rank["rank"])
    assert [rank["rank"] for rank in per_rank] == [0, 1], per_rank
    # One rank per node, in hostfile order.
    assert [rank["host"] for rank in per_rank] == ["node1", "node2"], (controller, per_rank)
    for rank in per_rank:
        assert rank["img_per_sec"] > 0, rank
        assert rank["iterations"] == 10, rank
    assert report["img_per_sec_total"]["mean"] == pytest.approx(sum(rank["img_per_sec"] for rank in per_rank), rel=0.01)


# horovodrun --gloo across two nodes is make lab's SSH verdict (its stage 7), which the e2e tier checks on the
# lab's nodes; here the mpirun path, which nothing else runs.
@pytest.mark.parametrize("controller", ["mpi"])
def test_benchmark_runs_across_two_nodes(ssh_lab, controller):
    run_name = "two-nodes-%s" % controller
    result = ssh_lab.verify(controller, run_name)
    assert result.rc == 0, tail(result.stdout + result.stderr)
    _assert_two_rank_report(ssh_lab.report(run_name), controller)
    with open(os.path.join(ssh_lab.logs, run_name + ".log"), encoding="utf-8") as handle:
        log = handle.read()
    # Both launchers tag every line with its rank; mpirun as [job,rank], horovodrun as [rank].
    tag = "[1,1]<stdout>:" if controller == "mpi" else "[1]<stdout>:"
    assert tag + "Rank 1 on node2: Img/sec per CPU:" in log
    assert "Total img/sec on 2 CPU(s):" in log


def test_unmet_thresholds_are_all_listed(ssh_lab):
    run_name = "thresholds"
    result = ssh_lab.verify("gloo", run_name, gpuops_training_min_img_per_sec_per_device=1000000,
                            gpuops_training_require_transport=["NET/IB"])
    assert result.rc != 0
    report = ssh_lab.report(run_name)
    assert report["passed"] is False
    assert len(report["failures"]) == 2, report["failures"]
    for failure in report["failures"]:
        assert failure in result.stdout, (failure, tail(result.stdout))


def test_expected_ranks_other_than_the_hosts_slots_are_refused_before_the_run(ssh_lab):
    run_name = "wrong-ranks"
    result = ssh_lab.verify("gloo", run_name, gpuops_training_expect_ranks=3)
    assert result.rc != 0
    assert "gpuops_training_expect_ranks: got 3; expected 2, the ranks the hosts run" in result.stdout, tail(result.stdout)
    assert not os.path.exists(os.path.join(ssh_lab.logs, run_name + ".log"))


def test_check_mode_previews_without_running(ssh_lab):
    run_name = "check-mode"
    result = ssh_lab.verify("mpi", run_name, "--check", "--diff")
    assert result.rc == 0, tail(result.stdout + result.stderr)
    assert "mpirun --allow-run-as-root --tag-output -np 2 --hostfile" in result.stdout
    assert "node1 slots=1" in result.stdout and "node2 slots=1" in result.stdout
    assert not os.path.exists(os.path.join(ssh_lab.logs, run_name + ".log"))
    # Nothing was left on the nodes either: no run key is authorised.
    keys = subprocess.run(["podman", "exec", CONTAINER_PREFIX + "node2", "cat", "/root/.ssh/authorized_keys"],
                          capture_output=True, text=True, check=True).stdout
    assert "gpuops-training-run" not in keys
