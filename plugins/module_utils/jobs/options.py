# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The wait options every job module accepts (documented by the doc fragment gpuops.cluster.job_wait),
their checks, and the lifecycle Settings a module's options make. A module takes a deep copy of the
argument spec and adds its own options (state, force, log_lines and the job's) to it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.lifecycle import Settings
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.retry import RETRIES_DEFAULT

_WAIT_ARG_SPEC = dict(
    wait=dict(type="bool", default=False),
    wait_for=dict(type="str", choices=["Succeeded", "Running"], default="Succeeded"),
    wait_timeout=dict(type="int", default=600),
    wait_sleep=dict(type="float", default=1.0),
    fail_on_unschedulable=dict(type="bool", default=True),
    api_retries=dict(type="int", default=RETRIES_DEFAULT),
)


def wait_argument_spec():
    """A fresh copy of the wait options, for a module to extend with its own."""
    return copy.deepcopy(_WAIT_ARG_SPEC)


def wait_option_problems(params):
    """Why the wait options given to a module cannot be used; [] when they can."""
    problems = []
    if params["wait_timeout"] < 1:
        problems.append("wait_timeout must be at least 1 second, got {0}".format(params["wait_timeout"]))
    if params["wait_sleep"] <= 0:
        problems.append("wait_sleep must be above 0 seconds, got {0}".format(params["wait_sleep"]))
    if params["log_lines"] < 0:
        problems.append("log_lines must be 0 (the whole log) or more, got {0}".format(params["log_lines"]))
    if params["api_retries"] < 0:
        problems.append("api_retries must be 0 (no retry) or more, got {0}".format(params["api_retries"]))
    return problems


def lifecycle_settings(params, check_mode):
    """The lifecycle Settings for a job module's options."""
    return Settings(check_mode=check_mode, force=params["force"], wait=params["wait"], wait_for=params["wait_for"],
                    wait_timeout=params["wait_timeout"], wait_sleep=params["wait_sleep"],
                    log_lines=params["log_lines"], fail_on_unschedulable=params["fail_on_unschedulable"],
                    api_retries=params["api_retries"])
