# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared connection options and the one client factory, through kubernetes.core's own helpers."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import threading

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.client import api_client
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import ApiError, server_of
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.options import (
    connection_argument_spec,
    request_timeout_problems,
)
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule


def kubeconfig(server):
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": "lab",
        "clusters": [{"name": "lab", "cluster": {"server": server}}],
        "users": [{"name": "admin", "user": {"token": "not-a-real-token"}}],
        "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "admin"}}],
    }


DISCOVERY = {
    "/version": {"major": "1", "minor": "30", "gitVersion": "v1.30.0"},
    "/api": {"kind": "APIVersions", "versions": ["v1"]},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": []},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
}


@pytest.fixture
def api_server():
    """An API server with no resources: kubernetes.core's client reads its version and discovery when it is made."""
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            answer = DISCOVERY.get(self.path)
            body = json.dumps(answer or {"kind": "Status", "code": 404}).encode()
            self.send_response(200 if answer else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield "http://127.0.0.1:{0}".format(server.server_address[1])
    server.shutdown()
    server.server_close()


def module(**params):
    with patch_module_args(params):
        return AnsibleK8SModule(module_class=basic.AnsibleModule, argument_spec=connection_argument_spec())


def test_secrets_are_not_logged_and_every_copy_is_fresh():
    spec = connection_argument_spec()
    for secret in ("api_key", "password", "kubeconfig"):
        assert spec[secret]["no_log"] is True, secret
    spec["request_timeout"]["default"] = 1
    assert connection_argument_spec()["request_timeout"] == {"type": "int", "default": 60}


def test_request_timeout_below_one_second_is_refused_naming_it():
    assert request_timeout_problems({"request_timeout": 0}) == ["request_timeout must be at least 1 second, got 0"]
    assert request_timeout_problems({"request_timeout": 5}) == []


def test_the_factory_uses_the_kubeconfig_the_pool_size_and_the_impersonation_headers(api_server):
    client = api_client(module(kubeconfig=kubeconfig(api_server), impersonate_user="auditor"), pool_size=48)
    assert server_of(client) == api_server
    assert client.configuration.connection_pool_maxsize >= 48
    assert client.default_headers["Impersonate-User"] == "auditor"


def test_a_bad_kubeconfig_is_an_api_error_saying_the_client_could_not_be_configured(tmp_path):
    missing = str(tmp_path / "no-such-kubeconfig")
    with pytest.raises(ApiError) as raised:
        api_client(module(kubeconfig=missing))
    assert str(raised.value) == ("could not configure the Kubernetes client: Could not create API client: Invalid "
                                 "kube-config file. No configuration found.")
