# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Pod Security Admission labels of the pods' namespace: the level the pods need, the labels of a new
namespace, and an existing namespace's labels never changed behind the user's back."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.pod_security import needed_level, plan

ENFORCE, AUDIT, WARN = ("pod-security.kubernetes.io/" + mode for mode in ("enforce", "audit", "warn"))


def labelled(enforce=None, audit=None, warn=None):
    labels = {ENFORCE: enforce, AUDIT: audit, WARN: warn}
    return {"metadata": {"name": "bench", "labels": dict((key, value) for key, value in labels.items() if value)}}


@pytest.mark.parametrize("settings, level, reasons", [
    ({}, "baseline", []),
    ({"host_network": True}, "privileged", ["host networking"]),
    ({"privileged": True}, "privileged", ["privileged containers"]),
    ({"host_paths": ["/dev/hugepages"]}, "privileged", ["hostPath volumes (/dev/hugepages)"]),
    ({"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}, "baseline", []),
    ({"volumes": [{"name": "sys", "hostPath": {"path": "/sys"}}], "host_paths": ["/dev/hugepages"]}, "privileged",
     ["hostPath volumes (/dev/hugepages, /sys)"]),
    ({"host_network": True, "privileged": True}, "privileged", ["host networking", "privileged containers"]),
    # RDMA's IPC_LOCK is beyond what baseline lets a container add; NET_BIND_SERVICE is within it.
    ({"capabilities": ["NET_BIND_SERVICE"]}, "baseline", []),
    ({"capabilities": ["NET_BIND_SERVICE", "SYS_RESOURCE", "IPC_LOCK"]}, "privileged",
     ["added capabilities (IPC_LOCK, SYS_RESOURCE)"]),
])
def test_the_level_follows_from_what_the_pods_ask_of_the_node(settings, level, reasons):
    assert needed_level(**settings) == (level, reasons)


@pytest.mark.parametrize("host_network, level", [(True, "privileged"), (False, "baseline")])
def test_a_new_namespace_gets_the_three_labels_at_the_level_its_pods_need(host_network, level):
    result = plan(None, host_network=host_network)
    assert result["exists"] is False
    assert result["labels"] == {ENFORCE: level, AUDIT: level, WARN: level}
    assert result["rejected_by"] is None


def test_an_unlabelled_namespace_gets_only_the_missing_labels_where_the_pods_need_privileged():
    result = plan(labelled(audit="restricted"), host_network=True)
    assert result["labels"] == {ENFORCE: "privileged", WARN: "privileged"}
    assert result["rejected_by"] is None


def test_an_unlabelled_namespace_is_left_as_it_is_where_baseline_is_enough():
    assert plan(labelled(), host_paths=[])["labels"] == {}
    assert plan({"metadata": {"name": "default"}})["labels"] == {}


@pytest.mark.parametrize("enforce, host_network", [
    ("privileged", True), ("privileged", False), ("baseline", False),
])
def test_an_enforce_label_that_admits_the_pods_is_left_as_it_is(enforce, host_network):
    result = plan(labelled(enforce=enforce, audit="restricted"), host_network=host_network)
    assert result["labels"] == {}
    assert result["rejected_by"] is None


@pytest.mark.parametrize("enforce, host_network", [
    ("restricted", True), ("baseline", True), ("restricted", False), ("Privileged", True),
])
def test_an_enforce_label_that_rejects_the_pods_is_named_and_kept(enforce, host_network):
    result = plan(labelled(enforce=enforce), host_network=host_network)
    assert result["labels"] == {}
    assert result["rejected_by"] == enforce


def test_relabel_sets_the_labels_that_differ_to_the_level_the_pods_need():
    result = plan(labelled(enforce="restricted", audit="privileged", warn="restricted"), host_network=True, relabel=True)
    assert result["labels"] == {ENFORCE: "privileged", WARN: "privileged"}
    assert result["rejected_by"] is None
    assert result["reasons"] == ["host networking"]


def test_relabel_never_touches_a_namespace_that_admits_the_pods():
    assert plan(labelled(enforce="privileged", warn="restricted"), relabel=True)["labels"] == {}
