# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: gpu_operator_others
short_description: The GPU Operators of a cluster that this collection did not install, found by their ClusterPolicies
version_added: 0.2.0
author:
  - gpuops maintainers (@gpuops)
description:
  - A GPU Operator deploys its operands, its own device plugin among them, for a ClusterPolicy. Given the cluster's
    ClusterPolicies, returns those the collection configured so did not make, and who did.
  - A ClusterPolicy with Helm's annotations C(meta.helm.sh/release-name) and C(meta.helm.sh/release-namespace) is
    the collection's when they name O(release_name) in O(namespace). One without is the collection's when it has the
    label C(app.kubernetes.io/managed-by=gpuops.cluster) and the name O(cluster_policy_name) (the OLM path).
  - With a ClusterPolicy that no Helm release holds, the OLM Subscriptions to O(olm_package) other than the
    collection's (O(olm_package) in O(olm_namespace)) are returned too, as its operator.
  - The role C(gpuops.cluster.gpu_operator) uses it.
options:
  _input:
    description: The ClusterPolicies, as C(kubernetes.core.k8s_info) returns them.
    type: list
    elements: dict
    required: true
  subscriptions:
    description: The OLM Subscriptions of the cluster (empty where OLM is not served).
    type: list
    elements: dict
    default: []
  release_name:
    description: The collection's Helm release name.
    type: str
  namespace:
    description: The collection's Helm release namespace.
    type: str
  olm_namespace:
    description: The namespace of the collection's Subscription.
    type: str
  olm_package:
    description: The operator's OLM package, also the name of the collection's Subscription.
    type: str
  cluster_policy_name:
    description: The name of the collection's ClusterPolicy on the OLM path.
    type: str
"""

EXAMPLES = r"""
- name: The GPU Operators this collection did not install
  ansible.builtin.debug:
    msg: >-
      {{ policies.resources | gpuops.cluster.gpu_operator_others(release_name='gpu-operator', namespace='gpu-operator',
         olm_namespace='nvidia-gpu-operator', olm_package='gpu-operator-certified', cluster_policy_name='gpu-cluster-policy') }}
"""

RETURN = r"""
_value:
  description: What was found.
  type: dict
  contains:
    cluster_policies:
      description: Each ClusterPolicy the collection did not make, with C(name), C(helm_release) and C(helm_namespace).
      type: list
      elements: dict
    subscriptions:
      description: The other Subscriptions to the package, each with C(name), C(namespace) and C(csv) (its installed CSV).
      type: list
      elements: dict
    found:
      description: One line naming them and who installed them; empty when there is none.
      type: str
  sample:
    cluster_policies:
      - {name: cluster-policy, helm_release: nvidia-gpu-operator, helm_namespace: gpu-operator-resources}
    subscriptions: []
    found: ClusterPolicy cluster-policy (Helm release nvidia-gpu-operator in namespace gpu-operator-resources)
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_operator_owners import others


def gpu_operator_others(policies, subscriptions=None, release_name=None, namespace=None, olm_namespace=None,
                        olm_package=None, cluster_policy_name=None):
    return others(policies, subscriptions=subscriptions, release_name=release_name, namespace=namespace,
                  olm_namespace=olm_namespace, olm_package=olm_package, cluster_policy_name=cluster_policy_name)


class FilterModule(object):

    def filters(self):
        return {"gpu_operator_others": gpu_operator_others}
