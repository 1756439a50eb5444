# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The one way this collection's modules reach the API server.

kubernetes.core's client factory reads the connection options (kubeconfig, context, host, api_key,
certificates, proxy, impersonation, and their K8S_AUTH_* environment variables) exactly as its own
modules do. Only its public results are used: the configuration it built and the default headers
(impersonation) of the client it made. The ApiClient returned here is a fresh one from that
configuration, so that a caller can size its connection pool.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import ApiError


def api_client(module, pool_size=None):
    """A kubernetes.client.ApiClient for the module's connection options. Raises ApiError.

    `module` is an AnsibleK8SModule (kubernetes.core checks its dependencies through it).
    `pool_size` is how many requests the caller keeps in flight at once: urllib3 drops the
    connections beyond the pool's size, so concurrent callers need a pool as large.
    """
    # Imported here: module_utils must import without the kubernetes client for the sanity tests.
    import kubernetes
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client

    try:
        shared = get_api_client(module)
    except Exception as error:  # CoreException for a bad kubeconfig, or the client's own errors
        raise ApiError("could not configure the Kubernetes client: {0}".format(error))
    configuration = shared.configuration
    if pool_size:
        configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize or 0, pool_size)
    client = kubernetes.client.ApiClient(configuration)
    for header, value in shared.client.client.default_headers.items():
        client.default_headers[header] = value
    return client
