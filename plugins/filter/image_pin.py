# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: image_pin
short_description: What pins an image name to one image, its digest or its tag, or null where nothing does
version_added: 0.3.0
author:
  - gpuops maintainers (@gpuops)
description:
  - V(digest) for a name ending in C(@<algorithm>:<hex>), V(tag) for a tag in its last path part (a registry's port
    is not a tag), V(latest) for the tag C(latest), which moves, and null for a name with neither, which each node
    resolves to whatever C(:latest) was when it first pulled it.
options:
  _input:
    description: An image name, such as V(registry.example.com:5000/ml/gpuops-benchmark:horovod-0.28.1).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Refuse a base image that is not pinned
  ansible.builtin.assert:
    that: (benchmark_image_base | gpuops.cluster.image_pin) in ['tag', 'digest']
"""

RETURN = r"""
_value:
  description: V(digest), V(tag), V(latest), or null.
  type: str
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.common.images import image_pin


class FilterModule(object):

    def filters(self):
        return {"image_pin": image_pin}
