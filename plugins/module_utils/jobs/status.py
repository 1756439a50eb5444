# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Reading a job's status: its conditions, its pods, and one look at both (the Observation).

The conditions are the Kubeflow operators' common ones (Created, Running, Restarting, Succeeded,
Failed, Suspended), which MPIJob, TFJob and PyTorchJob all report. A batch Job says Complete for
Succeeded and has no Running condition: it runs once all its parallel pods are ready.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.kind import KUBEFLOW_JOB_ROLE_LABEL

# The most decisive condition first: a job that has Failed and was Running is Failed.
PHASE_ORDER = ("Failed", "Succeeded", "Suspended", "Restarting", "Running", "Created")
# Each phase's condition types: a batch Job's Complete is a Kubeflow job's Succeeded.
PHASE_CONDITIONS = {"Succeeded": ("Succeeded", "Complete")}


def conditions(job):
    return list(((job or {}).get("status") or {}).get("conditions") or [])


def true_condition(job, condition_type):
    for condition in conditions(job):
        if condition.get("type") == condition_type and condition.get("status") == "True":
            return condition
    return None


def _parallelism(job):
    return ((job or {}).get("spec") or {}).get("parallelism") or 1


def job_status(job):
    """A summary of a job's status: phase (the most decisive true condition, or Pending when
    there is none), its reason and message, the conditions and the replica statuses."""
    phase, reason, message = "Pending", None, None
    status = (job or {}).get("status") or {}
    for candidate in PHASE_ORDER:
        condition = next(filter(None, (true_condition(job, condition_type)
                                       for condition_type in PHASE_CONDITIONS.get(candidate, (candidate,)))), None)
        if condition:
            phase, reason, message = candidate, condition.get("reason"), condition.get("message")
            break
    else:
        if status.get("active") and (status.get("ready") or 0) >= _parallelism(job):
            phase = "Running"
    return {
        "phase": phase,
        "reason": reason,
        "message": message,
        "conditions": conditions(job),
        "replica_statuses": status.get("replicaStatuses") or {},
        "start_time": status.get("startTime"),
        "completion_time": status.get("completionTime"),
    }


def pod_phase(pod):
    return (pod.get("status") or {}).get("phase")


def waiting_containers(pod):
    """The pod's containers (init containers first) that wait to start, with their image and the
    kubelet's reason and message (ContainerCreating, ErrImagePull, CreateContainerConfigError...)."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    declared = (spec.get("initContainers") or []) + (spec.get("containers") or [])
    images = dict((c.get("name"), c.get("image")) for c in declared)
    waiting = []
    for container in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        state = (container.get("state") or {}).get("waiting")
        if state:
            name = container.get("name")
            waiting.append({"name": name, "image": container.get("image") or images.get(name),
                            "reason": state.get("reason"), "message": state.get("message")})
    return waiting


def unscheduled_condition(pod):
    """The pod's PodScheduled condition while it is False (the scheduler has not placed it), or None."""
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return condition
    return None


def pod_summary(pod, role_label=KUBEFLOW_JOB_ROLE_LABEL):
    """Name, role, phase, node, the terminated and the waiting containers, and why the pod has no node."""
    metadata = pod.get("metadata") or {}
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    containers = []
    for container in status.get("containerStatuses") or []:
        terminated = (container.get("state") or {}).get("terminated")
        if terminated:
            containers.append({"name": container.get("name"), "exit_code": terminated.get("exitCode"),
                               "reason": terminated.get("reason"), "message": terminated.get("message"),
                               "finished_at": terminated.get("finishedAt")})
    summary = {"name": metadata.get("name"), "role": (metadata.get("labels") or {}).get(role_label, ""),
               "phase": status.get("phase"), "node": spec.get("nodeName"), "reason": status.get("reason"),
               "message": status.get("message")}
    if containers:
        summary["terminated_containers"] = containers
    waiting = waiting_containers(pod)
    if waiting:
        summary["waiting_containers"] = waiting
    unscheduled = unscheduled_condition(pod)
    if unscheduled:
        # The scheduler's own words on why the pod has no node, e.g. "Insufficient nvidia.com/gpu".
        summary["unschedulable"] = unscheduled.get("message") or unscheduled.get("reason")
    return summary


class Observation(object):
    """One look at a job: the job object (None once gone), its pods, and, while it has no condition
    yet, the operator's warning events about it; `at` is when the look was taken."""

    __slots__ = ("job", "pods", "warnings", "at")

    def __init__(self, job, pods=(), warnings=(), at=None):
        self.job = job
        self.pods = list(pods)
        self.warnings = list(warnings)
        self.at = at

    @property
    def status(self):
        return job_status(self.job)


def _succeeded(observation):
    return observation.job is not None and observation.status["phase"] == "Succeeded"


def _running(observation):
    return observation.job is not None and observation.status["phase"] in ("Running", "Succeeded")


# What a module's `wait_for` may name: the success predicate of each. The failure predicate is the job kind's.
WAIT_PREDICATES = {
    "Succeeded": _succeeded,
    "Running": _running,
}
