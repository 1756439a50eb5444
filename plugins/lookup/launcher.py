# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: launcher
short_description: A training launcher's row in the collection's registry of launchers
version_added: 0.1.0
description:
  - Returns what the collection knows of the launcher that C(gpuops_launcher) names - the roles a verification
    includes, where they run and which variable holds its log - so that a playbook chooses a launcher by name
    rather than by a play per launcher.
  - Without a name (or with an empty one), the default launcher's row.
author:
  - gpuops maintainers (@gpuops)
options:
  _terms:
    description: The launcher's name, as C(gpuops_launcher) gives it; none or empty for the default.
    required: false
    type: list
    elements: str
"""

EXAMPLES = r"""
- name: Run the chosen launcher's roles
  ansible.builtin.include_role:
    name: "gpuops.cluster.{{ item }}"
  loop: "{{ lookup('gpuops.cluster.launcher', gpuops_launcher | default('')).roles }}"
"""

RETURN = r"""
_raw:
  description:
    - The launcher's row - C(name), C(role) (its own role), C(roles) (what a verification includes, in order, its own
      role last), C(runs_on) (C(hosts) - the hosts of C(gpuops_training_hosts) - or C(api) - the controller, through
      the Kubernetes API) and C(log) (the role variable naming where its log goes).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.gpuops.cluster.plugins.module_utils.launchers import (
    DEFAULT_LAUNCHER, EXPECTED, LAUNCHERS,
)


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        name = (terms[0] if terms else None) or DEFAULT_LAUNCHER
        if name not in LAUNCHERS:
            raise AnsibleLookupError("gpuops_launcher: got %r; expected %s" % (name, EXPECTED))
        return [LAUNCHERS[name].as_dict()]
