# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one API error type: what failed, on which API server, and what the server answered."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import (
    ApiError,
    ConflictError,
    api_error,
    is_not_found,
    server_of,
)


class ClientError(Exception):
    """What kubernetes.client's ApiException carries: status, reason and the raw body."""

    def __init__(self, status=None, reason=None, body=None):
        super(ClientError, self).__init__("({0}) Reason: {1}\nHTTP response body: {2}".format(status, reason, body))
        self.status = status
        self.reason = reason
        self.body = body


def test_http_error_names_the_call_the_server_and_the_status_message():
    error = api_error("listing nodes", ClientError(403, "Forbidden", '{"kind": "Status", "message": "nodes is forbidden"}'),
                      server="https://10.0.0.1:6443")
    assert isinstance(error, ApiError) and not isinstance(error, ConflictError)
    assert error.status == 403
    assert str(error) == "listing nodes on https://10.0.0.1:6443: HTTP 403 Forbidden: nodes is forbidden"


def test_without_a_known_server_the_message_names_the_call_only():
    error = api_error("reading MPIJob ml/bench", ClientError(500, "Internal Server Error", '{"message": "etcd timeout"}'))
    assert str(error) == "reading MPIJob ml/bench: HTTP 500 Internal Server Error: etcd timeout"


def test_a_body_that_is_not_a_status_is_quoted_shortened():
    error = api_error("listing nodes", ClientError(502, "Bad Gateway", "<html>" + "x" * 1000), server="https://lb:443")
    assert str(error) == "listing nodes on https://lb:443: HTTP 502 Bad Gateway: <html>" + "x" * 494


def test_an_error_without_an_answer_keeps_the_clients_words():
    error = api_error("listing nodes", OSError("connection refused"), server="https://10.0.0.1:6443")
    assert error.status is None
    assert str(error) == "listing nodes on https://10.0.0.1:6443: connection refused"


def test_409_is_a_conflict_and_still_an_api_error():
    error = api_error("patching node a", ClientError(409, "Conflict", '{"message": "the object has been modified"}'))
    assert isinstance(error, ConflictError) and isinstance(error, ApiError)
    assert (error.status, str(error)) == (409, "patching node a: HTTP 409 Conflict: the object has been modified")


def test_not_found_and_the_server_of_a_client():
    assert is_not_found(ClientError(404)) and not is_not_found(ClientError(403)) and not is_not_found(OSError())

    class Configuration(object):
        host = "https://api.example.com:6443"

    class Client(object):
        configuration = Configuration()

    assert server_of(Client()) == "https://api.example.com:6443"
    assert server_of(object()) is None
