# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running the main job (tools/lab.sh, tools/lab_down.sh) and looking at what it left, for the e2e tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE_ROOT = os.environ.get("GPUOPS_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "gpuops")
LAB_DIR = os.path.join(CACHE_ROOT, "lab")
RUN_DIR = os.path.join(LAB_DIR, "control-plane")
TRAINING_DIR = os.path.join(LAB_DIR, "training")
KUBECONFIG = os.path.join(RUN_DIR, "kubeconfig")
LAB_SH = os.path.join(REPO_ROOT, "tools", "lab.sh")
LAB_DOWN = os.path.join(REPO_ROOT, "tools", "lab_down.sh")
EXAMPLES = os.path.join(REPO_ROOT, "inventories", "examples")
TWO_GPU_JOB = os.path.join(EXAMPLES, "jobs", "dgx-openshift-two-gpus.yml")
VALIDATE_NODE_VARS = os.path.join(REPO_ROOT, "tests", "e2e", "playbooks", "validate_node_vars.yml")
MPI_OPERATOR_MANIFEST = os.path.join(CACHE_ROOT, "go", "mod", "github.com", "kubeflow", "mpi-operator@v0.8.0",
                                     "deploy", "v2beta1", "mpi-operator.yaml")
CONTAINER_PREFIX = "gpuops-lab-"
NETWORK = "gpuops-lab"
LAUNCHERS = {"MPIJob": "mpijob-launcher", "SSH launcher": "training-gloo"}


def venv_bin(name):
    """A program of the virtualenv running the tests (ansible-playbook, ansible-inventory)."""
    return os.path.join(os.path.dirname(sys.executable), name)


def command_env(**extra):
    """The environment of every command: the repository's ansible.cfg, no caller's kubeconfig."""
    env = dict(os.environ)
    for name in list(env):
        if name == "KUBECONFIG" or name.startswith("K8S_AUTH_"):
            del env[name]
    env.update(ANSIBLE_CONFIG=os.path.join(REPO_ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    env.update(extra)
    return env


class Run:
    """One command run to its end: return code, merged output, seconds."""

    def __init__(self, argv, timeout, **env):
        started = time.monotonic()
        self.process = subprocess.run(argv, cwd=REPO_ROOT, env=command_env(**env), stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, check=False, timeout=timeout)
        self.seconds = time.monotonic() - started
        self.output = self.process.stdout
        self.rc = self.process.returncode

    def explain(self):
        """Return code, time and the output's tail, for assertion messages."""
        return "rc=%s after %.0f s\n%s" % (self.rc, self.seconds, self.output[-6000:])


def lab_sh():
    """tools/lab.sh, the main job (make lab)."""
    run = Run(["bash", LAB_SH], timeout=3 * 3600)
    sys.stderr.write("tools/lab.sh: rc=%s in %.0f s\n%s\n" % (run.rc, run.seconds, run.output[-3000:]))
    return run


def summary_blocks(output):
    """The final summary: {'MPIJob': {'verdict': ..., 'ranks': ...}, 'SSH launcher': {...}, 'site.yml': ...}."""
    assert "==== gpuops lab:" in output, output[-4000:]
    summary = output[output.index("==== gpuops lab:"):]
    blocks, current = {}, None
    for line in summary.splitlines():
        if line.startswith("site.yml:"):
            blocks["site.yml"] = line.split(":", 1)[1].strip()
        elif line.startswith("  ") and current is not None:
            key, _separator, value = line.strip().partition(":")
            blocks[current][key] = value.strip()
        else:
            current = next((name for name in LAUNCHERS if line.startswith(name)), None)
            if current:
                blocks[current] = {"title": line}
    return summary, blocks


def lab_processes():
    """pid -> command line of every process whose command line names the lab's run directory."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if RUN_DIR + "/" in cmdline and int(pid) != os.getpid():
            found[int(pid)] = cmdline
    return found


def listening_ports(pids=None):
    """Ports in LISTEN state, of the given pids only when given."""
    out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True).stdout
    ports = set()
    for line in out.splitlines():
        fields = line.split()
        if pids is not None and not any("pid=%d," % pid in line for pid in pids):
            continue
        ports.add(int(fields[3].rsplit(":", 1)[1]))
    return ports


def lab_containers():
    """Names of the podman containers of the lab nodes."""
    out = subprocess.run(["podman", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True,
                         check=True).stdout.split()
    return [name for name in out if name.startswith(CONTAINER_PREFIX)]


def lab_network_exists():
    """Whether the lab's podman network exists."""
    return subprocess.run(["podman", "network", "exists", NETWORK], check=False).returncode == 0


def kubectl():
    """The kubectl the lab built, from tools/build_kube_binaries.sh."""
    out = subprocess.run(["bash", os.path.join(REPO_ROOT, "tools", "build_kube_binaries.sh"), "--json"],
                         capture_output=True, text=True, check=True).stdout
    return os.path.join(json.loads(out)["bin_dir"], "kubectl")
