# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every node role's on/off switch, on the lab make lab made: prepare_nodes.yml with each role switched off (as a
user types it, -e name=false) and values their input rules would refuse changes nothing on the nodes, and each role
says on each node that it did nothing."""

from __future__ import annotations

import os

from gpuops_testlib.ansible_run import ansible_env, run_playbook, short_name
from gpuops_testlib.lab_control_plane import LAB_INVENTORY
from main_job import LAB_DIR, REPO_ROOT

PREPARE_NODES = os.path.join(REPO_ROOT, "playbooks", "prepare_nodes.yml")
NODE_ROLES = ("nvidia_driver", "nvidia_container_toolkit", "hugepages", "gpu_network", "gpu_selinux_contexts")
NODES = ("node1", "node2")
# The task each role says it with (the SELinux role says why it leaves the contexts, whatever the reason).
SAID = {"gpu_selinux_contexts": "Say why the file contexts are left as they are"}


def test_each_node_role_switched_off_changes_nothing_and_says_so(second_run):
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    switched_off = ["%s_enabled=false" % role for role in NODE_ROLES]
    refused_if_on = ["hugepages_1g_count=-3", "nvidia_driver_branch=57", "nvidia_container_toolkit_version=latest"]
    done = run_playbook(PREPARE_NODES, LAB_INVENTORY, switched_off + refused_if_on,
                        env=ansible_env(TMPDIR=os.path.join(LAB_DIR, "tmp")), timeout=600)
    assert done.rc == 0, done.explain()
    assert all(stats["changed"] == 0 for stats in done.document["stats"].values()), done.document["stats"]
    for node in NODES:
        lines = [(short_name(task), result.get("msg")) for task, _host, result in done.tasks(node)
                 if str(result.get("msg", "")).startswith(node + ": nothing done, ")]
        assert sorted(lines) == sorted((SAID.get(role, "Say that the role is switched off"),
                                        "%s: nothing done, %s_enabled is false" % (node, role)) for role in NODE_ROLES)
