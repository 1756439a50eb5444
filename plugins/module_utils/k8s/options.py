# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The connection options every module of this collection that talks to the API server accepts.

The authentication options are kubernetes.core's own (documented by its doc fragment
kubernetes.core.k8s_auth_options), because its client factory is what reads them; this collection adds
the per-request timeout (documented by the doc fragment gpuops.cluster.k8s_connection). Modules take a
deep copy and add their own options to it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC

REQUEST_TIMEOUT_DEFAULT = 60

_CONNECTION_ARG_SPEC = dict(
    AUTH_ARG_SPEC,
    request_timeout=dict(type="int", default=REQUEST_TIMEOUT_DEFAULT),
)


def connection_argument_spec():
    """A fresh copy of the connection options, for a module to extend with its own."""
    return copy.deepcopy(_CONNECTION_ARG_SPEC)


def request_timeout_problems(params):
    """Why the request timeout given to a module cannot be used; [] when it can."""
    timeout = params.get("request_timeout")
    if timeout is not None and timeout < 1:
        return ["request_timeout must be at least 1 second, got {0}".format(timeout)]
    return []
