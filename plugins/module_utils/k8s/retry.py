# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Trying a read again while the API server does not answer: a restart, an upgrade, an overloaded server.

Only what may pass is tried again: no answer at all (connection refused or reset, a timeout, a TLS
session cut short) and HTTP 429 (too many requests) or 5xx. Any other answer (401, 403, 404, 422...)
is the server's last word and ends the call at once. The delays double from FIRST_DELAY up to
LONGEST_DELAY, so the default RETRIES_DEFAULT retries wait about 30 s in all. Only calls that can be
repeated safely (reads) belong here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import ApiError

RETRIES_DEFAULT = 10
FIRST_DELAY = 0.5
LONGEST_DELAY = 4.0


def is_transient(error):
    """Whether an ApiError may pass: no answer came back, or HTTP 429, or HTTP 5xx."""
    status = getattr(error, "status", None)
    return status is None or status == 429 or status >= 500


def delays(retries):
    """The seconds slept before each retry: 0.5, 1, 2, then 4 each."""
    return [min(FIRST_DELAY * 2 ** attempt, LONGEST_DELAY) for attempt in range(retries)]


def call_with_retries(call, retries, what, sleep=time.sleep):
    """`call()`, tried again up to `retries` times while it raises a transient ApiError.

    `what` says what the calls are for, e.g. "waiting for MPIJob ml/bench". Any other ApiError is
    raised as it is. After the last retry the ApiError raised names the API server, the attempts and
    the last error.
    """
    schedule = delays(retries)
    for attempt in range(retries + 1):
        try:
            return call()
        except ApiError as error:
            if not is_transient(error):
                raise
            if attempt == retries:
                raise ApiError("the API server{0} stayed unavailable while {1} ({2} attempt(s) over {3:.1f} s); "
                               "the last error: {4}".format(" " + error.server if error.server else "", what,
                                                            retries + 1, sum(schedule), error),
                               status=error.status, server=error.server)
            sleep(schedule[attempt])
    return None  # not reached: the last attempt returns or raises
