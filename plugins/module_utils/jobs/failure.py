# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The parts of a failure predicate that every job kind shares.

A kind's failure predicate (JobKind.failure) takes an Observation and says why the job cannot
succeed any more, or None while it still can. It is built from these checks plus the kind's own
(for an MPIJob: a failed worker means mpirun lost a rank). The waiter asks it before the success
predicate, so a failed job ends the wait at once instead of at the timeout.

Besides the job's own verdict, pods can tell that it will not get anywhere: a container waiting for
an image that cannot be pulled or a container the runtime cannot create (`containers_cannot_start`),
or a pod no node can take (`unschedulable_pods`). The second is the wait's, not the kind's: a site
whose cluster autoscaler adds nodes for such pods turns it off (`wait_failure`).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.status import (
    pod_phase,
    pod_summary,
    unscheduled_condition,
    waiting_containers,
)

# Waiting reasons after which the kubelet will not start the container without a change to the pod, the
# image or the registry: the image cannot be had, or the runtime cannot create the container from the spec.
CANNOT_START_REASONS = ("ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName",
                        "CreateContainerConfigError", "CreateContainerError")
# How many pods a reason names before it only counts the others (every one is in the task result).
NAMED_PODS = 5
UNSCHEDULABLE_HINT = ("set fail_on_unschedulable=false to wait for capacity instead, e.g. from a cluster "
                      "autoscaler")


def gone_or_failed(kind_name, observation):
    """The job was deleted, or it has the condition Failed."""
    if observation.job is None:
        return "the {0} was deleted while waiting for it".format(kind_name)
    status = observation.status
    if status["phase"] == "Failed":
        # The MPI Operator appends the launcher pod's own reason after "/" and ": ", empty when it has none.
        reason = (status["reason"] or "").rstrip("/") or "Failed"
        message = (status["message"] or "").rstrip(": ")
        return "the {0} failed: {1}: {2}".format(kind_name, reason, message)
    return None


def failed_pods(kind, observation, role):
    """The pods of `role` (e.g. worker) that are in phase Failed."""
    return [pod for pod in observation.pods if kind.pod_role(pod) == role and pod_phase(pod) == "Failed"]


def failed_pods_text(pods, role_label):
    """'name: container c exit code 137 (OOMKilled)' for each pod, joined by '; '."""
    parts = []
    for pod in pods:
        summary = pod_summary(pod, role_label)
        detail = ", ".join("container {0} exit code {1} ({2})".format(c["name"], c["exit_code"], c["reason"])
                           for c in summary.get("terminated_containers", []))
        parts.append("{0}{1}".format(summary["name"], ": " + detail if detail else ""))
    return "; ".join(parts)


def rejected_by_operator(observation, operator, kind_name):
    """The operator refused the job: a ValidationError event while the job has no condition yet.
    It will never act on such a job, so waiting for it is pointless."""
    if observation.status["conditions"]:
        return None
    for event in observation.warnings:
        if event.get("reason") == "ValidationError":
            return "{0} rejected the {1}: {2}".format(operator, kind_name, event.get("message"))
    return None


def operator_failure(observation, kind_name, operator, lost_pods):
    """The failure predicate of a job that an operator runs: the job is gone or Failed; or `lost_pods`
    (observation -> the kind's own reason, e.g. a failed worker that nothing replaces, or None); or a
    container cannot start; or the operator rejected the job."""
    reason = gone_or_failed(kind_name, observation)
    if reason or observation.status["phase"] == "Succeeded":
        return reason
    return (lost_pods(observation) or containers_cannot_start(observation)
            or rejected_by_operator(observation, operator, kind_name))


def _in_play(observation):
    """The pods that can still hold the job up: none once it is gone or has succeeded, and none on
    their way out."""
    if observation.job is None or observation.status["phase"] == "Succeeded":
        return []
    return [pod for pod in observation.pods if not (pod.get("metadata") or {}).get("deletionTimestamp")]


def cannot_start(pod):
    """The pod's waiting containers (as pod_summary lists them) whose reason says they will not start."""
    if pod_phase(pod) in ("Succeeded", "Failed"):
        return []
    return [c for c in waiting_containers(pod) if c["reason"] in CANNOT_START_REASONS]


def unschedulable(pod):
    """The scheduler's message for a Pending pod that no node can take (reason Unschedulable), or None."""
    condition = unscheduled_condition(pod)
    if pod_phase(pod) != "Pending" or not condition or condition.get("reason") != "Unschedulable":
        return None
    return condition.get("message") or condition.get("reason")


def _name(pod):
    return (pod.get("metadata") or {}).get("name")


def _pod_names(names):
    shown = ", ".join(names[:NAMED_PODS])
    more = " and {0} more".format(len(names) - NAMED_PODS) if len(names) > NAMED_PODS else ""
    return "{0} {1}{2}".format("pod" if len(names) == 1 else "pods", shown, more)


def _by_cause(causes):
    """[(pod name, cause)] as 'pod a: cause; pods b, c: other cause', pods with the same cause together."""
    order, pods = [], {}
    for name, cause in causes:
        if cause not in pods:
            order.append(cause)
            pods[cause] = []
        pods[cause].append(name)
    return "; ".join("{0}: {1}".format(_pod_names(pods[cause]), cause) for cause in order)


def _waiting_text(container):
    return "container {0} (image {1}): {2}{3}".format(container["name"], container["image"], container["reason"],
                                                      ": " + container["message"] if container["message"] else "")


def containers_cannot_start(observation):
    """A container of any pod (every role) waits for what will not come: an image that cannot be
    pulled, or a container the runtime cannot create. The kubelet would retry until the timeout."""
    causes = [(_name(pod), _waiting_text(container))
              for pod in _in_play(observation) for container in cannot_start(pod)]
    if not causes:
        return None
    return "container(s) cannot start: {0}".format(_by_cause(causes))


def unschedulable_pods(observation):
    """A Pending pod that the scheduler found no node for, with the scheduler's message."""
    causes = [(name, message) for name, message in ((_name(pod), unschedulable(pod)) for pod in _in_play(observation))
              if message]
    if not causes:
        return None
    return "pod(s) cannot be scheduled: {0} ({1})".format(_by_cause(causes), UNSCHEDULABLE_HINT)


def wait_failure(kind, fail_on_unschedulable=True):
    """The failure predicate of one wait: the kind's, then, unless the site waits for capacity
    (fail_on_unschedulable=False), pods that no node can take."""
    def failure(observation):
        reason = kind.failure(observation)
        if reason or not fail_on_unschedulable:
            return reason
        return unschedulable_pods(observation)
    return failure


def concerned(pod):
    """Whether the pod belongs in a failure's report: it failed, cannot start a container, or has no node."""
    return pod_phase(pod) == "Failed" or bool(cannot_start(pod)) or unschedulable(pod) is not None
