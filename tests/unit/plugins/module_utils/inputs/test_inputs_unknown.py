# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Variables with a role's prefix that the role neither declares nor reads (inputs.unknown), on the collection's own
roles: typos are named with the nearest option, a name the role's files read (its result, say) is not."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

from ansible_collections.gpuops.cluster.plugins.module_utils.inputs.unknown import unknown_variables

COLLECTION = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..")


def _load(path):
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def test_typos_are_named_with_the_nearest_option_of_the_longest_prefix():
    names = ["mpijob_launcher_worker", "job_launcher_imag", "kube_job_namespce", "hugepages_count_1g_typo"]
    found = dict((name, (role, nearest)) for name, role, nearest in unknown_variables(names, COLLECTION, _load))
    assert found["mpijob_launcher_worker"] == ("mpijob_launcher", "mpijob_launcher_workers")
    # job_launcher_ is not mpijob_launcher_'s prefix, nor the other way round.
    assert found["job_launcher_imag"] == ("job_launcher", "job_launcher_image")
    assert found["kube_job_namespce"] == ("kube_job", "kube_job_namespace")
    assert found["hugepages_count_1g_typo"][0] == "hugepages"


def test_options_names_a_role_reads_and_other_names_pass():
    names = ["mpijob_launcher_workers", "kube_job_namespace", "mpijob_launcher_result", "lab_gpu_count",
             "gpuops_launcher", "__mpijob_launcher_run", "ansible_host"]
    assert unknown_variables(names, COLLECTION, _load) == []
