# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Integration harness: one lab control plane per test run, one namespace per test.

The session fixture builds the binaries when the cache lacks them (tools/build_kube_binaries.sh), brings the
control plane up with playbooks/lab.yml in a run directory of its own, and takes it down with the same playbook
at the end. Then it checks that no process it started (etcd, kube-*, kwok, mpi-operator) is left and that none of
the ports they listened on is still open, and fails the run otherwise. A component that cannot start fails the
run with what is missing; nothing is skipped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from lab_harness import Leftovers, listening_ports, processes_using

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE_ROOT = os.environ.get("GPUOPS_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "gpuops")
BUILD_SCRIPT = os.path.join(REPO_ROOT, "tools", "build_kube_binaries.sh")
LAB_PLAYBOOK = os.path.join(REPO_ROOT, "playbooks", "lab.yml")
LAB_INVENTORY = os.path.join(REPO_ROOT, "inventories", "lab")
CLUSTER_NAME = "gpuops-test"

try:
    import kubernetes  # noqa: F401  pylint: disable=unused-import
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config
    HAS_KUBERNETES = True
except ImportError:
    HAS_KUBERNETES = False


class Lab:
    """What a test needs to talk to the lab control plane."""

    def __init__(self, run_dir, kubeconfig, bin_dir):
        self.run_dir = run_dir
        self.kubeconfig = kubeconfig
        self.bin_dir = bin_dir
        self.api_client = k8s_config.new_client_from_config(config_file=kubeconfig)
        self.core = k8s_client.CoreV1Api(self.api_client)
        self.batch = k8s_client.BatchV1Api(self.api_client)
        self.custom = k8s_client.CustomObjectsApi(self.api_client)

    def kubectl(self, *args, check=True):
        """Run the lab's own kubectl (the one built with the control plane)."""
        return subprocess.run([os.path.join(self.bin_dir, "kubectl"), "--kubeconfig", self.kubeconfig] + list(args),
                              capture_output=True, text=True, check=check, timeout=60)


def _ansible_env(tmp_root):
    """Environment for ansible-playbook: this checkout as gpuops.cluster, the bundled collections as usual."""
    collections = os.path.join(tmp_root, "collections")
    link_parent = os.path.join(collections, "ansible_collections", "gpuops")
    os.makedirs(link_parent, exist_ok=True)
    link = os.path.join(link_parent, "cluster")
    if not os.path.islink(link):
        os.symlink(REPO_ROOT, link)
    env = dict(os.environ)
    env["ANSIBLE_CONFIG"] = os.path.join(REPO_ROOT, "ansible.cfg")
    env["ANSIBLE_COLLECTIONS_PATH"] = collections
    env["ANSIBLE_NOCOLOR"] = "1"
    env.pop("KUBECONFIG", None)
    return env


def _ansible_playbook():
    candidate = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    if os.access(candidate, os.X_OK):
        return candidate
    found = shutil.which("ansible-playbook")
    if not found:
        pytest.fail("ansible-playbook is not installed next to this Python or on PATH: run tools/bootstrap.sh "
                    "(it installs requirements.txt into .venv) and run pytest from .venv", pytrace=False)
    return found


def run_lab_playbook(state, run_dir, env, extra=None):
    """Run playbooks/lab.yml; return the completed process (output kept for the failure message)."""
    extra_vars = {"lab_state": state, "lab_control_plane_run_dir": run_dir, "lab_control_plane_cluster_name": CLUSTER_NAME,
                  "lab_control_plane_build": False}
    extra_vars.update(extra or {})
    cmd = [_ansible_playbook(), "-i", LAB_INVENTORY, LAB_PLAYBOOK, "-e", json.dumps(extra_vars)]
    return subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False, timeout=900)


def _tail(text, lines=60):
    return "\n".join(text.splitlines()[-lines:])


def _logs(run_dir):
    """Last lines of every component log, for failure messages."""
    out = []
    for root, _dirs, files in os.walk(run_dir):
        for name in sorted(files):
            if name.endswith(".log"):
                path = os.path.join(root, name)
                with open(path, encoding="utf-8", errors="replace") as handle:
                    out.append("--- %s\n%s" % (path, _tail(handle.read(), 15)))
    return "\n".join(out)


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """Build if needed, start the lab control plane once, stop it at the end and check nothing is left."""
    if not HAS_KUBERNETES:
        pytest.fail("the kubernetes Python client is missing: run tools/bootstrap.sh and pytest from .venv", pytrace=False)
    if not os.path.isdir(LAB_INVENTORY):
        pytest.fail("the lab inventory %s is missing" % LAB_INVENTORY, pytrace=False)

    # Build step, streamed to the terminal (a no-op when the cache is complete).
    build = subprocess.run([BUILD_SCRIPT], cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    sys.stderr.write(build.stderr)
    if build.returncode != 0:
        pytest.fail("building the control plane binaries failed (tools/build_kube_binaries.sh):\n%s"
                    % _tail(build.stderr), pytrace=False)
    bin_dir = build.stdout.strip().splitlines()[-1]

    run_dir = os.path.join(CACHE_ROOT, "lab", "pytest-%s" % uuid.uuid4().hex[:8])
    env = _ansible_env(str(tmp_path_factory.mktemp("ansible")))

    started = time.monotonic()
    up = run_lab_playbook("present", run_dir, env)
    up_seconds = time.monotonic() - started
    # Every process of this lab names its run directory (data dir, kubeconfig, pki); other labs on the
    # machine (a developer's, another test run) use the same binaries but other run directories.
    ours = processes_using(bin_dir, run_dir, only_run_dir=True)
    ports = listening_ports(ours)
    try:
        if up.returncode != 0:
            pytest.fail("the lab control plane did not come up (playbooks/lab.yml):\n%s\n%s"
                        % (_tail(up.stdout), _logs(run_dir)), pytrace=False)
        sys.stderr.write("lab control plane up in %.1f s: %s, listening on %s\n"
                         % (up_seconds, sorted(info["exe"] for info in ours.values()), sorted(ports)))
        yield Lab(run_dir, os.path.join(run_dir, "kubeconfig"), bin_dir)
    finally:
        logs = _logs(run_dir)
        down = run_lab_playbook("absent", run_dir, env)
        left = Leftovers(bin_dir, run_dir, ports)
        stray = left.processes()
        open_ports = left.ports()
        left.kill()
        problems = []
        if down.returncode != 0:
            problems.append("playbooks/lab.yml -e lab_state=absent failed:\n%s" % _tail(down.stdout))
        if stray:
            problems.append("processes left after the lab went down (now killed): %s" % stray)
        if open_ports:
            problems.append("ports still listening after the lab went down: %s" % sorted(open_ports))
        if os.path.exists(run_dir):
            problems.append("run directory left behind: %s" % run_dir)
            shutil.rmtree(run_dir, ignore_errors=True)
        if problems:
            pytest.fail("\n".join(problems) + "\n" + logs, pytrace=False)


def _namespace_name(request):
    base = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:40].strip("-")
    return "%s-%s" % (base or "t", uuid.uuid4().hex[:5])


@pytest.fixture
def namespace(lab, request):  # pylint: disable=redefined-outer-name
    """A fresh namespace for one test, deleted (and waited for) afterwards."""
    name = _namespace_name(request)
    lab.core.create_namespace(k8s_client.V1Namespace(metadata=k8s_client.V1ObjectMeta(name=name, labels={"gpuops.io/test": "true"})))
    # The service account controller creates "default"; admission rejects pods until it exists.
    deadline = time.monotonic() + 60
    while not lab.core.list_namespaced_service_account(name, field_selector="metadata.name=default").items:
        if time.monotonic() > deadline:
            pytest.fail("service account default never appeared in namespace %s (kube-controller-manager?)" % name, pytrace=False)
        time.sleep(0.2)
    yield name
    lab.core.delete_namespace(name)
    deadline = time.monotonic() + 120
    while True:
        try:
            lab.core.read_namespace(name)
        except k8s_client.exceptions.ApiException as exc:
            if exc.status == 404:
                break
            raise
        if time.monotonic() > deadline:
            pytest.fail("namespace %s was not deleted within 120 s" % name, pytrace=False)
        time.sleep(0.5)
