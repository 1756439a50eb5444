# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The one error type of a failed Kubernetes API call, and its translation from the client's exceptions.

Every package of this collection that talks to the API server (jobs, node labels) raises these, so a
module turns any of them into one `fail_json` message that says what was being done, on which API
server, and what the server answered.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

# How much of a non-JSON error body is worth quoting: enough for a proxy's error page title.
BODY_QUOTE_LIMIT = 500


class KubernetesError(Exception):
    """Base of the errors reported to the user; the message is meant for a person.

    `details` holds what the task result should carry besides the message.
    """

    def __init__(self, message, **details):
        super(KubernetesError, self).__init__(message)
        self.details = details


class InvalidInputError(KubernetesError):
    """Bad input, found before any API call. `problems` lists every one, each naming where it is."""

    def __init__(self, subject, problems):
        self.problems = list(problems)
        super(InvalidInputError, self).__init__(
            "invalid {0} ({1} problem(s)): {2}".format(subject, len(self.problems), "; ".join(self.problems)),
            problems=self.problems)


class ApiError(KubernetesError):
    """An API call failed; `status` is the HTTP status, or None when no answer came back, and
    `server` the API server's address when known."""

    def __init__(self, message, status=None, server=None, **details):
        super(ApiError, self).__init__(message, status=status, **details)
        self.status = status
        self.server = server


class ConflictError(ApiError):
    """HTTP 409: the object changed since it was read (or already exists, for a create)."""

    def __init__(self, message, status=409, server=None, **details):
        super(ConflictError, self).__init__(message, status=status, server=server, **details)


def server_of(api_client):
    """The API server's address an ApiClient talks to, or None when it does not say."""
    return getattr(getattr(api_client, "configuration", None), "host", None) or None


def is_not_found(error):
    return getattr(error, "status", None) == 404


def _server_message(body):
    """The API server's Status message, not the whole HTTP dump that str(ApiException) gives."""
    if not body:
        return None
    try:
        message = json.loads(body).get("message")
    except (TypeError, ValueError, AttributeError):
        message = None
    return message or str(body)[:BODY_QUOTE_LIMIT]


def api_error(what, error, server=None):
    """The ApiError (ConflictError for HTTP 409) for `error`, raised by the client while doing `what`.

    `what` says what was being done, e.g. "listing nodes"; `server` is the API server's address,
    named in the message when known. An error without an HTTP status (connection refused, TLS,
    timeout) keeps the client's own words.
    """
    where = "{0} on {1}".format(what, server) if server else what
    status = getattr(error, "status", None)
    if not status:
        return ApiError("{0}: {1}".format(where, error), server=server)
    reason = getattr(error, "reason", "") or ""
    message = _server_message(getattr(error, "body", None))
    text = "{0}: HTTP {1} {2}{3}".format(where, status, reason, ": " + message if message else "")
    if status == 409:
        return ConflictError(text, server=server)
    return ApiError(text, status=status, server=server)
