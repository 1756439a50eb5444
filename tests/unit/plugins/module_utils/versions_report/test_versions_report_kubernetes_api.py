# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The versions report's API adapter: what it sends through the ApiClient, and the words of a failed read."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import ApiError
from ansible_collections.gpuops.cluster.plugins.module_utils.versions_report.kubernetes_api import VersionsApi
from gpuops_testlib.fake_api_client import RecordingApiClient, api_exception


def test_the_adapter_reads_with_gets_and_a_missing_object_is_none():
    client = RecordingApiClient(answer={"kind": "Deployment"})
    api = VersionsApi(client, request_timeout=7)
    assert api.read_deployment("kubeflow", "training-operator") == {"kind": "Deployment"}
    ((path, method, kwargs),) = client.calls
    assert (path, method) == ("/apis/apps/v1/namespaces/{namespace}/deployments/{name}", "GET")
    assert kwargs["path_params"] == {"namespace": "kubeflow", "name": "training-operator"}
    assert kwargs["_request_timeout"] == 7

    client = RecordingApiClient(answer={"items": [{"metadata": {"name": "sh.helm.release.v1.gpu-operator.v3"}}]})
    assert len(VersionsApi(client).list_helm_releases("gpu-operator", "gpu-operator")) == 1
    ((path, method, kwargs),) = client.calls
    assert path == "/api/v1/namespaces/{namespace}/secrets"
    assert kwargs["query_params"] == [("labelSelector", "owner=helm,name=gpu-operator,status=deployed")]

    missing = RecordingApiClient(error=api_exception(404, "Not Found", "daemonsets.apps \\\"x\\\" not found"))
    assert VersionsApi(missing).read_daemonset("ns", "x") is None


def test_the_adapter_names_the_failed_read():
    forbidden = RecordingApiClient(error=api_exception(403, "Forbidden", "secrets is forbidden"))
    with pytest.raises(ApiError) as caught:
        VersionsApi(forbidden).list_helm_releases("gpu-operator", "gpu-operator")
    assert str(caught.value) == ("listing the Helm release records of gpu-operator/gpu-operator: "
                                 "HTTP 403 Forbidden: secrets is forbidden")
    with pytest.raises(ApiError):  # a missing node list is not an answer
        VersionsApi(RecordingApiClient(error=api_exception(404, "Not Found", "x"))).list_nodes()
