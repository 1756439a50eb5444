# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A lab control plane for one test or bench run: its binaries built, playbooks/lab.yml up and down."""

from __future__ import annotations

import os
import subprocess

from gpuops_testlib.ansible_run import REPO_ROOT, ansible_env, run_playbook

BUILD_SCRIPT = os.path.join(REPO_ROOT, "tools", "build_kube_binaries.sh")
LAB_PLAYBOOK = os.path.join(REPO_ROOT, "playbooks", "lab.yml")
LAB_INVENTORY = os.path.join(REPO_ROOT, "inventories", "lab")


class LabError(RuntimeError):
    """A lab build or playbook that failed, with the output that says why."""


def tail(text, lines=60):
    return "\n".join(text.splitlines()[-lines:])


def build_binaries():
    """tools/build_kube_binaries.sh (a no-op when the cache is complete): (bin_dir, its stderr)."""
    build = subprocess.run([BUILD_SCRIPT], cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    if build.returncode != 0:
        raise LabError("building the control plane binaries failed (tools/build_kube_binaries.sh):\n%s"
                       % tail(build.stderr))
    return build.stdout.strip().splitlines()[-1], build.stderr


def lab_playbook(state, run_dir, cluster_name, env=None, timeout=900):
    """playbooks/lab.yml with lab_state present or absent for the control plane in run_dir (text output)."""
    # An API-level control plane: kwok's fake nodes and the MPI Operator as a process, listening on 127.0.0.1 only
    # (the lab inventory's real-node settings are for the cluster of make lab).
    extra = {"lab_state": state, "lab_control_plane_run_dir": run_dir, "lab_control_plane_cluster_name": cluster_name,
             "lab_control_plane_build": False, "lab_control_plane_fake_nodes": True,
             "lab_control_plane_mpi_operator_enabled": True, "lab_control_plane_apiserver_bind_address": "127.0.0.1",
             "lab_control_plane_apiserver_advertise_address": ""}
    return run_playbook(LAB_PLAYBOOK, LAB_INVENTORY, extra, env=env or ansible_env(json_output=False),
                        timeout=timeout)


def checked_lab_playbook(state, run_dir, cluster_name, env=None):
    """lab_playbook, raising LabError with the output's tail when it fails; returns its seconds."""
    done = lab_playbook(state, run_dir, cluster_name, env)
    if done.rc != 0:
        raise LabError("playbooks/lab.yml lab_state=%s failed (is tools/build_kube_binaries.sh done?):\n%s\n%s"
                       % (state, tail(done.stdout), done.stderr[-2000:]))
    return done.seconds


def component_logs(run_dir):
    """The last lines of every component log of the run, for failure messages."""
    out = []
    for root, _dirs, files in os.walk(run_dir):
        for name in sorted(files):
            if name.endswith(".log"):
                path = os.path.join(root, name)
                with open(path, encoding="utf-8", errors="replace") as handle:
                    out.append("--- %s\n%s" % (path, tail(handle.read(), 15)))
    return "\n".join(out)
