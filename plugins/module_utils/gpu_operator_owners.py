# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Which of a cluster's GPU Operators this collection did not install, found by their ClusterPolicies.

Plain Python, no Ansible: the gpu_operator role reaches it through the gpuops.cluster.gpu_operator_others filter.
A GPU Operator deploys its operands (its own device plugin among them) only for a ClusterPolicy, so the
ClusterPolicies say which operators are at work, whatever their release names. Who installed one:

- Helm stamps every object of a release with the annotations meta.helm.sh/release-name and release-namespace:
  the collection's own release is the one it is configured with (gpu_operator_release_name, gpu_operator_namespace).
- Under OLM the ClusterPolicy is made by whoever subscribed: the collection's own carries its managed-by label and
  the configured name. The operator itself is a Subscription to the package, the collection's own in the
  configured namespace under the package's name.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

HELM_RELEASE = "meta.helm.sh/release-name"
HELM_NAMESPACE = "meta.helm.sh/release-namespace"
MANAGED_BY = "app.kubernetes.io/managed-by"
COLLECTION = "gpuops.cluster"


def _metadata(obj):
    return (obj or {}).get("metadata") or {}


def _policy(policy, ours):
    metadata = _metadata(policy)
    annotations = metadata.get("annotations") or {}
    release, namespace = annotations.get(HELM_RELEASE), annotations.get(HELM_NAMESPACE)
    found = {"name": metadata.get("name"), "helm_release": release, "helm_namespace": namespace if release else None}
    if release:
        mine = (release, namespace) == (ours["release_name"], ours["namespace"])
    else:
        mine = ((metadata.get("labels") or {}).get(MANAGED_BY) == COLLECTION
                and metadata.get("name") == ours["cluster_policy_name"])
    return None if mine else found


def _subscription(subscription):
    metadata = _metadata(subscription)
    return {"name": metadata.get("name"), "namespace": metadata.get("namespace"),
            "csv": ((subscription.get("status") or {}).get("installedCSV"))}


def _describe(policies, subscriptions):
    parts = []
    for policy in policies:
        if policy["helm_release"]:
            owner = "Helm release {0} in namespace {1}".format(policy["helm_release"], policy["helm_namespace"])
        elif subscriptions:
            owner = "no Helm release; " + ", ".join("OLM Subscription {0} in namespace {1}".format(
                sub["name"], sub["namespace"]) for sub in subscriptions)
        else:
            owner = "no Helm release, no OLM Subscription: applied by hand or by another tool"
        parts.append("ClusterPolicy {0} ({1})".format(policy["name"], owner))
    return "; ".join(parts)


def others(policies, subscriptions=None, release_name=None, namespace=None, olm_namespace=None, olm_package=None,
           cluster_policy_name=None):
    """The GPU Operators at work that the collection, configured so, did not install.

    policies: the ClusterPolicies as the API returns them. subscriptions: the OLM Subscriptions of the cluster (any
    package; none where OLM is not served). Returns a dict: cluster_policies (name, helm_release, helm_namespace of
    each ClusterPolicy not the collection's), subscriptions (name, namespace, csv of the Subscriptions to
    olm_package other than the collection's; listed only with a ClusterPolicy that no Helm release holds, the
    operator it belongs to), and found (one line naming them all, empty when there is none).
    """
    ours = {"release_name": release_name, "namespace": namespace, "cluster_policy_name": cluster_policy_name}
    foreign = [found for found in (_policy(policy, ours) for policy in policies or []) if found]
    subs = []
    if any(not policy["helm_release"] for policy in foreign):
        subs = [_subscription(sub) for sub in subscriptions or []
                if ((sub.get("spec") or {}).get("name") == olm_package
                    and (_metadata(sub).get("namespace"), _metadata(sub).get("name")) != (olm_namespace, olm_package))]
    return {"cluster_policies": foreign, "subscriptions": subs, "found": _describe(foreign, subs)}
