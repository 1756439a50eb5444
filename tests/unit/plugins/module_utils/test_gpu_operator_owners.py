# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU Operators at work that this collection did not install, found by their ClusterPolicies whatever the
release name: Helm's annotations, the collection's own label, and the OLM Subscriptions to the package."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_operator_owners import others

OURS = {"release_name": "gpu-operator", "namespace": "gpu-operator", "olm_namespace": "nvidia-gpu-operator",
        "olm_package": "gpu-operator-certified", "cluster_policy_name": "gpu-cluster-policy"}


def helm_policy(release, namespace, name="cluster-policy"):
    return {"metadata": {"name": name, "annotations": {"meta.helm.sh/release-name": release,
                                                       "meta.helm.sh/release-namespace": namespace}}}


def plain_policy(name="gpu-cluster-policy", managed_by=None):
    labels = {"app.kubernetes.io/managed-by": managed_by} if managed_by else {}
    return {"metadata": {"name": name, "labels": labels}}


def subscription(namespace, name="gpu-operator-certified", package="gpu-operator-certified", csv="gpu-operator-certified.v25.3.0"):
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"name": package},
            "status": {"installedCSV": csv}}


@pytest.mark.parametrize("policies, subscriptions", [
    ([], []),
    # The collection's Helm release, whatever the method the role now chooses.
    ([helm_policy("gpu-operator", "gpu-operator")], []),
    # The collection's OLM install: its label and its ClusterPolicy's name, its own Subscription.
    ([plain_policy(managed_by="gpuops.cluster")], [subscription("nvidia-gpu-operator")]),
])
def test_the_collections_own_operator_is_not_another(policies, subscriptions):
    assert others(policies, subscriptions, **OURS) == {"cluster_policies": [], "subscriptions": [], "found": ""}


@pytest.mark.parametrize("policy", [
    helm_policy("nvidia-gpu-operator", "gpu-operator"),
    helm_policy("gpu-operator", "gpu-operator-resources"),
])
def test_a_helm_release_of_another_name_or_namespace_is_another(policy):
    found = others([policy], [subscription("elsewhere")], **OURS)
    annotations = policy["metadata"]["annotations"]
    release, namespace = annotations["meta.helm.sh/release-name"], annotations["meta.helm.sh/release-namespace"]
    assert found["cluster_policies"] == [{"name": "cluster-policy", "helm_release": release, "helm_namespace": namespace}]
    # A Helm release is the operator: no Subscription is looked at.
    assert found["subscriptions"] == []
    assert found["found"] == "ClusterPolicy cluster-policy (Helm release %s in namespace %s)" % (release, namespace)


def test_an_olm_subscription_in_another_namespace_is_named_with_its_cluster_policy():
    subs = [subscription("nvidia-gpu-operator"), subscription("site-gpu", name="gpu"),
            subscription("nfd", name="nfd", package="nfd")]
    found = others([plain_policy()], subs, **OURS)
    assert found["cluster_policies"] == [{"name": "gpu-cluster-policy", "helm_release": None, "helm_namespace": None}]
    assert found["subscriptions"] == [{"name": "gpu", "namespace": "site-gpu", "csv": "gpu-operator-certified.v25.3.0"}]
    assert found["found"] == ("ClusterPolicy gpu-cluster-policy (no Helm release; OLM Subscription gpu in namespace "
                              "site-gpu)")


def test_a_cluster_policy_of_nobody_known_says_so():
    found = others([plain_policy(name="cluster-policy", managed_by="someone")], [], **OURS)
    assert found["found"] == ("ClusterPolicy cluster-policy (no Helm release, no OLM Subscription: applied by hand "
                              "or by another tool)")


def test_every_other_cluster_policy_is_named_beside_the_collections():
    found = others([helm_policy("gpu-operator", "gpu-operator"), helm_policy("old", "legacy", name="legacy-policy")],
                   [], **OURS)
    assert [policy["name"] for policy in found["cluster_policies"]] == ["legacy-policy"]
