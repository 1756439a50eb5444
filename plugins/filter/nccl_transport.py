# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: nccl_transport
short_description: The NCCL transport a name means, as the verdict reports it, or null where it names none
version_added: 0.3.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Maps what a user writes in O(gpuops.cluster.training_report#module:require_transport) or
    O(gpuops.cluster.training_report#module:forbid_transport) (V(ib), V(net/ib), V(Socket), V(p2p)) to the name the
    verdict counts NCCL's connections under (V(NET/IB), V(NET/Socket), V(P2P), V(SHM), or V(NET/) and a network
    plugin's name).
  - A name that means no transport (V(NVLink), V(IBext), an empty string) gives null. The input check refuses such a
    name before anything runs, rather than the verdict after the run.
options:
  _input:
    description: A transport as the user wrote it.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: The transports the run requires, as the verdict names them
  ansible.builtin.debug:
    msg: "{{ gpuops_training_require_transport | map('gpuops.cluster.nccl_transport') | list }}"
"""

RETURN = r"""
_value:
  description: The transport's name as the verdict reports it, or null.
  type: str
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.training.options import normalize_transport


class FilterModule(object):

    def filters(self):
        return {"nccl_transport": normalize_transport}
