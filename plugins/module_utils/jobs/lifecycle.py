# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Create, wait for and delete a job of any kind: the flow every launcher module shares.

compare with the live job -> create / replace (under force) / leave -> wait with the success
predicate the caller names and the kind's failure predicate, which ends the wait as soon as the job
cannot succeed any more (and, unless the site waits for capacity, as soon as a pod cannot be scheduled).

While it waits, a look at the cluster that finds the API server unavailable (a restart, an upgrade) is
tried again with a bounded backoff (k8s.retry): the wait goes on when the server answers again, and
only what it saw decides the outcome.

The cluster is reached through an object with the methods of jobs.kubernetes_api.KubernetesJobApi
(get, create, delete, list_pods, list_events, read_pod_log); tests pass a fake one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time
from collections import namedtuple

from ansible_collections.gpuops.cluster.plugins.module_utils.common.wait import FAILED, TIMED_OUT, wait_for
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.applied_spec import spec_differences, with_applied_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.errors import (
    JobFailedError,
    SpecConflictError,
    WaitTimeoutError,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.failure import wait_failure
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.logs import failure_details, replica_logs, result_log
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.status import (
    WAIT_PREDICATES,
    Observation,
    conditions,
    pod_summary,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import ApiError
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.retry import RETRIES_DEFAULT, call_with_retries


_SETTINGS = ("check_mode", "force", "wait", "wait_for", "wait_timeout", "wait_sleep", "log_lines",
             "fail_on_unschedulable", "api_retries", "ticks_factory", "now", "sleep")


class Settings(namedtuple("Settings", _SETTINGS, defaults=(False, False, False, "Succeeded", 600, 1.0, 1000,
                                                           True, RETRIES_DEFAULT, None, time.time, time.sleep))):
    """The module's options that steer the lifecycle (anything missing takes its default).

    `ticks_factory` is for tests, which hand in a fake clock: a callable returning the ticks of one
    wait. `now` gives the time an observation is stamped with; `sleep` waits between two tries of a
    look the API server did not answer.
    """

    __slots__ = ()

    def ticks(self):
        return self.ticks_factory() if self.ticks_factory else None


def observe(kind, api, namespace, name, now=time.time):
    """One look at the job and its pods (and, before it has a condition, the warnings about it)."""
    job = api.get(namespace, name)
    if job is None:
        return Observation(None, at=now())
    pods = api.list_pods(namespace, name)
    warnings = []
    if not conditions(job):
        warnings = [e for e in api.list_events(namespace, kind.kind, name) if e.get("type") == "Warning"]
    return Observation(job, pods, warnings, at=now())


def _retried(settings, what, read):
    """`read` as a wait calls it: tried again while the API server does not answer (see k8s.retry)."""
    return lambda: call_with_retries(read, settings.api_retries, what, sleep=settings.sleep)


def _waiting(kind, namespace, name):
    return "waiting for {0} {1}/{2}".format(kind.kind, namespace, name)


def _wait_gone(kind, api, namespace, name, settings):
    look = _retried(settings, _waiting(kind, namespace, name) + " to be gone", lambda: api.get(namespace, name))
    return wait_for(look, lambda job: job is None,
                    timeout=settings.wait_timeout, interval=settings.wait_sleep, ticks=settings.ticks())


def _status_fields(kind, observation):
    status = observation.status
    return {"phase": status["phase"], "conditions": status["conditions"],
            "replica_statuses": status["replica_statuses"], "start_time": status["start_time"],
            "completion_time": status["completion_time"],
            "pods": [pod_summary(pod, kind.role_label) for pod in observation.pods]}


def _log_fields(kind, log):
    prefix = kind.log_role + "_log"
    return {prefix: log["text"] or "", prefix + "_source": log["source"], prefix + "_pod": log["pod"],
            prefix + "_error": log["error"]}


def _is_terminating(job):
    return job is not None and bool((job.get("metadata") or {}).get("deletionTimestamp"))


def plan_present(kind, body, live, force):
    """What ensure_present will do with `live` (the job as read, or None): the start of its result.

    A job on its way out counts as absent. Raises SpecConflictError for a different spec without force.
    """
    namespace, name = body["metadata"]["namespace"], body["metadata"]["name"]
    current = live is not None and not _is_terminating(live)
    differences = spec_differences(body, live) if current else []
    if not current:
        method = "created"
    elif differences:
        if not force:
            raise SpecConflictError(
                "{0} {1}/{2} exists with a different spec ({3}). {0} specs are mostly immutable: set "
                "force=true to delete and recreate it, or use another name.".format(
                    kind.kind, namespace, name, "; ".join(differences[:10])),
                differences=differences)
        method = "replaced"
    else:
        method = "unchanged"
    return {"changed": method != "unchanged", "method": method, "spec": body["spec"], "differences": differences,
            "diff": {"before": {"spec": live.get("spec")} if current else {}, "after": {"spec": body["spec"]}}}


def ensure_present(kind, api, body, settings):
    """Create the job (or replace it under force), then wait when asked. Returns the result dict;
    raises SpecConflictError, JobFailedError, WaitTimeoutError or k8s.errors.ApiError."""
    namespace, name = body["metadata"]["namespace"], body["metadata"]["name"]
    live = api.get(namespace, name)
    result = plan_present(kind, body, live, settings.force)
    method = result["method"]
    if settings.check_mode:
        result[kind.result_key] = live if method == "unchanged" else body
        if method == "unchanged":
            result.update(_status_fields(kind, Observation(live)))
        return result

    if method != "unchanged" and live is not None:
        if method == "replaced":
            api.delete(namespace, name)
        if not _wait_gone(kind, api, namespace, name, settings).succeeded:
            raise WaitTimeoutError("{0} {1}/{2} was still being deleted after {3} s; it cannot be created "
                                   "again until it is gone".format(kind.kind, namespace, name, settings.wait_timeout),
                                   **result)
    if method != "unchanged":
        live = api.create(namespace, with_applied_spec(body))

    if not settings.wait:
        result[kind.result_key] = live
        result.update(_status_fields(kind, Observation(live)))
        return result
    return _wait_and_report(kind, api, namespace, name, settings, result)


def _pods_text(pods):
    return ", ".join("{0}={1}{2}".format(p["name"], p["phase"],
                                         " ({0})".format(p["unschedulable"]) if p.get("unschedulable") else "")
                     for p in pods) or "no pods"


def _wait_and_report(kind, api, namespace, name, settings, result):
    what = _waiting(kind, namespace, name)
    look = _retried(settings, what, lambda: observe(kind, api, namespace, name, settings.now))
    try:
        outcome = wait_for(look, WAIT_PREDICATES[settings.wait_for],
                           wait_failure(kind, settings.fail_on_unschedulable),
                           timeout=settings.wait_timeout, interval=settings.wait_sleep, ticks=settings.ticks())
    except ApiError as error:
        # The job may have been created: the result says so beside the error.
        raise ApiError(str(error), status=error.status, server=error.server, **result)
    observation = outcome.observation
    result[kind.result_key] = observation.job
    result["elapsed"] = round(outcome.elapsed, 3)
    result.update(_status_fields(kind, observation))
    log = result_log(kind, api, namespace, observation.pods, settings.log_lines)
    result.update(_log_fields(kind, log))
    if kind.replica_logs:
        result["replica_logs"] = replica_logs(kind, api, namespace, observation.pods, settings.log_lines)
    if outcome.outcome == FAILED:
        result["reason"] = outcome.reason
        result["detected_at"] = observation.at
        result.update(_retried(settings, what, lambda: failure_details(kind, api, namespace, name, observation))())
        raise JobFailedError("{0} {1}/{2} FAILED after {3:.1f} s: {4}".format(
            kind.kind, namespace, name, outcome.elapsed, outcome.reason), **result)
    if outcome.outcome == TIMED_OUT:
        raise WaitTimeoutError("timed out after {0} s waiting for {1} {2}/{3} to be {4}; it is {5} "
                               "(pods: {6})".format(settings.wait_timeout, kind.kind, namespace, name, settings.wait_for,
                                                    result["phase"], _pods_text(result["pods"])), **result)
    return result


def ensure_absent(kind, api, namespace, name, settings):
    """Delete the job with foreground propagation (its pods go first); wait until it is gone when asked."""
    live = api.get(namespace, name)
    result = {"changed": live is not None, "method": "deleted" if live is not None else "absent",
              "diff": {"before": {"spec": live.get("spec")} if live is not None else {}, "after": {}}}
    if live is None or settings.check_mode:
        return result
    if not _is_terminating(live):
        api.delete(namespace, name)
    if settings.wait:
        gone = _wait_gone(kind, api, namespace, name, settings)
        result["elapsed"] = round(gone.elapsed, 3)
        if not gone.succeeded:
            raise WaitTimeoutError("{0} {1}/{2} was not gone {3} s after its deletion (foreground: its pods "
                                   "are deleted first)".format(kind.kind, namespace, name, settings.wait_timeout),
                                   **result)
    return result
