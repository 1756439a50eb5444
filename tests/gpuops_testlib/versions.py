# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The versions the collection pins, read from versions.yml: tests expect what the roles deploy."""

from __future__ import annotations

import os

import yaml

from gpuops_testlib.ansible_run import REPO_ROOT

with open(os.path.join(REPO_ROOT, "versions.yml"), encoding="utf-8") as _handle:
    PINNED = yaml.safe_load(_handle)


def pinned(name):
    """The version versions.yml pins for name, such as pinned("mpi_operator") -> "v0.8.2"."""
    if name not in PINNED:
        raise KeyError("versions.yml pins no %r (it pins %s)" % (name, ", ".join(sorted(PINNED))))
    return str(PINNED[name])
