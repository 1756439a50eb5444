# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Files written whole (common.files): what a write would change, the mode it sets, no temporary file left."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.common.files import file_state, write_file


def test_file_state_and_write(tmp_path):
    path = str(tmp_path / "report.json")
    assert file_state(path, b"one") == (True, None)
    write_file(path, b"one")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert file_state(path, b"one") == (False, b"one")
    assert file_state(path, b"two") == (True, b"one")
    os.chmod(path, 0o600)
    assert file_state(path, b"one") == (True, b"one")
    assert os.listdir(str(tmp_path)) == ["report.json"]


def test_a_write_with_its_own_mode_replaces_the_file_and_leaves_nothing_beside_it(tmp_path):
    path = str(tmp_path / "job.sbatch")
    write_file(path, b"old")
    write_file(path, b"new", 0o600)
    assert file_state(path, b"new", 0o600) == (False, b"new")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert os.listdir(str(tmp_path)) == ["job.sbatch"]


def test_a_write_into_a_missing_folder_fails_and_leaves_nothing(tmp_path):
    with pytest.raises(OSError):
        write_file(str(tmp_path / "missing" / "report.json"), b"one")
    assert os.listdir(str(tmp_path)) == []
