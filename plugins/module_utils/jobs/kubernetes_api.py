# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The calls the job lifecycle makes, over a kubernetes.client.ApiClient, for any custom-resource job kind.

Objects come back as plain dicts. Every failure is a k8s.errors.ApiError naming the call and the
API server; "not found" is an answer (None) where the lifecycle expects it. Every call has a request
timeout, so that an API server that stops answering mid-request cannot hold a wait forever.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import api_error, is_not_found, server_of
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.options import REQUEST_TIMEOUT_DEFAULT


class KubernetesJobApi(object):
    """get/create/delete of one job kind's objects, and the pods, events and logs around them."""

    def __init__(self, api_client, kind, request_timeout=REQUEST_TIMEOUT_DEFAULT):
        from kubernetes import client  # imported here: module_utils must load without it for sanity tests

        self._api_client = api_client
        self._kind = kind
        self._custom = client.CustomObjectsApi(api_client)
        self._core = client.CoreV1Api(api_client)
        self._delete_options = client.V1DeleteOptions(propagation_policy="Foreground")
        self._timeout = request_timeout or REQUEST_TIMEOUT_DEFAULT
        self._server = server_of(api_client)

    def _plain(self, obj):
        return self._api_client.sanitize_for_serialization(obj)

    def _error(self, what, error):
        return api_error(what, error, self._server)

    def _job(self, namespace, name):
        return "{0} {1}/{2}".format(self._kind.kind, namespace, name)

    def _coordinates(self):
        return self._kind.group, self._kind.version

    def get(self, namespace, name):
        group, version = self._coordinates()
        try:
            return self._custom.get_namespaced_custom_object(group, version, namespace, self._kind.plural, name,
                                                             _request_timeout=self._timeout)
        except Exception as error:  # ApiException, or a connection error from urllib3
            if is_not_found(error):
                return None
            raise self._error("reading " + self._job(namespace, name), error)

    def create(self, namespace, body):
        group, version = self._coordinates()
        try:
            return self._custom.create_namespaced_custom_object(group, version, namespace, self._kind.plural, body,
                                                                _request_timeout=self._timeout)
        except Exception as error:
            raise self._error("creating " + self._job(namespace, body["metadata"]["name"]), error)

    def delete(self, namespace, name):
        group, version = self._coordinates()
        try:
            self._custom.delete_namespaced_custom_object(group, version, namespace, self._kind.plural, name,
                                                         body=self._delete_options, _request_timeout=self._timeout)
        except Exception as error:
            if is_not_found(error):
                return
            raise self._error("deleting " + self._job(namespace, name), error)

    def list_pods(self, namespace, job_name):
        selector = "{0}={1}".format(self._kind.name_label, job_name)
        try:
            pods = self._core.list_namespaced_pod(namespace, label_selector=selector, _request_timeout=self._timeout)
        except Exception as error:
            raise self._error("listing the pods of " + self._job(namespace, job_name), error)
        return [self._plain(pod) for pod in pods.items]

    def list_events(self, namespace, kind, name):
        selector = "involvedObject.kind={0},involvedObject.name={1}".format(kind, name)
        try:
            events = self._core.list_namespaced_event(namespace, field_selector=selector, _request_timeout=self._timeout)
        except Exception as error:
            raise self._error("listing the events of {0} {1}/{2}".format(kind, namespace, name), error)
        return sorted((self._plain(event) for event in events.items),
                      key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")

    def read_pod_log(self, namespace, name, tail_lines):
        kwargs = {"_request_timeout": self._timeout}
        if tail_lines:
            kwargs["tail_lines"] = tail_lines
        try:
            return self._core.read_namespaced_pod_log(name, namespace, **kwargs)
        except Exception as error:
            raise self._error("reading the log of pod {0}/{1}".format(namespace, name), error)
