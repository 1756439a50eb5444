# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The parts of a failure predicate that every job kind shares.

A kind's failure predicate (JobKind.failure) takes an Observation and says why the job cannot
succeed any more, or None while it still can. It is built from these checks plus the kind's own
(for an MPIJob: a failed worker means mpirun lost a rank). The waiter asks it before the success
predicate, so a failed job ends the wait at once instead of at the timeout.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.status import pod_phase, pod_summary


def gone_or_failed(kind_name, observation):
    """The job was deleted, or it has the condition Failed."""
    if observation.job is None:
        return "the {0} was deleted while waiting for it".format(kind_name)
    status = observation.status
    if status["phase"] == "Failed":
        return "the {0} failed: {1}: {2}".format(kind_name, status["reason"] or "Failed", status["message"] or "")
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
