# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Trying a read again while the API server does not answer, and the errors the client raises then."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.kubernetes_api import KubernetesJobApi
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.mpijob import MPIJOB
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import ApiError
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.retry import call_with_retries, delays, is_transient

SERVER = "https://10.0.0.1:6443"
REFUSED = ApiError("reading MPIJob ml/bench on {0}: connection refused".format(SERVER), server=SERVER)


def failing(errors, answer="the job"):
    """A call that raises each of `errors` in turn, then answers; `calls` counts the calls."""
    errors = list(errors)

    def call():
        call.calls += 1
        if errors:
            raise errors.pop(0)
        return answer
    call.calls = 0
    return call


@pytest.mark.parametrize("status, transient", [(None, True), (429, True), (500, True), (502, True), (503, True),
                                               (504, True), (400, False), (401, False), (403, False),
                                               (404, False), (409, False), (422, False)])
def test_no_answer_429_and_5xx_may_pass_any_other_answer_is_final(status, transient):
    assert is_transient(ApiError("x", status=status)) is transient


def test_the_delays_double_up_to_four_seconds_about_thirty_seconds_for_ten_retries():
    assert delays(10) == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]
    assert sum(delays(10)) == 31.5
    assert delays(0) == []


@pytest.mark.parametrize("error", [REFUSED, ApiError("HTTP 429 Too Many Requests", status=429, server=SERVER),
                                   ApiError("HTTP 503 Service Unavailable", status=503, server=SERVER)])
def test_a_read_that_fails_then_answers_returns_the_answer(error):
    slept = []
    call = failing([error] * 3)
    assert call_with_retries(call, 10, "waiting for MPIJob ml/bench", sleep=slept.append) == "the job"
    assert (call.calls, slept) == (4, [0.5, 1.0, 2.0])


def test_past_the_retries_the_error_names_the_server_the_attempts_and_the_last_error():
    slept = []
    last = ApiError("reading MPIJob ml/bench on {0}: HTTP 503 Service Unavailable: the server is shutting down".format(
        SERVER), status=503, server=SERVER)
    call = failing([REFUSED] * 3 + [last, "never reached"])
    with pytest.raises(ApiError) as raised:
        call_with_retries(call, 3, "waiting for MPIJob ml/bench", sleep=slept.append)
    assert str(raised.value) == (
        "the API server https://10.0.0.1:6443 stayed unavailable while waiting for MPIJob ml/bench (4 attempt(s) "
        "over 3.5 s); the last error: reading MPIJob ml/bench on https://10.0.0.1:6443: HTTP 503 Service "
        "Unavailable: the server is shutting down")
    assert (raised.value.status, raised.value.server) == (503, SERVER)
    assert (call.calls, slept) == (4, [0.5, 1.0, 2.0])


def test_a_403_is_not_tried_again():
    forbidden = ApiError("reading MPIJob ml/bench on {0}: HTTP 403 Forbidden: mpijobs is forbidden".format(SERVER),
                         status=403, server=SERVER)
    slept = []
    call = failing([forbidden])
    with pytest.raises(ApiError) as raised:
        call_with_retries(call, 10, "waiting for MPIJob ml/bench", sleep=slept.append)
    assert raised.value is forbidden
    assert (call.calls, slept) == (1, [])


def test_without_retries_the_first_error_ends_it_naming_the_server_once_known():
    unnamed = ApiError("reading MPIJob ml/bench: connection refused")
    with pytest.raises(ApiError) as raised:
        call_with_retries(failing([unnamed]), 0, "waiting for MPIJob ml/bench", sleep=None)
    assert str(raised.value) == ("the API server stayed unavailable while waiting for MPIJob ml/bench (1 attempt(s) "
                                 "over 0.0 s); the last error: reading MPIJob ml/bench: connection refused")


def job_api(request_timeout):
    from kubernetes import client

    return KubernetesJobApi(client.ApiClient(client.Configuration(host=SERVER)), MPIJOB,
                            request_timeout=request_timeout)


def test_the_clients_errors_become_api_errors_naming_the_server_that_a_wait_tries_again():
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError

    api = job_api(30)
    unavailable = ApiException(status=503, reason="Service Unavailable")
    unavailable.body = '{"kind": "Status", "message": "the server is shutting down"}'
    raised = [MaxRetryError(None, "/apis/kubeflow.org/v2beta1/namespaces/ml/mpijobs/bench",
                            NewConnectionError(None, "Failed to establish a new connection: [Errno 111] "
                                                     "Connection refused")),
              ProtocolError("Connection aborted.", ConnectionResetError(104, "Connection reset by peer")),
              unavailable, ApiException(status=403, reason="Forbidden")]
    timeouts = []

    def get(*args, **kwargs):
        timeouts.append(kwargs["_request_timeout"])
        raise raised.pop(0)
    api._custom.get_namespaced_custom_object = get

    errors = []
    while raised:
        with pytest.raises(ApiError) as caught:
            api.get("ml", "bench")
        errors.append(caught.value)
    assert [(e.status, e.server, is_transient(e)) for e in errors] == [
        (None, SERVER, True), (None, SERVER, True), (503, SERVER, True), (403, SERVER, False)]
    assert str(errors[0]).startswith("reading MPIJob ml/bench on https://10.0.0.1:6443: None: Max retries exceeded")
    assert str(errors[1]) == ("reading MPIJob ml/bench on https://10.0.0.1:6443: ('Connection aborted.', "
                              "ConnectionResetError(104, 'Connection reset by peer'))")
    assert str(errors[2]) == ("reading MPIJob ml/bench on https://10.0.0.1:6443: HTTP 503 Service Unavailable: "
                              "the server is shutting down")
    assert timeouts == [30] * 4


def test_every_call_has_a_request_timeout_even_when_none_is_given():
    api = job_api(None)
    seen = {}

    def list_pods(namespace, **kwargs):
        seen.update(kwargs)
        raise OSError("connection refused")
    api._core.list_namespaced_pod = list_pods
    with pytest.raises(ApiError):
        api.list_pods("ml", "bench")
    assert seen["_request_timeout"] == 60
