# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What a job leaves to read: the log of the pod that reports the result (an MPIJob's launcher), the
logs of every replica where the kind asks for them, and the events of the pods concerned by a failure
and of the job itself."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.failure import concerned
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.status import pod_phase, pod_summary
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import ApiError


def _created(pod):
    return (pod.get("metadata") or {}).get("creationTimestamp") or ""


def _started(pod):
    if pod_phase(pod) in ("Running", "Succeeded", "Failed"):
        return True
    return any((c.get("state") or {}).get("running") or (c.get("state") or {}).get("terminated")
               for c in (pod.get("status") or {}).get("containerStatuses") or [])


def _pod_log(api, namespace, pod, tail_lines, role):
    """(text, None) with the last `tail_lines` of the pod's log, or (None, why it could not be read)."""
    name = pod["metadata"]["name"]
    if not _started(pod):
        return None, "{0} pod {1} has not started (phase {2})".format(role, name, pod_phase(pod))
    try:
        return api.read_pod_log(namespace, name, tail_lines), None
    except ApiError as error:
        return None, "the API could not serve the log of {0} pod {1}: {2}".format(role, name, error)


def result_log(kind, api, namespace, pods, tail_lines):
    """The log of the newest pod that tells the result (an MPIJob's launcher, see JobKind.is_log_pod),
    through the API.

    Returns a dict with `text` (or None), `source` (pod/<name>, or none), `pod` and `error` (why the
    pod's log could not be read).
    """
    role = kind.log_role
    candidates = sorted((pod for pod in pods if kind.is_log_pod(pod)), key=_created)
    result = {"text": None, "source": "none", "pod": None, "error": None}
    if not candidates:
        result["error"] = "no {0} pod exists (yet)".format(role)
        return result
    pod = candidates[-1]
    result["pod"] = pod["metadata"]["name"]
    result["text"], result["error"] = _pod_log(api, namespace, pod, tail_lines, role)
    if result["error"] is None:
        result["source"] = "pod/" + result["pod"]
    return result


def _replica_order(kind, pod):
    index = kind.pod_index(pod)
    return kind.pod_role(pod), index is None, index or 0, pod["metadata"]["name"]


def replica_logs(kind, api, namespace, pods, tail_lines):
    """The log of every pod that started, by role then index: each a dict with `pod`, `replica_type` (its
    role), `index`, `text` (or None) and `error` (why its log could not be read, or None)."""
    logs = []
    for pod in sorted((pod for pod in pods if _started(pod)), key=lambda pod: _replica_order(kind, pod)):
        role = kind.pod_role(pod)
        text, error = _pod_log(api, namespace, pod, tail_lines, role)
        logs.append({"pod": pod["metadata"]["name"], "replica_type": role, "index": kind.pod_index(pod),
                     "text": text, "error": error})
    return logs


def event_summary(event):
    return {"type": event.get("type"), "reason": event.get("reason"), "message": event.get("message"),
            "count": event.get("count"),
            "last_seen": event.get("lastTimestamp") or event.get("eventTime") or event.get("firstTimestamp")}


def failure_details(kind, api, namespace, name, observation):
    """The pods concerned (failed, a container that cannot start, no node; with their events) and the
    job's own events, for the failure report."""
    pods = []
    for pod in observation.pods:
        if not concerned(pod):
            continue
        summary = pod_summary(pod, kind.role_label)
        summary["events"] = [event_summary(e) for e in api.list_events(namespace, "Pod", summary["name"])]
        pods.append(summary)
    job_events = [event_summary(e) for e in api.list_events(namespace, kind.kind, name)]
    return {"failed_pods": pods, "events": job_events}
