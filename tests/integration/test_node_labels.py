# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.cluster.node_labels against the lab's real kube-apiserver, run the way users run it: ansible-playbook.

Nodes are plain Node objects created by each test (cluster-scoped, so named uniquely per test and deleted
afterwards). The lab has no kubelet: what is checked is what the apiserver stores.
"""

from __future__ import annotations

import os
import uuid

import pytest

from gpuops_testlib.ansible_run import REPO_ROOT, mode_options
from gpuops_testlib.ansible_run import ansible_env as shared_ansible_env
from gpuops_testlib.ansible_run import run_playbook as shared_run_playbook

PLAYBOOK = os.path.join(REPO_ROOT, "tests", "integration", "playbooks", "node_labels.yml")

GPU_LABELS = {"nvidia.com/gpu.present": True, "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
              "nvidia.com/gpu.count": 8}
GPU_LABELS_AS_STORED = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                        "nvidia.com/gpu.count": "8"}


@pytest.fixture(scope="module")
def ansible_env(tmp_path_factory):
    """ansible-playbook with this checkout as gpuops.cluster and the JSON callback on stdout."""
    return shared_ansible_env(str(tmp_path_factory.mktemp("collections")))


class Run:
    """The playbook's one task result on localhost, and the play's stats."""

    def __init__(self, done):
        self.result = done.document["plays"][0]["tasks"][0]["hosts"]["localhost"]
        self.stats = done.host_stats()

    @property
    def failed(self):
        return bool(self.result.get("failed"))


def run_playbook(env, extra, check=False, diff=False):
    return Run(shared_run_playbook(PLAYBOOK, extra_vars=extra, options=mode_options(check, diff), env=env, timeout=300))


@pytest.fixture
def nodes(lab):
    """Five fresh Nodes named for this test; deleted afterwards."""
    prefix = "nl-%s" % uuid.uuid4().hex[:6]
    names = ["%s-%d" % (prefix, index) for index in range(5)]
    for name in names:
        lab.core.create_node({"apiVersion": "v1", "kind": "Node",
                              "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                                    "gpuops.io/test": "node-labels"}}})
    yield names
    for name in names:
        lab.core.delete_node(name)


def labels_of(lab, name):
    return lab.core.read_node(name).metadata.labels or {}


def taints_of(lab, name):
    return [(t.key, t.value, t.effect) for t in (lab.core.read_node(name).spec.taints or [])]


def test_check_mode_then_apply_then_no_change(lab, ansible_env, nodes):
    extra = {"node_labels_kubeconfig": lab.kubeconfig, "node_labels_nodes": nodes, "node_labels_labels": GPU_LABELS}
    before = dict((name, labels_of(lab, name)) for name in nodes)

    check = run_playbook(ansible_env, extra, check=True, diff=True)
    assert not check.failed, check.result
    assert check.result["changed"] is True
    assert check.result["changed_nodes"] == sorted(nodes)
    assert dict((name, labels_of(lab, name)) for name in nodes) == before, "check mode changed a node"
    diffs = dict((d["before_header"], d) for d in check.result["diff"])
    assert sorted(diffs) == ["node/%s" % name for name in sorted(nodes)]
    first = diffs["node/%s" % nodes[0]]
    assert first["before"]["labels"] == before[nodes[0]]
    assert first["after"]["labels"] == dict(before[nodes[0]], **GPU_LABELS_AS_STORED)

    apply = run_playbook(ansible_env, extra)
    assert not apply.failed, apply.result
    assert apply.stats["changed"] == 1
    for name in nodes:
        assert labels_of(lab, name) == dict(before[name], **GPU_LABELS_AS_STORED)

    again = run_playbook(ansible_env, extra, diff=True)
    assert not again.failed, again.result
    assert again.result["changed"] is False
    assert again.stats["changed"] == 0
    assert again.result["unchanged_count"] == len(nodes)
    assert again.result.get("diff", []) == []

    # One node drifts; only that node is patched, and the diff shows exactly the drift.
    lab.core.patch_node(nodes[2], {"metadata": {"labels": {"nvidia.com/gpu.count": "4"}}})
    drift = run_playbook(ansible_env, extra, diff=True)
    assert drift.result["changed_nodes"] == [nodes[2]]
    (only,) = drift.result["diff"]
    assert only["before"]["labels"]["nvidia.com/gpu.count"] == "4"
    assert only["after"]["labels"]["nvidia.com/gpu.count"] == "8"
    assert labels_of(lab, nodes[2])["nvidia.com/gpu.count"] == "8"


def test_taints_merge_and_absent_removes_only_what_it_manages(lab, ansible_env, nodes):
    foreign = {"key": "example.com/maintenance", "value": "disk", "effect": "NoExecute"}
    lab.core.patch_node(nodes[0], {"spec": {"taints": [foreign]}})
    gpu_taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    extra = {"node_labels_kubeconfig": lab.kubeconfig, "node_labels_nodes": nodes[:2],
             "node_labels_labels": {"nvidia.com/gpu.present": "true"}, "node_labels_taints": [gpu_taint]}

    apply = run_playbook(ansible_env, extra)
    assert not apply.failed, apply.result
    assert ("example.com/maintenance", "disk", "NoExecute") in taints_of(lab, nodes[0])
    for name in nodes[:2]:
        assert ("nvidia.com/gpu", "present", "NoSchedule") in taints_of(lab, name)
    assert run_playbook(ansible_env, extra).result["changed"] is False

    remove = dict(extra, node_labels_state="absent", node_labels_taints=[{"key": "nvidia.com/gpu"}])
    removed = run_playbook(ansible_env, remove)
    assert not removed.failed, removed.result
    assert removed.result["changed_nodes"] == sorted(nodes[:2])
    assert taints_of(lab, nodes[0]) == [("example.com/maintenance", "disk", "NoExecute")]
    assert "nvidia.com/gpu" not in [key for key, _value, _effect in taints_of(lab, nodes[1])]
    for name in nodes[:2]:
        labels = labels_of(lab, name)
        assert "nvidia.com/gpu.present" not in labels
        assert labels["gpuops.io/test"] == "node-labels"
    assert run_playbook(ansible_env, remove).result["changed"] is False


def test_bad_input_fails_before_any_api_call(lab, ansible_env, nodes):
    bad = {"node_labels_nodes": [{"name": nodes[0], "labels": {"nvidia.com/gpu product": "A100 SXM4"}},
                                 {"name": nodes[1], "labels": {"ok": "fine"}}],
           "node_labels_taints": [{"key": "nvidia.com/gpu", "effect": "Sometimes"}]}

    # Against an address where nothing listens: any API call would fail with a connection error instead.
    unreachable = run_playbook(ansible_env, dict(bad, node_labels_host="https://127.0.0.1:9",
                                                 node_labels_kubeconfig=lab.kubeconfig))
    assert unreachable.failed
    assert "invalid node label/taint specification (3 problem(s))" in unreachable.result["msg"]
    assert len(unreachable.result["problems"]) == 3

    real = run_playbook(ansible_env, dict(bad, node_labels_kubeconfig=lab.kubeconfig))
    assert real.failed
    assert real.result["problems"] == unreachable.result["problems"]
    assert "ok" not in labels_of(lab, nodes[1]), "a valid entry was applied although the input was rejected"


def test_unknown_nodes_are_listed_and_nothing_is_patched(lab, ansible_env, nodes):
    missing = ["%s-missing-b" % nodes[0], "%s-missing-a" % nodes[0]]
    run = run_playbook(ansible_env, {"node_labels_kubeconfig": lab.kubeconfig,
                                     "node_labels_nodes": nodes + missing, "node_labels_labels": {"x": "y"}})
    assert run.failed
    assert run.result["unknown_nodes"] == sorted(missing)
    assert run.result["msg"] == "2 node(s) not found in the cluster, nothing was changed: %s" % ", ".join(sorted(missing))
    for name in nodes:
        assert "x" not in labels_of(lab, name)
