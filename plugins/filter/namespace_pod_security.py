# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: namespace_pod_security
short_description: The Pod Security Admission labels a namespace needs for the pods that will run in it
version_added: 0.2.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Works out the level the pods need - V(privileged) with host networking, privileged containers, hostPath
    volumes or capabilities beyond the few V(baseline) allows (such as V(IPC_LOCK)), V(baseline) otherwise (they
    run as root without a seccomp profile, which V(restricted) refuses) - and which
    C(pod-security.kubernetes.io/enforce), C(audit) and C(warn) labels to apply to their namespace.
  - A namespace that does not exist yet gets the three labels at that level.
  - An existing namespace is never relabelled behind the user's back. Without an enforce label, the three labels
    are added (only the missing ones) where the pods need V(privileged), and nothing where V(baseline) is enough.
    An enforce label at the needed level or a looser one is left as it is. A stricter one (or one that is not a
    level) is changed only with O(relabel); otherwise C(rejected_by) names it.
  - The role C(gpuops.cluster.job_namespace) uses it.
options:
  _input:
    description: The Namespace as C(kubernetes.core.k8s_info) returns it, or null where it does not exist.
    type: dict
    required: true
  host_network:
    description: The pods use the node's network.
    type: bool
    default: false
  privileged:
    description: The pods' containers run privileged.
    type: bool
    default: false
  host_paths:
    description: Node paths the pods mount (hostPath volumes).
    type: list
    elements: str
    default: []
  volumes:
    description: Other volumes of the pods as Kubernetes writes them; those with a C(hostPath) count.
    type: list
    elements: dict
    default: []
  capabilities:
    description: Linux capabilities the pods' containers add, such as V(IPC_LOCK).
    type: list
    elements: str
    default: []
  relabel:
    description: Change an enforce label that would reject the pods to the level they need.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: The labels of the benchmark's namespace
  ansible.builtin.debug:
    msg: "{{ (found.resources | first | default(none)) | gpuops.cluster.namespace_pod_security(host_network=true) }}"
"""

RETURN = r"""
_value:
  description: The plan for the namespace.
  type: dict
  contains:
    exists:
      description: Whether the namespace exists.
      type: bool
    level:
      description: The level the pods need, V(privileged) or V(baseline).
      type: str
    reasons:
      description: What makes them need V(privileged) (empty for V(baseline)).
      type: list
      elements: str
    labels:
      description: The labels to apply; empty when none changes.
      type: dict
    rejected_by:
      description: The value of the enforce label that would reject the pods and may not be changed, else null.
      type: str
  sample:
    exists: false
    level: privileged
    reasons: [host networking]
    labels:
      pod-security.kubernetes.io/enforce: privileged
      pod-security.kubernetes.io/audit: privileged
      pod-security.kubernetes.io/warn: privileged
    rejected_by: null
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.pod_security import plan


def namespace_pod_security(namespace, host_network=False, privileged=False, host_paths=None, volumes=None,
                           capabilities=None, relabel=False):
    return plan(namespace or None, host_network=bool(host_network), privileged=bool(privileged), host_paths=host_paths,
                volumes=volumes, capabilities=capabilities, relabel=bool(relabel))


class FilterModule(object):

    def filters(self):
        return {"namespace_pod_security": namespace_pod_security}
