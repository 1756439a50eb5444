# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: horovod_check_build
short_description: What Horovod was built with, from the output of C(horovodrun --check-build)
version_added: 0.2.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Reads the sections C(Available Frameworks), C(Available Controllers) and C(Available Tensor Operations) and keeps
    the names ticked C([X]) in each, with Horovod's version from the first line.
  - The role C(gpuops.cluster.user_python_env) records them in its facts.
options:
  _input:
    description: The standard output of C(horovodrun --check-build).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: The controllers Horovod was built with
  ansible.builtin.debug:
    msg: "{{ (check_build.stdout | gpuops.cluster.horovod_check_build).controllers }}"
"""

RETURN = r"""
_value:
  description:
    - C(version) (such as C(0.28.1), or null), C(frameworks), C(controllers) and C(tensor_operations) (the names
      ticked, such as C([MPI, Gloo])), and C(text), the output itself.
  type: dict
"""

import re

_SECTIONS = {"Available Frameworks": "frameworks", "Available Controllers": "controllers",
             "Available Tensor Operations": "tensor_operations"}
_TICKED = re.compile(r"^\s*\[([xX ])\]\s*(\S.*?)\s*$")


def horovod_check_build(text):
    version = re.search(r"^Horovod v?([0-9][^\s:]*)", text, re.M)
    found = dict((key, []) for key in _SECTIONS.values())
    section = None
    for line in text.splitlines():
        if line.strip().endswith(":"):
            section = _SECTIONS.get(line.strip()[:-1])
            continue
        ticked = _TICKED.match(line)
        if section and ticked and ticked.group(1) != " ":
            found[section].append(ticked.group(2))
    return dict(found, version=version.group(1) if version else None, text=text)


class FilterModule(object):

    def filters(self):
        return {"horovod_check_build": horovod_check_build}
