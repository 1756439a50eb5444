# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The input check's choice of the roles a run takes under its variables and tags."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.inputs.stages import PARTS, parts_to_check


def _roles(parts):
    return [part.role for part in parts]


def test_a_whole_run_checks_the_node_roles_the_gpu_stack_and_the_chosen_launcher_only():
    site = {"gpuops_launcher": "mpijob", "gpuops_training_operator": False, "gpuops_gpu_validation": True}
    assert _roles(parts_to_check(["nodes", "gpu_stack", "verify"], site)) == [
        "nvidia_driver", "nvidia_container_toolkit", "hugepages", "gpu_network", "gpu_selinux_contexts", "gpu_node_labels",
        "nvidia_device_plugin", "gpu_operator", "gpu_validation", "mpi_operator", "versions_report", "registry_credentials",
        "job_namespace", "mpijob_launcher"]


@pytest.mark.parametrize("stages, site, run_tags, skip_tags, checked", [
    # Once a run, though the stack and the launcher both include it.
    (["gpu_stack", "verify"], {"gpuops_launcher": "pod"}, ["all"], [], True),
    (["gpu_stack"], {}, ["gpu_operator"], [], True),
    (["gpu_stack"], {"gpuops_gpu_validation": False}, ["gpu_validation"], [], False),
    (["verify"], {"gpuops_launcher": "job"}, ["all"], [], True),
    # Over SSH or through Slurm no pod is made.
    (["verify"], {"gpuops_launcher": "ssh"}, ["all"], [], False),
    (["verify"], {"gpuops_launcher": "slurm"}, ["all"], [], False),
    (["gpu_stack", "verify"], {"gpuops_launcher": "mpijob"}, ["mpi_operator"], [], False),
])
def test_the_registry_credentials_are_checked_once_wherever_a_role_that_makes_pods_runs(
        stages, site, run_tags, skip_tags, checked):
    roles = _roles(parts_to_check(stages, site, run_tags, skip_tags))
    assert roles.count("registry_credentials") == (1 if checked else 0)


def test_the_ssh_launcher_brings_the_benchmark_install_on_the_training_hosts():
    parts = parts_to_check(["verify"], {"gpuops_launcher": "ssh"})
    assert [(part.role, part.hosts_pattern({"gpuops_training_hosts": "trainers"})) for part in parts] == [
        ("training_benchmark", "trainers"), ("ssh_launcher", "trainers")]


def test_the_slurm_launcher_alone_is_checked_on_the_training_hosts_its_login_host_among_them():
    # The user's own Python environment: the benchmark install (as root) is not part of it.
    parts = parts_to_check(["verify"], {"gpuops_launcher": "slurm"})
    assert [(part.role, part.hosts_pattern({"gpuops_training_hosts": "login01"})) for part in parts] == [
        ("slurm_launcher", "login01")]
    assert parts[0].hosts_pattern({}) == "gpu_nodes"


@pytest.mark.parametrize("run_tags, skip_tags, roles", [
    (["hugepages"], [], ["hugepages"]),
    (["nodes"], ["gpu_network"], ["nvidia_driver", "nvidia_container_toolkit", "hugepages", "gpu_selinux_contexts"]),
    (["mpi_operator", "verify"], [], ["mpi_operator", "tfjob_launcher", "registry_credentials", "job_namespace"]),
    (["all"], ["nodes", "gpu_stack", "mpi_operator"],
     ["training_operator", "tfjob_launcher", "registry_credentials", "job_namespace"]),
    (["tagged"], ["verify", "nodes", "gpu_stack", "mpi_operator", "training_operator"], []),
])
def test_tags_choose_the_roles_checked_as_they_choose_the_roles_run(run_tags, skip_tags, roles):
    site = {"gpuops_launcher": "tfjob", "gpuops_training_operator": True, "gpuops_gpu_validation": True}
    assert _roles(parts_to_check(["nodes", "gpu_stack", "verify"], site, run_tags, skip_tags)) == roles


def test_every_part_names_a_role_of_this_collection():
    import os
    roles_dir = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..", "roles")
    assert [part.role for part in PARTS if not os.path.isdir(os.path.join(roles_dir, part.role))] == []
