# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: cache_dir
short_description: The controller's gpuops cache folder, or a path under it
version_added: 0.3.0
description:
  - Returns the cache folder on the controller, C($GPUOPS_CACHE), or C(~/.cache/gpuops) when that variable is
    unset or empty, with the terms joined below it. The roles' defaults take their controller paths from it (the
    launchers' logs and reports, the versions report, the lab's state), and the build scripts under C(tools/)
    read C($GPUOPS_CACHE) the same way, so everything lands in the one folder.
author:
  - gpuops maintainers (@gpuops)
options:
  _terms:
    description: Path parts below the cache folder, joined in order; none returns the folder itself.
    required: false
    type: list
    elements: str
"""

EXAMPLES = r"""
- name: Show where the launchers keep their logs by default
  ansible.builtin.debug:
    msg: "{{ lookup('gpuops.cluster.cache_dir', 'training') }}"
"""

RETURN = r"""
_raw:
  description: The cache folder, or the path the terms name under it.
  type: list
  elements: path
"""

import os

from ansible.plugins.lookup import LookupBase


def cache_root():
    """$GPUOPS_CACHE, or ~/.cache/gpuops when it is unset or empty, as the build scripts' ${GPUOPS_CACHE:-...} has it."""
    return os.environ.get("GPUOPS_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "gpuops")


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        return [os.path.join(cache_root(), *[str(term) for term in terms])]
