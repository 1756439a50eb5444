# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: pinned
short_description: A version this collection pins, from its versions.yml
version_added: 0.1.0
description:
  - Returns the version the collection pins for each named component, as written in the
    C(versions.yml) file at the collection's root. The roles' defaults take their versions from it,
    so that a version is set in one place only.
author:
  - gpuops maintainers (@gpuops)
options:
  _terms:
    description: Names of components, such as V(mpi_operator), V(nvidia_device_plugin) or V(gpu_operator_chart).
    required: true
    type: list
    elements: str
"""

EXAMPLES = r"""
- name: Show the MPI Operator release the collection deploys
  ansible.builtin.debug:
    msg: "{{ lookup('gpuops.cluster.pinned', 'mpi_operator') }}"
"""

RETURN = r"""
_raw:
  description: The pinned version of each component named, in order.
  type: list
  elements: str
"""

import os

import yaml

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

VERSIONS_FILE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "versions.yml"))


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        try:
            with open(VERSIONS_FILE) as handle:
                pins = yaml.safe_load(handle)
        except (IOError, OSError, yaml.YAMLError) as error:
            raise AnsibleLookupError("cannot read the collection's pinned versions (%s): %s" % (VERSIONS_FILE, error))
        versions = []
        for name in terms:
            if name not in pins:
                raise AnsibleLookupError("no pinned version named '%s' in %s; expected one of: %s"
                                         % (name, VERSIONS_FILE, ", ".join(sorted(pins))))
            versions.append(str(pins[name]))
        return versions
