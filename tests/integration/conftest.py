# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Integration harness: one lab control plane per test run, one namespace per test, for the tests that ask for
the `lab` fixture (the role runs under roles/ do not: they build or run real tools on this machine).

The session fixture builds the binaries when the cache lacks them (tools/build_kube_binaries.sh), brings the
control plane up with playbooks/lab.yml in a run directory of its own, and takes it down with the same playbook
at the end, also when SIGTERM or Ctrl-C stops the run. Then it checks that no process it started (etcd, kube-*,
kwok, mpi-operator) is left and that none of the ports they listened on is still open, and fails the run
otherwise. A component that cannot start fails the run with what is missing; nothing is skipped.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid

import pytest

from gpuops_testlib.ansible_run import CACHE_ROOT, ansible_env
from gpuops_testlib.cache_lock import held
from gpuops_testlib.lab_control_plane import LAB_INVENTORY, LabError, build_binaries, component_logs, lab_playbook, tail
from gpuops_testlib.lab_leftovers import listening_ports, processes_of_run, what_is_left

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


def pytest_sessionstart():
    """SIGTERM (timeout, a cancelled CI job) stops the run as Ctrl-C does: pytest then tears the fixtures down, so
    the session's control plane is taken down and checked rather than left running under ~/.cache/gpuops/lab/."""
    def interrupt(signum, frame):  # pylint: disable=unused-argument
        raise KeyboardInterrupt("SIGTERM")
    signal.signal(signal.SIGTERM, interrupt)


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """Build if needed, start the lab control plane once, stop it at the end and check nothing is left."""
    if not HAS_KUBERNETES:
        pytest.fail("the kubernetes Python client is missing: run tools/bootstrap.sh and pytest from .venv", pytrace=False)
    if not os.path.isdir(LAB_INVENTORY):
        pytest.fail("the lab inventory %s is missing" % LAB_INVENTORY, pytrace=False)

    # Build step, its progress streamed to the terminal (a no-op when the cache is complete).
    try:
        bin_dir, progress = build_binaries()
    except LabError as exc:
        pytest.fail(str(exc), pytrace=False)
    sys.stderr.write(progress)

    run_dir = os.path.join(CACHE_ROOT, "lab", "pytest-%s" % uuid.uuid4().hex[:8])
    env = ansible_env(str(tmp_path_factory.mktemp("ansible")), json_output=False)

    # One control plane starts at a time: the two workers' would otherwise pick the same free ports at once.
    with held("lab-control-plane-start"):
        up = lab_playbook("present", run_dir, CLUSTER_NAME, env)
    ours = processes_of_run(run_dir)
    ports = listening_ports(ours)
    try:
        if up.rc != 0:
            pytest.fail("the lab control plane did not come up (playbooks/lab.yml):\n%s\n%s"
                        % (tail(up.stdout), component_logs(run_dir)), pytrace=False)
        sys.stderr.write("lab control plane up in %.1f s: %s, listening on %s\n"
                         % (up.seconds, sorted(ours.values()), sorted(ports)))
        yield Lab(run_dir, os.path.join(run_dir, "kubeconfig"), bin_dir)
    finally:
        # The teardown finishes even when a SIGTERM comes now (what_is_left kills what a killed playbook left).
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        logs = component_logs(run_dir)
        down = lab_playbook("absent", run_dir, CLUSTER_NAME, env)
        left = what_is_left(run_dir, ports)
        left.kill()
        problems = left.problems()
        if down.rc != 0:
            problems.insert(0, "playbooks/lab.yml -e lab_state=absent failed:\n%s" % tail(down.stdout))
        if left.run_dir_exists:
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
