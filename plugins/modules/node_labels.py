#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: node_labels
short_description: Set labels and taints on many Kubernetes nodes at once
version_added: 0.1.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Brings the labels (and optionally the taints) of many nodes to a desired state in one task.
  - Every key, value and taint effect is checked against the Kubernetes syntax rules before any API
    call, and every problem is reported at once.
  - All nodes are read with a single list call. A node that does not exist fails the task, naming
    every missing node, before any node is patched.
  - Only nodes that need a change are patched, with one JSON merge patch per node, several at a time.
  - A merge patch replaces the taint list as a whole, so the new list is computed from the node's
    current taints; such a patch carries the node's resourceVersion and is planned again if the node
    changed in between.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpuops.cluster.k8s_connection
options:
  nodes:
    description:
      - The nodes to act on.
      - A list whose items are node names, or dicts with C(name) and optional C(labels) (a dict) and
        C(taints) (a list of dicts with C(key), C(value) and C(effect)).
      - Or a dict mapping node names to a dict with optional C(labels) and C(taints) (or to null).
      - Label values may be given as strings, integers or booleans; integers and booleans are written
        as their text (V(8), V(true)).
    type: raw
    required: true
  labels:
    description:
      - Labels for every node in O(nodes). A node's own C(labels) win for the same key.
      - With O(state=absent) only the keys matter; values are ignored.
    type: dict
    default: {}
  taints:
    description:
      - Taints for every node in O(nodes). A node's own C(taints) win for the same key and effect.
      - Each is a dict with C(key), C(value) (optional, empty by default) and C(effect)
        (V(NoSchedule), V(PreferNoSchedule) or V(NoExecute)).
      - With O(state=absent) a taint without C(effect) removes that key under every effect.
    type: list
    elements: dict
    default: []
  state:
    description:
      - V(present) sets the given labels and taints, leaving every other label and taint alone.
      - V(absent) removes the given label keys and taints, and only those.
    type: str
    choices: [present, absent]
    default: present
  parallelism:
    description:
      - How many node patches are in flight at once.
    type: int
    default: 16
attributes:
  check_mode:
    support: full
    description: Plans against the live nodes and reports what would change; patches nothing.
  diff_mode:
    support: full
    description: One diff per changed node, with its labels (and taints) before and after.
requirements:
  - kubernetes >= 24.2.0
notes:
  - Node objects are read and patched; the credentials need C(list), C(get) and C(patch) on C(nodes).
seealso:
  - module: kubernetes.core.k8s_taint
  - module: gpuops.cluster.gpu_facts
"""

EXAMPLES = r"""
- name: Label the GPU nodes and taint them for GPU work only
  gpuops.cluster.node_labels:
    kubeconfig: ~/.kube/config
    nodes: "{{ groups['gpu_nodes'] }}"
    labels:
      nvidia.com/gpu.present: true
    taints:
      - key: nvidia.com/gpu
        value: present
        effect: NoSchedule

# On the GPU hosts, after gpuops.cluster.gpu_facts: each host describes its own node ...
- name: Describe this host's node from its GPU facts
  ansible.builtin.set_fact:
    gpuops_node_entry:
      name: "{{ inventory_hostname_short }}"
      labels:
        nvidia.com/gpu.present: "{{ gpuops_gpu.present }}"
        nvidia.com/gpu.product: "{{ gpuops_gpu.product_label | default('') }}"
        nvidia.com/gpu.count: "{{ gpuops_gpu.count }}"

# ... and one task labels them all.
- name: Label every GPU node from its facts
  gpuops.cluster.node_labels:
    nodes: "{{ ansible_play_hosts | map('extract', hostvars, 'gpuops_node_entry') | list }}"
  run_once: true
  delegate_to: localhost

- name: The same as a dict keyed by node name
  gpuops.cluster.node_labels:
    nodes:
      dgx-01:
        labels:
          nvidia.com/gpu.product: Tesla-V100-SXM2-32GB
          nvidia.com/gpu.count: 8
      dgx-02:
        labels:
          nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB
          nvidia.com/gpu.count: 8

- name: Remove the labels and the taint this collection manages
  gpuops.cluster.node_labels:
    nodes: "{{ groups['gpu_nodes'] }}"
    state: absent
    labels:
      nvidia.com/gpu.present: ""
      openshift.com/gpu-accelerator: ""
    taints:
      - key: nvidia.com/gpu
"""

RETURN = r"""
changed_nodes:
  description: Names of the nodes that were patched (in check mode, that would be patched).
  returned: always
  type: list
  elements: str
  sample: [dgx-01, dgx-02]
unchanged_count:
  description: How many of the requested nodes already were as desired.
  returned: always
  type: int
  sample: 998
patches:
  description: The merge patch sent (in check mode, planned) for each changed node.
  returned: always
  type: dict
  sample:
    dgx-01:
      metadata:
        labels:
          nvidia.com/gpu.count: "8"
failed_nodes:
  description: For each node whose patch failed, the error. Other nodes stay patched.
  returned: failure
  type: dict
  sample:
    dgx-03: "patching node dgx-03: HTTP 403 Forbidden: nodes \"dgx-03\" is forbidden"
unknown_nodes:
  description: Requested nodes that do not exist in the cluster; nothing is patched when there are any.
  returned: failure
  type: list
  elements: str
  sample: [dgx-99]
problems:
  description: Every invalid label key, value or taint found in the input; nothing is sent when there are any.
  returned: failure
  type: list
  elements: str
  sample: ["nodes[0] (dgx-01): label key 'nvidia.com/gpu product' name part must consist of ..."]
"""

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.client import api_client
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import KubernetesError
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.options import (
    connection_argument_spec,
    request_timeout_problems,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.node_labels.apply import apply_changes
from ansible_collections.gpuops.cluster.plugins.module_utils.node_labels.errors import ApplyError
from ansible_collections.gpuops.cluster.plugins.module_utils.node_labels.kubernetes_api import KubernetesNodeApi
from ansible_collections.gpuops.cluster.plugins.module_utils.node_labels.planner import plan
from ansible_collections.gpuops.cluster.plugins.module_utils.node_labels.spec import normalize_nodes
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule


def argument_spec():
    spec = connection_argument_spec()
    spec.update(
        nodes=dict(type="raw", required=True),
        labels=dict(type="dict", default={}),
        taints=dict(type="list", elements="dict", default=[]),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        parallelism=dict(type="int", default=16),
    )
    return spec


def node_api(module):
    """The cluster connection, with a connection pool as large as the patches in flight."""
    return KubernetesNodeApi(api_client(module, pool_size=module.params["parallelism"]),
                             request_timeout=module.params["request_timeout"])


def _plan(module, make_api, desired):
    """The API and the planned changes; every failure ends the task here, before anything is patched."""
    try:
        api = make_api(module)
        return api, plan(desired, api.list_nodes(), module.params["state"])
    except KubernetesError as error:
        module.fail_json(msg=to_native(error), **error.details)
    except Exception as error:  # the client's own errors: bad kubeconfig, connection refused, TLS
        module.fail_json(msg="Could not read the cluster's nodes: {0}".format(to_native(error)))


def run_module(module, make_api=node_api):
    params = module.params
    if params["parallelism"] < 1:
        module.fail_json(msg="parallelism must be at least 1, got {0}".format(params["parallelism"]))
    problems = request_timeout_problems(params)
    if problems:
        module.fail_json(msg=problems[0], problems=problems)
    try:
        desired = normalize_nodes(params["nodes"], params["labels"], params["taints"], params["state"])
    except KubernetesError as error:
        module.fail_json(msg=to_native(error), **error.details)

    api, changes = _plan(module, make_api, desired)
    result = dict(
        changed=bool(changes),
        changed_nodes=[change.name for change in changes],
        unchanged_count=len(desired) - len(changes),
        patches=dict((change.name, change.patch) for change in changes),
    )
    if module._diff:
        result["diff"] = [change.diff() for change in changes]

    if changes and not module.check_mode:
        try:
            apply_changes(api, changes, desired, params["state"], params["parallelism"])
        except ApplyError as error:
            result["changed"] = bool(error.applied)
            result["changed_nodes"] = error.applied
            module.fail_json(msg=to_native(error), **dict(result, **error.details))
    module.exit_json(**result)


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argument_spec(), supports_check_mode=True)
    run_module(module)


if __name__ == "__main__":
    main()
