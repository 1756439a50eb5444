# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running playbooks/gpu_stack.yml against the lab and reading its results, for the GPU stack tests.

The playbook is run the way users run it (ansible-playbook), with the JSON callback so that every task's
result (changed, msg, diff) can be asserted. Nodes are fake kwok Nodes made by the tests; the GPU hosts
of the generated inventory are those nodes, and nothing connects to them (facts come from the inventory
or from a seeded fact cache).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest
import yaml

from gpuops_testlib.ansible_run import CACHE_ROOT, REPO_ROOT, AnsibleRun, mode_options, write_play
from gpuops_testlib.ansible_run import ansible_env as shared_ansible_env
from gpuops_testlib.ansible_run import run_playbook as shared_run_playbook
from gpuops_testlib.versions import pinned
# The GPU stack tests take wait_for from here.
from gpuops_testlib.waiting import wait_for  # noqa: F401  pylint: disable=unused-import

PLAYBOOK = os.path.join(REPO_ROOT, "playbooks", "gpu_stack.yml")
DATA_DIR = os.path.join(REPO_ROOT, "tests", "integration", "data")
CHART_DIR = os.path.join(DATA_DIR, "charts", "gpu-operator-stub")
HELM_BUILD = os.path.join(REPO_ROOT, "tools", "build_helm.sh")
MPI_OPERATOR_VERSION = pinned("mpi_operator")
# The kwok nodes here advertise no nvidia.com/gpu and run no pod: the GPU validation that gpu_stack.yml ends with
# would fail on every one. It is tested on the real pods of make lab's nodes (tests/e2e/test_gpu_validation.py).
WITHOUT_GPU_VALIDATION = {"gpuops_gpu_validation": False}
GPU_PRODUCT = "NVIDIA H100 80GB HBM3"
GPU_PRODUCT_LABEL = "NVIDIA-H100-80GB-HBM3"
FACT_CACHE_PREFIX = "facts_"


def ansible_env(tmp_root, fact_cache=None):
    """ansible-playbook with this checkout as gpuops.cluster and the JSON callback on stdout."""
    if not fact_cache:
        return shared_ansible_env(tmp_root)
    # Filled by seed_facts (the cache's file format belongs to ansible-core).
    return shared_ansible_env(tmp_root, ANSIBLE_CACHE_PLUGIN="ansible.builtin.jsonfile", ANSIBLE_CACHE_PLUGIN_CONNECTION=fact_cache,
                              ANSIBLE_CACHE_PLUGIN_PREFIX=FACT_CACHE_PREFIX)


class Run(AnsibleRun):
    """One playbooks/gpu_stack.yml run, with the totals and diffs the GPU stack tests read."""

    @property
    def changed(self):
        """Changed task count over all hosts."""
        return sum(host.get("changed", 0) for host in self.document.get("stats", {}).values())

    def failures(self):
        return [(name, host, result) for name, host, result in self.tasks() if result.get("failed")]

    def diffs(self):
        """(task name, diff) for every diff shown: k8s diffs are dicts of before/after, fact_diff ones have the
        prepared text. kubernetes.core.k8s given several objects puts one result per object under result.results."""
        out = []
        for name, _host, result in self.tasks():
            nested = (result.get("result") or {}).get("results") if isinstance(result.get("result"), dict) else None
            for one in [result] + [r for r in nested or [] if isinstance(r, dict)]:
                diff = one.get("diff")
                for item in diff if isinstance(diff, list) else [diff] if diff else []:
                    out.append((name, item))
        return out


def run_playbook(env, inventory, extra, check=False, diff=False, tags=None, timeout=900):
    run = shared_run_playbook(PLAYBOOK, inventory, extra, mode_options(check, diff, tags), env=env, timeout=timeout,
                              result_class=Run)
    assert run.document is not None
    return run


def seed_facts(env, tmp_root, facts_by_host):
    """Put facts into the fact cache of env as gpu_facts would after running on each host (set_fact cacheable)."""
    tasks = [{"name": "Facts of %s" % host, "delegate_to": host, "delegate_facts": True,
              "ansible.builtin.set_fact": dict(facts, cacheable=True)} for host, facts in facts_by_host.items()]
    inventory = os.path.join(tmp_root, "seed-inventory.yml")
    with open(inventory, "w", encoding="utf-8") as handle:
        yaml.safe_dump({"all": {"hosts": dict((host, {}) for host in facts_by_host)}}, handle)
    playbook = write_play(os.path.join(tmp_root, "seed-facts.yml"), {
        "name": "Seed", "hosts": "localhost", "connection": "local", "gather_facts": False, "tasks": tasks})
    done = shared_run_playbook(playbook, inventory, env=env, timeout=300)
    if done.rc != 0:
        pytest.fail("seeding the fact cache failed:\n%s" % done.stdout[-3000:], pytrace=False)


def write_inventory(path, gpu_nodes, **group_vars):
    """An inventory whose gpu_nodes group is the given fake nodes; nothing ever connects to them."""
    hosts = dict((name, {"gpu_node_labels_gpu_count": 8, "gpu_node_labels_gpu_product": GPU_PRODUCT})
                 for name in gpu_nodes)
    variables = {"ansible_connection": "local", "gpu_node_labels_gather_enabled": False}
    variables.update(group_vars)
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": hosts, "vars": variables}}}}, handle)
    return path


def fake_node(name, labels=None):
    """A Node that kwok keeps Ready (it runs the pods bound there). No nvidia.com/gpu capacity: on a real node
    that appears only once a device plugin registers, which needs a kubelet the lab does not have."""
    node_labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok",
                   "gpuops.io/test": "gpu-stack"}
    node_labels.update(labels or {})
    capacity = {"cpu": "32", "memory": "256Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": node_labels,
                         "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}},
            "spec": {},
            "status": {"capacity": capacity, "allocatable": capacity,
                       "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux", "kubeletVersion": "fake"}}}


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:5])


def helm_binary():
    """The helm CLI from tools/build_helm.sh (built into the cache when missing: minutes, once)."""
    build = subprocess.run([HELM_BUILD], cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    sys.stderr.write(build.stderr)
    if build.returncode != 0:
        pytest.fail("building helm failed (tools/build_helm.sh):\n%s" % build.stderr[-3000:], pytrace=False)
    return build.stdout.strip().splitlines()[-1]


def mpi_operator_manifest():
    """deploy/v2beta1/mpi-operator.yaml of the pinned release, from the Go module cache the lab build fills."""
    path = os.path.join(CACHE_ROOT, "go", "mod", "github.com", "kubeflow", "mpi-operator@%s" % MPI_OPERATOR_VERSION,
                        "deploy", "v2beta1", "mpi-operator.yaml")
    if not os.path.isfile(path):
        pytest.fail("%s is missing: the lab build (tools/build_kube_binaries.sh) downloads that module" % path,
                    pytrace=False)
    return path


# The releases pinned before the current pins, to upgrade from in place.
PREVIOUS_PINS = {"nvidia_device_plugin": "v0.17.1", "mpi_operator": "v0.8.0"}


def previous_mpi_operator_manifest():
    """deploy/v2beta1/mpi-operator.yaml of the release pinned before, from the Go module proxy (cached)."""
    go = os.environ.get("GO", "/usr/local/go/bin/go")
    download = subprocess.run(
        [go, "mod", "download", "-json", "github.com/kubeflow/mpi-operator@" + PREVIOUS_PINS["mpi_operator"]],
        cwd=REPO_ROOT, capture_output=True, text=True, check=False,
        env=dict(os.environ, GOMODCACHE=os.path.join(CACHE_ROOT, "go", "mod"), GOFLAGS="-mod=mod"))
    if download.returncode != 0:
        pytest.fail("downloading github.com/kubeflow/mpi-operator@%s from the Go module proxy failed:\n%s"
                    % (PREVIOUS_PINS["mpi_operator"], download.stdout[-2000:] + download.stderr[-2000:]), pytrace=False)
    return os.path.join(json.loads(download.stdout)["Dir"], "deploy", "v2beta1", "mpi-operator.yaml")


def unreachable_kubeconfig(lab, path):
    """The lab's kubeconfig pointed at a port where nothing listens: any API call fails to connect."""
    with open(lab.kubeconfig, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    for cluster in config["clusters"]:
        cluster["cluster"]["server"] = "https://127.0.0.1:9"
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump(config, handle)
    os.chmod(path, 0o600)
    return path
