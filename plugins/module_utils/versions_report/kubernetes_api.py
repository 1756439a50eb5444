# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The reads of the versions report over a kubernetes.client.ApiClient, and what they show of each component."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import api_error, is_not_found, server_of
from ansible_collections.gpuops.cluster.plugins.module_utils.versions_report.report import (
    observation,
    observe_helm_chart,
    observe_workload,
)

# The labels the mpi_operator and training_operator roles write on every object they apply.
VERSION_LABELS = {
    "mpi_operator": "gpuops.io/mpi-operator-version",
    "training_operator": "gpuops.io/training-operator-version",
}


class VersionsApi(object):
    """The reads of the report over a kubernetes.client.ApiClient, as plain dicts; a missing object is None."""

    def __init__(self, client, request_timeout=None):
        self._client = client
        self._timeout = request_timeout
        self._server = server_of(client)

    def _get(self, what, path, path_params=None, query=None, missing_ok=False):
        try:
            return self._client.call_api(
                path, "GET",
                path_params=path_params or {},
                query_params=query or [],
                header_params={"Accept": "application/json"},
                response_type="object",
                auth_settings=["BearerToken"],
                _return_http_data_only=True,
                _request_timeout=self._timeout,
            )
        except Exception as error:  # ApiException, or a connection error from urllib3
            if missing_ok and is_not_found(error):
                return None
            raise api_error(what, error, self._server)

    def list_nodes(self):
        return self._get("listing nodes", "/api/v1/nodes").get("items") or []

    def read_daemonset(self, namespace, name):
        return self._get("reading DaemonSet {0}/{1}".format(namespace, name),
                         "/apis/apps/v1/namespaces/{namespace}/daemonsets/{name}",
                         {"namespace": namespace, "name": name}, missing_ok=True)

    def read_deployment(self, namespace, name):
        return self._get("reading Deployment {0}/{1}".format(namespace, name),
                         "/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
                         {"namespace": namespace, "name": name}, missing_ok=True)

    def list_helm_releases(self, namespace, release):
        """The Secrets of the release's deployed revision(s): Helm's default storage."""
        selector = "owner=helm,name={0},status=deployed".format(release)
        answer = self._get("listing the Helm release records of {0}/{1}".format(namespace, release),
                           "/api/v1/namespaces/{namespace}/secrets", {"namespace": namespace},
                           query=[("labelSelector", selector)])
        return answer.get("items") or []


def observe(api, component, params):
    """What the cluster shows of one component, at the location params[component] gives (the module's options)."""
    where = params[component]
    if component == "nvidia_device_plugin":
        return observe_workload(api.read_daemonset(where["namespace"], where["name"]),
                                "{namespace}/{name}".format(**where))
    if component == "gpu_operator":
        release = "{namespace}/{release_name}".format(**where)
        seen = observe_helm_chart(api.list_helm_releases(where["namespace"], where["release_name"]), release)
        if seen is not None:
            return seen
        seen = observe_workload(api.read_deployment(where["namespace"], where["deployment"]),
                                "{namespace}/{deployment}".format(**where))
        if not seen["found"]:
            return observation(release, found=False, note="no Helm release, no Deployment " + where["deployment"])
        return seen
    return observe_workload(api.read_deployment(where["namespace"], where["name"]),
                            "{namespace}/{name}".format(**where), VERSION_LABELS[component])
