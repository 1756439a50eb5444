#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: check_inputs
short_description: Check every input of the collection's roles a run will take, before anything changes
version_added: 0.2.0
description:
  - Runs on the controller (an action plugin) and changes nothing; check mode runs it the same way.
  - For each role, converts the variables its C(meta/argument_specs.yml) names as users give them (C(-e name=3)
    and INI inventories give strings) and reports the values of the wrong type or outside the choices. Then it
    evaluates the role's C(meta/input_rules.yml), the checks a type cannot express (ranges, paths, variables
    that must agree), with the converted values.
  - Values come from the host's variables over the role's defaults, as the role will see them.
  - Fails with every problem at once, one line each - the variable, the value it got, what was expected - and
    a value an option marks C(no_log) is never shown.
  - O(stages) is what C(playbooks/check_inputs.yml) uses, first in C(site.yml) and each stage's playbook; a
    role's own C(tasks/validate.yml) uses O(roles).
author:
  - gpuops maintainers (@gpuops)
options:
  stages:
    description:
      - Check every role these stages take on this host, as the playbooks choose them - C(gpuops_launcher),
        C(gpuops_training_operator) and C(gpuops_gpu_validation), the host variable of each play, and
        C(--tags) and C(--skip-tags) - and the variables the playbooks read themselves.
      - Mutually exclusive with O(roles); one of them is required.
    type: list
    elements: str
    choices: [nodes, gpu_stack, verify]
  roles:
    description:
      - Check these roles of this collection (short names or C(gpuops.cluster.) names), whatever the stage.
    type: list
    elements: str
notes:
  - A check of facts (the node's memory, its platform) stays in the role, after facts are gathered.
"""

EXAMPLES = r"""
- name: Check the inputs of every stage of the run
  gpuops.cluster.check_inputs:
    stages: [nodes, gpu_stack, verify]

- name: Check the variables of one role
  gpuops.cluster.check_inputs:
    roles: [gpuops.cluster.hugepages]
"""

RETURN = r"""
checked:
  description: The roles checked on this host (and "the playbooks' own variables" for O(stages)).
  returned: always
  type: list
  elements: str
  sample: ["the playbooks' own variables", hugepages]
cluster_roles:
  description: The roles checked on this host that talk to the Kubernetes API server (those with a kubeconfig option).
  returned: always
  type: list
  elements: str
  sample: [gpu_node_labels, nvidia_device_plugin, mpi_operator, kube_job]
problems:
  description: One line per wrong input - C(name - got value; expected what).
  returned: always
  type: list
  elements: str
  sample: ["hugepages_1g_count: got -3; expected a whole number of 1 GiB pages, 0 or more"]
"""
