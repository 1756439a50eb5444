# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: open_mpi_env
short_description: Open MPI launch settings as the environment both Open MPI 4 and Open MPI 5 read
version_added: 0.3.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Open MPI 4's mpirun reads C(OMPI_MCA_<name>); Open MPI 5's reads C(PRTE_MCA_<new name>) (C(plm_rsh_args) became
    C(plm_ssh_args), C(orte_*) became C(prte_*)) and passes over the old names without a word. The filter gives each
    setting under both names, so that an image of either version reads it.
options:
  _input:
    description: "The settings by their Open MPI 4 names, such as C({plm_rsh_args: -p 2222})."
    type: dict
    required: true
  open_mpi_4:
    description: Give the Open MPI 4 names too; V(false) where something else already gives them.
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Tell mpirun the workers' SSH port, whichever Open MPI the image holds
  ansible.builtin.set_fact:
    mpirun_env: "{{ {'plm_rsh_args': '-p 2222', 'orte_keep_fqdn_hostnames': true} | gpuops.cluster.open_mpi_env }}"
"""

RETURN = r"""
_value:
  description: "The environment, such as C({OMPI_MCA_plm_rsh_args: -p 2222, PRTE_MCA_plm_ssh_args: -p 2222})."
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.module_utils.common.open_mpi import mca_environment


def open_mpi_env(settings, open_mpi_4=True):
    try:
        return mca_environment(settings, open_mpi_4)
    except ValueError as error:
        raise AnsibleFilterError(str(error))


class FilterModule(object):
    def filters(self):
        return {"open_mpi_env": open_mpi_env}
