# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node API adapter: what it sends through the ApiClient, and how the API server's errors come back."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import ApiError, ConflictError
from ansible_collections.gpuops.cluster.plugins.module_utils.node_labels.kubernetes_api import KubernetesNodeApi
from gpuops_testlib.fake_api_client import RecordingApiClient, api_exception


def test_patch_is_sent_as_json_merge_patch():
    client = RecordingApiClient(answer={"metadata": {"name": "a"}})
    KubernetesNodeApi(client, request_timeout=7).patch_node("a", {"metadata": {"labels": {"x": None}}})
    ((path, method, kwargs),) = client.calls
    assert (path, method) == ("/api/v1/nodes/{name}", "PATCH")
    assert kwargs["path_params"] == {"name": "a"}
    assert kwargs["header_params"]["Content-Type"] == "application/merge-patch+json"
    assert kwargs["body"] == {"metadata": {"labels": {"x": None}}}
    assert kwargs["_request_timeout"] == 7
    assert kwargs["auth_settings"] == ["BearerToken"]


def test_list_returns_the_items_as_dicts():
    client = RecordingApiClient(answer={"kind": "NodeList", "items": [{"metadata": {"name": "a"}}]})
    assert KubernetesNodeApi(client).list_nodes() == [{"metadata": {"name": "a"}}]
    assert client.calls[0][:2] == ("/api/v1/nodes", "GET")


def test_conflict_and_other_http_errors_are_translated():
    with pytest.raises(ConflictError):
        KubernetesNodeApi(RecordingApiClient(error=api_exception(409, "Conflict", "changed"))).patch_node("a", {})
    with pytest.raises(ApiError) as caught:
        KubernetesNodeApi(RecordingApiClient(error=api_exception(403, "Forbidden", "nodes is forbidden"))).list_nodes()
    assert str(caught.value) == "listing nodes: HTTP 403 Forbidden: nodes is forbidden"
