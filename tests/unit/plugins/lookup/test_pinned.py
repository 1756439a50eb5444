# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""versions.yml is the one file of pins: the pinned lookup and tools/pinned.sh read the same values from it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess

import pytest
import yaml

from ansible.errors import AnsibleLookupError
from ansible_collections.gpuops.cluster.plugins.lookup import pinned

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
with open(os.path.join(REPO_ROOT, "versions.yml")) as _handle:
    PINS = yaml.safe_load(_handle)


def lookup(*names):
    return pinned.LookupModule().run(list(names), variables={})


def shell_pinned(name):
    return subprocess.run(["bash", "-c", 'source tools/pinned.sh && pinned "$1"', "pinned", name], cwd=REPO_ROOT,
                          capture_output=True, text=True, check=False)


def test_the_lookup_reads_versions_yml_of_the_collection():
    assert os.path.realpath(pinned.VERSIONS_FILE) == os.path.realpath(os.path.join(REPO_ROOT, "versions.yml"))
    assert lookup("mpi_operator", "horovod") == [str(PINS["mpi_operator"]), str(PINS["horovod"])]


def test_an_unknown_name_is_an_error_listing_the_names_there_are():
    with pytest.raises(AnsibleLookupError) as raised:
        lookup("mpi-operator")
    assert str(raised.value).startswith("no pinned version named 'mpi-operator' in %s; expected one of: "
                                        % pinned.VERSIONS_FILE)
    assert "mpi_operator" in str(raised.value)


@pytest.mark.parametrize("name", sorted(PINS))
def test_the_build_scripts_read_the_same_version_as_the_roles(name):
    done = shell_pinned(name)
    assert (done.returncode, done.stdout.strip()) == (0, lookup(name)[0]), done.stderr


def test_the_build_scripts_fail_on_an_unknown_name():
    done = shell_pinned("kubelet_typo")
    assert done.returncode == 1
    assert done.stderr.strip() == "no pinned version named 'kubelet_typo' in %s" % os.path.join(REPO_ROOT, "versions.yml")
