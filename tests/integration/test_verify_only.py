# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A run of --tags verify leaves the GPU nodes alone: the node stage gathers no facts and runs none of its roles' first
steps there. Its GPU host is an SSH address nothing answers on, so that any connection to it is seen: the same
playbook with --tags nodes finds it unreachable."""

from __future__ import annotations

import os
import sys

import yaml

from gpuops_testlib.ansible_run import REPO_ROOT, ansible_env, mode_options, run_playbook

PREPARE_NODES = os.path.join(REPO_ROOT, "playbooks", "prepare_nodes.yml")


def _inventory(tmp_path):
    localhost = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    # Port 9 (discard) of this machine: nothing listens there, so a connection is refused at once.
    node = {"ansible_host": "127.0.0.1", "ansible_port": 9, "ansible_user": "nobody",
            "ansible_ssh_common_args": "-o ConnectTimeout=5 -o BatchMode=yes",
            # The node roles' own inputs pass, so that under --tags nodes the run goes on to the node.
            "gpu_network_bond_enabled": False}
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": localhost},
                                            "children": {"gpu_nodes": {"hosts": {"gpu-node-1": node}}}}}))
    return str(path)


def test_the_node_stage_under_tags_verify_connects_to_no_node_and_under_tags_nodes_it_does(tmp_path):
    inventory, env = _inventory(tmp_path), ansible_env(str(tmp_path / "collections"))
    verify_only = run_playbook(PREPARE_NODES, inventory, options=mode_options(check=True, tags="verify"), env=env,
                               timeout=300)
    assert verify_only.rc == 0, verify_only.explain()
    stats = verify_only.document["stats"]["gpu-node-1"]
    assert stats.get("unreachable", 0) == 0 and stats.get("failures", 0) == 0, stats
    # Only what runs on the controller ran for the node: the input check, and Ansible's check of each role's arguments.
    ran = [task for task, _host, result in verify_only.tasks("gpu-node-1")
           if not result.get("skipped") and "Validating arguments against arg spec" not in task]
    assert ran == ["Check the variables of every role this run takes here"], ran

    nodes = run_playbook(PREPARE_NODES, inventory, options=mode_options(check=True, tags="nodes"), env=env, timeout=300)
    assert nodes.rc != 0
    assert nodes.document["stats"]["gpu-node-1"].get("unreachable", 0) == 1, nodes.document["stats"]
