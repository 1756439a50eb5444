# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/image_archive.yml on the lab's nodes, from the controller's copy of the device plugin image's archive
(the lab's own nodes load theirs through the same role from a mounted folder): where containerd holds the image
at the archive's config digest nothing changes; with it removed from node2, check mode says node2 would import it
and imports nothing, and the real run imports it on node2 alone, at the archive's digest."""

from __future__ import annotations

import os
import re
import subprocess

from gpuops_testlib.ansible_run import CACHE_ROOT, REPO_ROOT, ansible_env, mode_options, run_playbook
from gpuops_testlib.lab_control_plane import LAB_INVENTORY
from gpuops_testlib.lab_pods import NODE_CONTAINER_PREFIX

PLAYBOOK = os.path.join(REPO_ROOT, "playbooks", "image_archive.yml")
COMPARE = "Compare the node's images with the archives' config digests"
IMPORT = "Import them"


def _device_plugin_image():
    return subprocess.run(["bash", os.path.join(REPO_ROOT, "tools", "build_nvidia_device_plugin_image.sh"), "--name"],
                          capture_output=True, text=True, check=True).stdout.strip()


def _run(name, check=False):
    # The file name lab_kube_node gives the image's archive in the lab's images folder.
    archive = os.path.join(CACHE_ROOT, "images", "containerd", re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".tar")
    done = run_playbook(PLAYBOOK, LAB_INVENTORY, {"image_archive_images": [{"name": name, "archive": archive}]},
                        mode_options(check=check, diff=check), env=ansible_env(), timeout=600)
    assert done.rc == 0, done.explain()
    return done


def _held(node, name):
    listed = subprocess.run(["podman", "exec", NODE_CONTAINER_PREFIX + node, "ctr", "--namespace=k8s.io", "images", "list",
                             "--quiet"], capture_output=True, text=True, check=True).stdout.split()
    return name in listed


def test_only_the_node_without_the_image_imports_it_at_the_archives_digest():
    name = _device_plugin_image()
    same = _run(name)
    assert same.changed_tasks("node1") == [] and same.changed_tasks("node2") == []
    digest = same.result(COMPARE, "node1")["digests"][name]
    assert digest.startswith("sha256:") and same.result(COMPARE, "node2")["digests"][name] == digest

    subprocess.run(["podman", "exec", NODE_CONTAINER_PREFIX + "node2", "ctr", "--namespace=k8s.io", "images", "rm", name],
                   capture_output=True, text=True, check=True)
    try:
        check = _run(name, check=True)
        assert check.result(COMPARE, "node2")["imported"] == [name]
        assert check.result(COMPARE, "node2")["diff"] == {"before": {"digests": {name: None}}, "after": {"digests": {name: digest}}}
        assert check.changed_tasks("node1") == []
        assert not _held("node2", name)
    finally:
        done = _run(name)
    assert done.changed_tasks("node1") == []
    assert IMPORT in done.changed_tasks("node2")
    assert done.result(IMPORT, "node2")["results"][0]["digests"] == {name: digest}
    assert _held("node2", name)
    assert _run(name).changed_tasks("node2") == []
