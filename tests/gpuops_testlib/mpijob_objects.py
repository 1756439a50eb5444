# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MPIJob ml/bench and its pods as the API server returns them, for the unit tests of the job status reader,
the failure predicates and the waiter."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def condition(kind, status="True", reason=None, message=None, at="2025-06-01T10:00:00Z"):
    found = {"type": kind, "status": status, "lastTransitionTime": at, "lastUpdateTime": at}
    if reason:
        found["reason"] = reason
    if message:
        found["message"] = message
    return found


def job(*conditions, **status):
    body = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "bench", "namespace": "ml"},
            "spec": {}}
    if conditions or status:
        body["status"] = dict(status, conditions=list(conditions))
    return body


CREATED = condition("Created", reason="MPIJobCreated", message="MPIJob ml/bench is created.")
RUNNING = condition("Running", reason="MPIJobRunning", message="MPIJob ml/bench is running.")


def pod(name, role, phase, exit_code=None, reason=None):
    status = {"phase": phase}
    if exit_code is not None:
        status["containerStatuses"] = [{"name": role, "state": {"terminated": {
            "exitCode": exit_code, "reason": reason, "finishedAt": "2025-06-01T10:05:00Z"}}}]
    return {"metadata": {"name": name, "labels": {"training.kubeflow.org/job-role": role},
                         "creationTimestamp": "2025-06-01T10:00:00Z"},
            "spec": {"nodeName": "dgx-01"}, "status": status}
