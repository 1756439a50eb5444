# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: sweep_plan
short_description: The sizes of a scaling sweep, each as the chosen launcher's size variables
version_added: 0.1.0
description:
  - Checks a scaling sweep's sizes (O(ranks)), its efficiency floors and its name, then turns each size into the
    variables that the launcher named by O(launcher) reads - nodes and tasks per node for C(slurm), workers and slots
    for C(mpijob) and C(job), hosts and slots for C(ssh), ranks for C(pod), workers for C(tfjob), pods and ranks per
    pod for C(pytorchjob) - with a run name, a log and a report of its own, and C(gpuops_training_expect_ranks).
  - The launcher's own variables, as the inventory sets them (else the launcher role's defaults), are the most the
    sweep may take; each size takes the fewest nodes (workers, hosts) that hold its ranks in equal shares.
  - Where C(gpuops_training_require_transport) names a transport between nodes (C(NET/IB), C(NET/Socket)), every
    size sets it too, and a size on one node (worker, host, pod) requires the others only, since NCCL has no other node
    to reach there, so the verdict would fail it by construction. Where C(gpuops_training_require_gpudirect_rdma) is
    true, every size sets it too, false on one node, which makes no RDMA connection.
  - Every problem fails the lookup at once, one line each, naming the variable, what it got and what was expected,
    before any run.
  - The role C(gpuops.cluster.training_sweep) and the playbook C(playbooks/scaling_sweep.yml) use it.
author:
  - gpuops maintainers (@gpuops)
options:
  launcher:
    description: The launcher, as C(gpuops_launcher) names it; none or empty for the default launcher.
    type: str
  ranks:
    description: The sweep's sizes in ranks (C(gpuops_sweep_ranks)).
    type: raw
    required: true
  min_efficiency:
    description: The efficiency floor of every size, or a mapping of size to floor (C(gpuops_sweep_min_efficiency)).
    type: raw
  name:
    description: The sweep's name; each size's run is C(<name>-<ranks>rank(s)).
    type: str
    required: true
  directory:
    description: The folder on the controller of every size's log and report.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Plan a sweep of 1, 2 and 4 ranks through Slurm
  ansible.builtin.set_fact:
    sweep: >-
      {{ query('gpuops.cluster.sweep_plan', launcher='slurm', ranks=[1, 2, 4], min_efficiency=0.8,
               name='gpuops-sweep', directory='/var/log/gpuops') | first }}
"""

RETURN = r"""
_raw:
  description:
    - One item, the plan - C(launcher), C(baseline) (the size efficiency is measured against), C(floors) (size to
      floor) and C(sizes), in ascending order, each with C(ranks), C(name), C(placement) and C(vars).
  type: list
  elements: dict
"""

import os

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.gpuops.cluster.plugins.module_utils.launchers import DEFAULT_LAUNCHER, LAUNCHERS
from ansible_collections.gpuops.cluster.plugins.module_utils.training.sweep_plan import (
    REQUIRE_GPUDIRECT, REQUIRE_TRANSPORT, SHAPES, SweepError, plan_sweep,
)

_ROLES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "roles"))


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        variables = variables or {}
        launcher = self.get_option("launcher") or DEFAULT_LAUNCHER
        settings, problems = {}, []
        if launcher in SHAPES:
            settings = self._settings(launcher, variables)
            problems = self._host_slots(launcher, settings, variables)
        try:
            if problems:
                raise SweepError(problems)
            plan = plan_sweep(launcher, self.get_option("ranks"), self.get_option("min_efficiency"), settings,
                              self.get_option("name"), self.get_option("directory"))
        except SweepError as error:
            raise AnsibleLookupError("%d sweep input(s) to fix before any run:\n%s" % (len(error.problems), error))
        return [plan]

    def _settings(self, launcher, variables):
        """The launcher's size variables as this host sees them, else as its role's defaults give them."""
        path = os.path.join(_ROLES, LAUNCHERS[launcher].role, "defaults", "main.yml")
        defaults = self._loader.load_from_file(path, trusted_as_template=True) or {}
        settings = {}
        for name in SHAPES[launcher].inputs() + [REQUIRE_TRANSPORT, REQUIRE_GPUDIRECT]:
            value = variables[name] if name in variables else defaults.get(name)
            settings[name] = self._templar.copy_with_new_env(available_variables=variables).template(value)
        return settings

    @staticmethod
    def _host_slots(launcher, settings, variables):
        """A host's own ssh_launcher_slots would keep its ranks whatever the size: the sweep sets every host's."""
        if launcher != "ssh":
            return []
        hostvars = variables.get("hostvars") or {}
        given = [host for host in settings.get("ssh_launcher_hosts") or [] if "ssh_launcher_slots" in hostvars.get(host, {})]
        if not given:
            return []
        return ["ssh_launcher_slots: set for %s; expected it unset, since a sweep gives every host its ranks with "
                "ssh_launcher_slots_per_host" % ", ".join(given)]
