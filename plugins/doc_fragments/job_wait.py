# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The wait options of plugins/module_utils/jobs/options.py, which every job module accepts.
    DOCUMENTATION = r"""
options:
  wait:
    description:
      - With O(state=present), wait for O(wait_for), failing as soon as the job cannot get there.
      - With O(state=absent), wait until the job is gone.
    type: bool
    default: false
  wait_for:
    description:
      - V(Succeeded) waits for the job to finish successfully; V(Running) for all its pods to run (or for
        success).
    type: str
    choices: [Succeeded, Running]
    default: Succeeded
  wait_timeout:
    description:
      - Seconds to wait.
    type: int
    default: 600
  wait_sleep:
    description:
      - Seconds between two looks at the job. The failure detection latency is at most about this.
    type: float
    default: 1.0
  fail_on_unschedulable:
    description:
      - Fail as soon as a pending pod of the job cannot be scheduled (its condition C(PodScheduled) is
        C(False) with reason C(Unschedulable)), with the scheduler's message, for example that no node has
        the C(nvidia.com/gpu) the workers request.
      - Set it to V(false) where a cluster autoscaler adds nodes for such pods, or where other jobs will
        free the resources; the wait then goes on until O(wait_timeout), whose message still names the
        pods the scheduler could not place.
    type: bool
    default: true
  api_retries:
    description:
      - How many times a look at the job is tried again while the API server does not answer (connection
        refused or reset, a timeout, HTTP 429 or 5xx), for example while it restarts. The delays double from
        0.5 s up to 4 s, so the default waits about 30 s in all; the wait goes on when the server answers.
      - After the last retry the task fails naming the API server and the last error. Any other answer
        (HTTP 401, 403, 404...) fails the task at once. V(0) tries each look once.
    type: int
    default: 10
"""
