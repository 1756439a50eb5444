# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node roles' first steps (facts, input check, probes) carry the role's own tags instead of always, so that a run
of other tags (--tags verify) leaves the nodes alone: they must name every tag a step of the role has, or that tag
run alone would skip them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from gpuops_testlib.ansible_run import REPO_ROOT

NODE_ROLES = ("nvidia_driver", "nvidia_container_toolkit", "hugepages", "gpu_network", "gpu_selinux_contexts")


def _tasks(tasks):
    for task in tasks or []:
        yield task
        for key in ("block", "rescue", "always"):
            yield from _tasks(task.get(key))


@pytest.mark.parametrize("role", NODE_ROLES)
def test_the_first_steps_carry_every_tag_of_the_role_and_none_is_always(role):
    with open(os.path.join(REPO_ROOT, "roles", role, "tasks", "main.yml"), encoding="utf-8") as handle:
        tasks = list(_tasks(yaml.safe_load(handle)))
    tagged = [task.get("tags") or [] for task in tasks]
    first = next(tags for tags in tagged if tags)
    assert "always" not in [tag for tags in tagged for tag in tags]
    assert set(tag for tags in tagged for tag in tags) - {role} <= set(first), first
