# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in for the kubernetes client's ApiClient that records each call_api and answers or raises as told, and the
ApiException the client raises for an HTTP error, for the unit tests of the API adapters."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class RecordingApiClient(object):
    def __init__(self, answer=None, error=None):
        self.answer = answer
        self.error = error
        self.calls = []

    def call_api(self, path, method, **kwargs):
        self.calls.append((path, method, kwargs))
        if self.error is not None:
            raise self.error
        return self.answer


def api_exception(status, reason, message):
    from kubernetes.client.exceptions import ApiException

    error = ApiException(status=status, reason=reason)
    error.body = '{"kind": "Status", "message": "%s"}' % message
    return error
