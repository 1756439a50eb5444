# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""versions.yml is the one file of pins: the pinned lookup and tools/pinned.sh read the same values from it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess

import pytest

from gpuops_testlib.ansible_run import REPO_ROOT, run_playbook, write_play
from gpuops_testlib.versions import PINNED as PINS


def lookup(tmp_path, *names):
    """The lookup as a playbook calls it, in an ansible-playbook of its own (loading Ansible's controller
    code in this process would change how the module tests' warnings are collected)."""
    expression = "{{ query('gpuops.cluster.pinned', %s) }}" % ", ".join(repr(name) for name in names)
    playbook = write_play(tmp_path / "pinned.yml", {"hosts": "localhost", "connection": "local", "gather_facts": False,
                                                    "tasks": [{"name": "pinned", "ansible.builtin.debug": {"msg": expression},
                                                               "ignore_errors": True}]})
    return run_playbook(playbook).result("pinned")


def shell_pinned(name):
    return subprocess.run(["bash", "-c", 'source tools/pinned.sh && pinned "$1"', "pinned", name], cwd=REPO_ROOT,
                          capture_output=True, text=True, check=False)


def test_the_lookup_reads_versions_yml_of_the_collection(tmp_path):
    assert lookup(tmp_path, "mpi_operator", "horovod")["msg"] == [str(PINS["mpi_operator"]), str(PINS["horovod"])]


def test_an_unknown_name_is_an_error_listing_the_names_there_are(tmp_path):
    result = lookup(tmp_path, "mpi-operator")
    assert result["failed"] is True
    assert "no pinned version named 'mpi-operator' in " in result["msg"]
    assert "versions.yml; expected one of: " in result["msg"] and "mpi_operator" in result["msg"]


@pytest.mark.parametrize("name", sorted(PINS))
def test_the_build_scripts_read_the_same_version_as_the_roles(name):
    done = shell_pinned(name)
    assert (done.returncode, done.stdout.strip()) == (0, str(PINS[name])), done.stderr


def test_the_build_scripts_fail_on_an_unknown_name():
    done = shell_pinned("kubelet_typo")
    assert done.returncode == 1
    assert done.stderr.strip() == "no pinned version named 'kubelet_typo' in %s" % os.path.join(REPO_ROOT, "versions.yml")
