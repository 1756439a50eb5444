# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Node list/get/patch over a kubernetes.client.ApiClient, as plain dicts: the planner's API adapter."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import api_error, server_of


class KubernetesNodeApi(object):
    """The node calls of the planner; safe to share between threads, as the concurrent patches do.

    The typed CoreV1Api models are skipped on purpose: deserializing a thousand V1Node objects
    costs more than the list call itself, and a strategic-merge patch is all CoreV1Api.patch_node
    can send for a dict body, while the planner relies on JSON merge patch semantics.
    """

    def __init__(self, api_client, request_timeout=None):
        self._client = api_client
        self._timeout = request_timeout
        self._server = server_of(api_client)

    def _call(self, what, method, path, path_params=None, body=None, content_type=None):
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        try:
            return self._client.call_api(
                path, method,
                path_params=path_params or {},
                query_params=[],
                header_params=headers,
                body=body,
                response_type="object",
                auth_settings=["BearerToken"],
                _return_http_data_only=True,
                _request_timeout=self._timeout,
            )
        except Exception as error:  # ApiException, or a connection error from urllib3
            raise api_error(what, error, self._server)

    def list_nodes(self):
        return self._call("listing nodes", "GET", "/api/v1/nodes").get("items") or []

    def get_node(self, name):
        return self._call("reading node " + name, "GET", "/api/v1/nodes/{name}", path_params={"name": name})

    def patch_node(self, name, patch):
        return self._call("patching node " + name, "PATCH", "/api/v1/nodes/{name}", path_params={"name": name},
                          body=patch, content_type="application/merge-patch+json")
