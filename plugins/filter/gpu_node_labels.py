# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: gpu_node_labels
short_description: The labels of a GPU node, named as NVIDIA's GPU feature discovery names them
version_added: 0.1.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Turns a host's C(gpuops_gpu) fact (from M(gpuops.cluster.gpu_facts)) and its inventory values into the
    labels of its Kubernetes node, for M(gpuops.cluster.node_labels). The role C(gpuops.cluster.gpu_node_labels)
    uses it; the label names and value formats are those of NVIDIA's GPU feature discovery (GFD).
  - C(nvidia.com/gpu.present), C(nvidia.com/gpu.product) and C(nvidia.com/gpu.count) (the last two unless
    switched off); unless
    O(gfd_managed), also C(nvidia.com/gpu.memory) (MiB), C(nvidia.com/gpu.family), C(nvidia.com/gpu.compute.major)
    and C(.minor), C(nvidia.com/cuda.driver-version.major), C(.minor), C(.revision) and C(.full),
    C(nvidia.com/cuda.runtime-version.major), C(.minor) and C(.full), and C(nvidia.com/mig.capable).
  - A label the facts do not give (a driver older than 510 reports no compute capability; no facts without
    gathering) is left out, not guessed. A host without GPUs gets no labels (an empty dict).
  - Facts or values that cannot be understood fail the task, naming the value.
options:
  _input:
    description: The host's C(gpuops_gpu) fact; V({}) or null when it was not gathered.
    type: dict
    required: true
  state:
    description:
      - V(present) returns the labels to set; V(absent) every key this filter may return (with empty
        values), for M(gpuops.cluster.node_labels) to remove.
    type: str
    choices: [present, absent]
    default: present
  product:
    description: The GPU product from the inventory; wins over the gathered one. Made a valid label value.
    type: str
  count:
    description: The GPU count from the inventory; wins over the gathered one. V(0) means no GPU.
    type: int
  product_enabled:
    description: Return C(nvidia.com/gpu.product).
    type: bool
    default: true
  count_enabled:
    description: Return C(nvidia.com/gpu.count).
    type: bool
    default: true
  gfd_managed:
    description: GPU feature discovery labels the node (the GPU Operator runs it); return only present, product,
      count and the OpenShift label, as before GFD's names were added.
    type: bool
    default: false
  openshift:
    description: Add C(openshift.com/gpu-accelerator=true).
    type: bool
    default: false
  extra:
    description: More labels; they win over the computed ones for the same key.
    type: dict
    default: {}
seealso:
  - module: gpuops.cluster.gpu_facts
  - module: gpuops.cluster.node_labels
"""

EXAMPLES = r"""
- name: The labels of this host's node
  ansible.builtin.debug:
    msg: "{{ gpuops_gpu | gpuops.cluster.gpu_node_labels(gfd_managed=gpuops_gpu_stack == 'gpu_operator') }}"
"""

RETURN = r"""
_value:
  description: Label key to value; empty without GPUs (state V(present)).
  type: dict
  sample:
    nvidia.com/gpu.present: "true"
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
    nvidia.com/gpu.count: "8"
    nvidia.com/gpu.memory: "81559"
    nvidia.com/gpu.family: hopper
    nvidia.com/gpu.compute.major: "9"
    nvidia.com/gpu.compute.minor: "0"
    nvidia.com/cuda.driver-version.major: "535"
    nvidia.com/cuda.driver-version.minor: "129"
    nvidia.com/cuda.driver-version.revision: "03"
    nvidia.com/cuda.driver-version.full: "535.129.03"
    nvidia.com/cuda.runtime-version.major: "12"
    nvidia.com/cuda.runtime-version.minor: "2"
    nvidia.com/cuda.runtime-version.full: "12.2"
    nvidia.com/mig.capable: "true"
"""

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_labels import (
    GpuLabelsError,
    gpu_node_label_keys,
    gpu_node_labels,
)


def gpu_node_labels_filter(gathered, state="present", product=None, count=None, product_enabled=True,
                           count_enabled=True, gfd_managed=False, openshift=False, extra=None):
    try:
        if state == "absent":
            return gpu_node_label_keys(gfd_managed=gfd_managed, extra=extra)
        if state != "present":
            raise GpuLabelsError("state must be 'present' or 'absent', got {0!r}".format(state))
        return gpu_node_labels(gathered, product=product, count=count, product_enabled=product_enabled,
                               count_enabled=count_enabled, gfd_managed=gfd_managed, openshift=openshift, extra=extra)
    except GpuLabelsError as error:
        raise AnsibleFilterError("gpu_node_labels: {0}".format(to_native(error)))


class FilterModule(object):

    def filters(self):
        return {"gpu_node_labels": gpu_node_labels_filter}
