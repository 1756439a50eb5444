#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: versions_report
short_description: Which versions each GPU node and the GPU stack run, against the pinned ones
version_added: 0.1.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Reports, for each node, the NVIDIA driver, the CUDA version, the container toolkit and the kubelet, and for the
    cluster the NVIDIA device plugin, the GPU Operator, the MPI Operator and the Training Operator, each with the
    version pinned for it and a status, as one table, as rows and as a JSON file.
  - "A status is V(match), V(drift) (another version than the pin), V(absent) (the node or the component's object
    is not in the cluster), V(unknown) (the facts cannot give the version: no GPU facts, no toolkit version, an image
    by digest; never guessed) or V(unpinned) (a version is seen, but no pin is given for it)."
  - Versions are compared without a leading C(v). A pin with fewer dot-separated parts is a branch
    (V(570) matches every 570.x driver); any other difference is a drift, build suffixes such as C(-ubi9) included.
  - The driver and CUDA versions come from each node's C(gpuops_gpu) fact (M(gpuops.cluster.gpu_facts)), the
    container toolkit version from the caller, the kubelet version from the Node object
    (C(status.nodeInfo.kubeletVersion)).
  - The device plugin, MPI Operator and Training Operator versions come from the image tag of the first container of
    their DaemonSet or Deployment; where that tag is not a release (the Training Operator's images are tagged by
    commit), from the version label this collection's roles write on the object
    (C(gpuops.io/mpi-operator-version), C(gpuops.io/training-operator-version)).
  - The GPU Operator's version is the chart version of its deployed Helm release (read from Helm's release Secrets,
    no helm binary needed); without a release, the image tag of its operator Deployment.
  - All nodes are read with one list call, then one call per component asked about. Nothing in the cluster is
    changed.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpuops.cluster.k8s_connection
options:
  nodes:
    description:
      - The nodes to report on. Each item is a node name, or a dict with C(name) (the node's name in the cluster),
        C(gpu) (the node's C(gpuops_gpu) fact, or null where it was not gathered) and C(toolkit) (the NVIDIA
        container toolkit version, or null where it is not known).
      - A node that is not in the cluster is reported with its kubelet V(absent).
    type: list
    elements: raw
    default: []
  components:
    description:
      - The cluster components to report on, those deployed. A component asked about but not found is V(absent).
    type: list
    elements: str
    choices: [nvidia_device_plugin, gpu_operator, mpi_operator, training_operator]
    default: [nvidia_device_plugin, mpi_operator]
  pins:
    description:
      - The pinned version of each component, keyed by V(driver), V(cuda), V(container_toolkit), V(kubelet),
        V(nvidia_device_plugin), V(gpu_operator) (the chart version), V(mpi_operator) or V(training_operator).
      - Usually read from the collection's C(versions.yml) with the C(gpuops.cluster.pinned) lookup.
      - A component without a pin (or with null) is V(unpinned) wherever its version is seen.
    type: dict
    default: {}
  nvidia_device_plugin:
    description: Where the device plugin's DaemonSet is (the C(nvidia_device_plugin) role's names).
    type: dict
    default: {}
    suboptions:
      namespace:
        description: Its namespace.
        type: str
        default: nvidia-device-plugin
      name:
        description: The DaemonSet's name.
        type: str
        default: nvidia-device-plugin
  gpu_operator:
    description: Where the GPU Operator is (the C(gpu_operator) role's names).
    type: dict
    default: {}
    suboptions:
      namespace:
        description: The namespace of its Helm release and of its Deployment.
        type: str
        default: gpu-operator
      release_name:
        description: The Helm release.
        type: str
        default: gpu-operator
      deployment:
        description: The operator's Deployment, read when there is no deployed Helm release (OLM).
        type: str
        default: gpu-operator
  mpi_operator:
    description: Where the MPI Operator's controller Deployment is (the names in its release manifest).
    type: dict
    default: {}
    suboptions:
      namespace:
        description: Its namespace.
        type: str
        default: mpi-operator
      name:
        description: The Deployment's name.
        type: str
        default: mpi-operator
  training_operator:
    description: Where the Training Operator's controller Deployment is (the names in its standalone overlay).
    type: dict
    default: {}
    suboptions:
      namespace:
        description: Its namespace.
        type: str
        default: kubeflow
      name:
        description: The Deployment's name.
        type: str
        default: training-operator
  path:
    description:
      - Write the report as JSON to this file on the controller, rewritten only when its content changes.
        Its directory must exist.
      - The content has no timestamp, so an unchanged cluster leaves the file (and C(changed)) as they are.
    type: path
  fail_on_drift:
    description:
      - Fail when any row is V(drift), after the file is written and with the whole result.
      - V(absent) and V(unknown) rows never fail the task.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reads the cluster and reports; writes no file, and C(changed) says whether it would.
  diff_mode:
    support: full
    description: The report file's text before and after.
requirements:
  - kubernetes >= 24.2.0
notes:
  - Run it on the controller (C(delegate_to=localhost), C(run_once=true)), like this collection's other Kubernetes
    modules.
  - The credentials need C(list) on C(nodes), C(get) on the DaemonSet and Deployments asked about, and, for the GPU
    Operator, C(list) on C(secrets) in its namespace (Helm's release records).
  - Helm's C(configmap) and C(sql) storage drivers are not read; such a release falls back to the Deployment's image.
seealso:
  - module: gpuops.cluster.gpu_facts
  - plugin: gpuops.cluster.pinned
    plugin_type: lookup
"""

EXAMPLES = r"""
# On the GPU hosts, after gpuops.cluster.gpu_facts: each host describes its node ...
- name: Describe this host's node
  ansible.builtin.set_fact:
    gpuops_versions_node:
      name: "{{ inventory_hostname }}"
      gpu: "{{ gpuops_gpu | default(None) }}"
      toolkit: "{{ nvidia_container_toolkit_version | default(None) }}"

# ... and one task reports them all.
- name: Report the versions of the GPU nodes and the stack, against the collection's pins
  gpuops.cluster.versions_report:
    nodes: "{{ ansible_play_hosts | map('extract', hostvars, 'gpuops_versions_node') | list }}"
    components: [nvidia_device_plugin, mpi_operator]
    pins:
      nvidia_device_plugin: "{{ lookup('gpuops.cluster.pinned', 'nvidia_device_plugin') }}"
      mpi_operator: "{{ lookup('gpuops.cluster.pinned', 'mpi_operator') }}"
      driver: "570"
    path: /var/tmp/gpuops/versions-report.json
  register: versions
  run_once: true
  delegate_to: localhost

- name: Print the table
  ansible.builtin.debug:
    msg: "{{ versions.table }}"
  run_once: true

- name: Only the cluster components, failing on any drift
  gpuops.cluster.versions_report:
    components: [gpu_operator, mpi_operator, training_operator]
    gpu_operator:
      namespace: nvidia-gpu-operator
    pins:
      gpu_operator: "{{ lookup('gpuops.cluster.pinned', 'gpu_operator_chart') }}"
      mpi_operator: "{{ lookup('gpuops.cluster.pinned', 'mpi_operator') }}"
      training_operator: "{{ lookup('gpuops.cluster.pinned', 'training_operator') }}"
    fail_on_drift: true
  delegate_to: localhost
"""

RETURN = r"""
rows:
  description:
    - One row per node and node component (V(driver), V(cuda), V(container_toolkit), V(kubelet)), then one per
      cluster component, in that order.
    - C(where) is the node's name, or C(namespace/name) of the component's object (Helm release for the GPU
      Operator); C(source) says where the observed version was read (V(gpu facts), V(given) (the toolkit), V(node),
      V(image), V(label), V(helm chart)); C(note) says why a version is missing.
  returned: always
  type: list
  elements: dict
  sample:
    - {component: driver, where: dgx-01, observed: 570.124.06, pinned: "570", status: match, source: gpu facts,
       note: null}
    - {component: mpi_operator, where: mpi-operator/mpi-operator, observed: 0.8.1, pinned: v0.8.2, status: drift,
       source: image, note: null}
table:
  description: The rows as a fixed-width table, a header first and a line of counts last.
  returned: always
  type: list
  elements: str
  sample:
    - "COMPONENT     WHERE                      OBSERVED    PINNED  STATUS"
    - "driver        dgx-01                     570.124.06  570     match"
    - "mpi_operator  mpi-operator/mpi-operator  0.8.1       v0.8.2  drift"
    - "1 node(s), 1 cluster component(s): 1 match, 1 drift, 0 absent, 0 unknown, 0 unpinned"
drift:
  description: The rows whose status is V(drift).
  returned: always
  type: list
  elements: dict
  sample:
    - {component: mpi_operator, where: mpi-operator/mpi-operator, observed: 0.8.1, pinned: v0.8.2, status: drift,
       source: image, note: null}
counts:
  description: How many rows have each status.
  returned: always
  type: dict
  sample: {match: 1, drift: 1, absent: 0, unknown: 0, unpinned: 0}
path:
  description: The report file, when O(path) is set.
  returned: when O(path) is set
  type: str
  sample: /var/tmp/gpuops/versions-report.json
"""

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_native, to_text
from ansible_collections.gpuops.cluster.plugins.module_utils.common.files import file_state, write_file
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.client import api_client
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import KubernetesError
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.options import (
    connection_argument_spec,
    request_timeout_problems,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.versions_report.kubernetes_api import VersionsApi, observe
from ansible_collections.gpuops.cluster.plugins.module_utils.versions_report.report import (
    CLUSTER_COMPONENTS,
    build_report,
    normalize_nodes,
    normalize_pins,
    report_json,
)
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule


def _location(**defaults):
    return dict(type="dict", default={}, apply_defaults=True,
                options=dict((key, dict(type="str", default=value)) for key, value in defaults.items()))


def argument_spec():
    spec = connection_argument_spec()
    spec.update(
        nodes=dict(type="list", elements="raw", default=[]),
        components=dict(type="list", elements="str", choices=list(CLUSTER_COMPONENTS),
                        default=["nvidia_device_plugin", "mpi_operator"]),
        pins=dict(type="dict", default={}),
        nvidia_device_plugin=_location(namespace="nvidia-device-plugin", name="nvidia-device-plugin"),
        gpu_operator=_location(namespace="gpu-operator", release_name="gpu-operator", deployment="gpu-operator"),
        mpi_operator=_location(namespace="mpi-operator", name="mpi-operator"),
        training_operator=_location(namespace="kubeflow", name="training-operator"),
        path=dict(type="path"),
        fail_on_drift=dict(type="bool", default=False),
    )
    return spec


def versions_api(module):
    return VersionsApi(api_client(module), request_timeout=module.params["request_timeout"])


def _read_cluster(module, make_api):
    params = module.params
    try:
        api = make_api(module)
        node_objects = api.list_nodes() if params["nodes"] else []
        components = dict((component, observe(api, component, params)) for component in params["components"])
    except KubernetesError as error:
        module.fail_json(msg=to_native(error), **error.details)
    except Exception as error:  # the client's own errors: bad kubeconfig, connection refused, TLS
        module.fail_json(msg="Could not read the cluster: {0}".format(to_native(error)))
    return node_objects, components


def _write_report(module, report, result):
    """Write the JSON file when its content changes (not in check mode); changed and the diff into result."""
    path = module.params["path"]
    content = to_bytes(report_json(report))
    changed, previous = file_state(path, content)
    result.update(changed=changed, path=path)
    # A diff only for a change: an unchanged file shows none, as Ansible's own file modules do.
    if module._diff and changed:
        result["diff"] = dict(before_header=path, after_header=path,
                              before=to_text(previous) if previous is not None else "", after=to_text(content))
    if changed and not module.check_mode:
        try:
            write_file(path, content)
        except (IOError, OSError) as error:
            module.fail_json(msg="cannot write the versions report {0}: {1}".format(path, to_native(error)),
                             **dict(result, changed=False))


def run_module(module, make_api=versions_api):
    params = module.params
    problems = request_timeout_problems(params)
    if problems:
        module.fail_json(msg=problems[0], problems=problems)
    try:
        nodes = normalize_nodes(params["nodes"])
        pins = normalize_pins(params["pins"])
    except ValueError as error:
        module.fail_json(msg=to_native(error))

    node_objects, components = _read_cluster(module, make_api)
    try:
        report = build_report(nodes, node_objects, components, pins)
    except ValueError as error:
        module.fail_json(msg=to_native(error))
    result = dict(changed=False, rows=report["rows"], table=report["table"], drift=report["drift"],
                  counts=report["counts"])
    if params["path"]:
        _write_report(module, report, result)
    if report["drift"] and params["fail_on_drift"]:
        drifts = ["{component} on {where} is {observed}, pinned {pinned}".format(**row) for row in report["drift"]]
        module.fail_json(msg="{0} version(s) differ from their pins: {1}".format(len(drifts), "; ".join(drifts)),
                         **result)
    module.exit_json(**result)


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argument_spec(), supports_check_mode=True)
    run_module(module)


if __name__ == "__main__":
    main()
