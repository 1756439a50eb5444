# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: launcher_name_problems
short_description: Why a name cannot name a Kubernetes launcher's objects, in the job modules' words
version_added: 0.3.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Checks a launcher's name (V(mpijob_launcher_name), for example) by the rules of what the launcher creates from it -
    a DNS-1035 label, and its longest pod name (C(<name>-worker-<last index>) and the like) at most 63 characters.
  - The input check runs it on each Kubernetes launcher's name before any change, naming the variable; the job modules
    check the same after it.
options:
  _input:
    description: The name.
    type: str
    required: true
  launcher:
    description: The launcher, as C(gpuops_launcher) names it.
    type: str
    required: true
    choices: [mpijob, tfjob, pytorchjob, pod, job]
  workers:
    description: Its worker pods (their indexes lengthen the pod names).
    type: int
    default: 1
"""

EXAMPLES = r"""
- name: Refuse an MPIJob name Kubernetes would refuse
  ansible.builtin.assert:
    that: (mpijob_launcher_name | gpuops.cluster.launcher_name_problems('mpijob', mpijob_launcher_workers)) | length == 0
"""

RETURN = r"""
_value:
  description: The problems, one line each; empty when the name is good.
  type: list
  elements: str
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.launcher_names import launcher_name_problems


class FilterModule(object):

    def filters(self):
        return {"launcher_name_problems": launcher_name_problems}
