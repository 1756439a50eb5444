# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The options of plugins/module_utils/k8s/options.py that this collection adds to kubernetes.core's
    # authentication options (which kubernetes.core.k8s_auth_options documents).
    DOCUMENTATION = r"""
options:
  request_timeout:
    description:
      - Seconds to wait for each request to the API server. At least 1.
      - A request that takes longer fails the task with an error naming the request and the API server.
    type: int
    default: 60
notes:
  - The connection options (O(kubeconfig), O(context), O(host), O(api_key), O(validate_certs) and the others)
    are read by kubernetes.core's client factory, exactly as kubernetes.core's own modules read them,
    including their C(K8S_AUTH_*) environment variables.
"""
