# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: nccl_between_nodes
short_description: The transports of a list that carry NCCL's traffic between nodes, as the verdict names them
version_added: 0.3.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Keeps the transports of a list that connect ranks on different nodes (V(NET/IB), V(NET/Socket), a network
    plugin's V(NET/) name), each named as the verdict counts it (the P(gpuops.cluster.nccl_transport#filter) filter's
    names). A run on one node can never use one, so requiring one of it fails by construction.
options:
  _input:
    description: Transports as the user wrote them, such as V(gpuops_training_require_transport).
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: The required transports a run on one node could never show
  ansible.builtin.debug:
    msg: "{{ gpuops_training_require_transport | gpuops.cluster.nccl_between_nodes }}"
"""

RETURN = r"""
_value:
  description: The transports between nodes, in the list's order, as the verdict names them.
  type: list
  elements: str
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.training.options import between_nodes, normalize_transport


def transports_between_nodes(transports):
    return [normalize_transport(name) for name in transports or [] if between_nodes(name)]


class FilterModule(object):

    def filters(self):
        return {"nccl_between_nodes": transports_between_nodes}
