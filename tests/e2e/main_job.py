# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running the main job (tools/lab.sh, tools/lab_down.sh) and looking at what it left, for the e2e tests."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gpuops_testlib.ansible_run import CACHE_ROOT, REPO_ROOT, AnsibleRun, ansible_env, run
# kubectl, lab_kubectl_path, workload_image: the e2e tests take them from here with the lab's other probes.
from gpuops_testlib.lab_pods import (  # noqa: F401  pylint: disable=unused-import
    LAB_KUBECONFIG, NODE_CONTAINER_PREFIX, kubectl, lab_kubectl_path, workload_image,
)
from gpuops_testlib.versions import pinned
# listening_ports: the e2e tests take it from here with the lab's other probes.
from gpuops_testlib.lab_leftovers import listening_ports, processes_of_run  # noqa: F401  pylint: disable=unused-import
from gpuops_testlib.lab_leftovers import what_is_left

LAB_DIR = os.path.join(CACHE_ROOT, "lab")
RUN_DIR = os.path.join(LAB_DIR, "control-plane")
TRAINING_DIR = os.path.join(LAB_DIR, "training")
KUBECONFIG = LAB_KUBECONFIG
LAB_SH = os.path.join(REPO_ROOT, "tools", "lab.sh")
LAB_DOWN = os.path.join(REPO_ROOT, "tools", "lab_down.sh")
EXAMPLES = os.path.join(REPO_ROOT, "inventories", "examples")
TWO_GPU_JOB = os.path.join(EXAMPLES, "jobs", "dgx-openshift-two-gpus.yml")
VALIDATE_NODE_VARS = os.path.join(REPO_ROOT, "tests", "e2e", "playbooks", "validate_node_vars.yml")
MPI_OPERATOR_MANIFEST = os.path.join(CACHE_ROOT, "go", "mod", "github.com", "kubeflow", "mpi-operator@" + pinned("mpi_operator"),
                                     "deploy", "v2beta1", "mpi-operator.yaml")
TRAINING_OPERATOR_KUSTOMIZATION = os.path.join(CACHE_ROOT, "go", "mod", "github.com", "kubeflow",
                                               "training-operator@" + pinned("training_operator"), "manifests",
                                               "overlays", "standalone")
CONTAINER_PREFIX = NODE_CONTAINER_PREFIX
NETWORK = "gpuops-lab"
LAUNCHERS = {"MPIJob": "mpijob-launcher", "SSH launcher": "training-gloo"}


def command_env(**extra):
    """The environment of every command: the repository's ansible.cfg, no caller's kubeconfig."""
    return ansible_env(json_output=False, **extra)


class Run(AnsibleRun):
    """One command run to its end: return code, merged output, seconds."""

    def __init__(self, argv, timeout, **env):
        done = run(argv, command_env(**env), timeout, merge_output=True)
        super().__init__(argv, done.rc, done.stdout, done.stderr, done.seconds)

    def explain(self, host=None):
        """Return code, time and the output's tail, for assertion messages."""
        return "rc=%s after %.0f s\n%s" % (self.rc, self.seconds, self.output[-6000:])


def lab_sh():
    """tools/lab.sh, the main job (make lab)."""
    run = Run(["bash", LAB_SH], timeout=3 * 3600)
    sys.stderr.write("tools/lab.sh: rc=%s in %.0f s\n%s\n" % (run.rc, run.seconds, run.output[-3000:]))
    return run


def lab_processes():
    """{pid: program} of every process naming the lab's run directory."""
    return processes_of_run(RUN_DIR)


def lab_containers():
    """Names of the podman containers of the lab nodes."""
    out = subprocess.run(["podman", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True,
                         check=True).stdout.split()
    return [name for name in out if name.startswith(CONTAINER_PREFIX)]


def lab_network_exists():
    """Whether the lab's podman network exists."""
    return subprocess.run(["podman", "network", "exists", NETWORK], check=False).returncode == 0


def lab_is_up():
    """Whether anything of a lab is there: its node containers, its network, or its control plane's processes or
    files."""
    return bool(lab_containers() or lab_network_exists() or what_is_left(RUN_DIR))


def take_down_a_lab_left_up(why, say=sys.stderr.write):
    """tools/lab_down.sh when a lab is up, saying why through say; its run, or None when no lab was up. A
    teardown that fails stops the caller: nothing run after it would start from what it expects."""
    if not lab_is_up():
        return None
    say("e2e: %s: taking it down (tools/lab_down.sh; the cached builds stay)\n" % why)
    down = Run(["bash", LAB_DOWN], timeout=900)
    if down.rc != 0:
        pytest.fail("tools/lab_down.sh failed, so the lab is in no known state:\n" + down.explain(), pytrace=False)
    return down
