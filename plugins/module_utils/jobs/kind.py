# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What the shared job lifecycle needs to know about one kind of job (MPIJob, TFJob, PyTorchJob...)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

# Labels the Kubeflow operators (the MPI Operator v2 and the Training Operator) put on a job's pods.
KUBEFLOW_JOB_NAME_LABEL = "training.kubeflow.org/job-name"
KUBEFLOW_JOB_ROLE_LABEL = "training.kubeflow.org/job-role"
# Labels the Training Operator adds: the replica type in lowercase (chief, worker, ps...) and the replica's index.
KUBEFLOW_REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"
KUBEFLOW_REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"

_FIELDS = ("kind", "group", "version", "plural", "failure", "log_role", "name_label", "role_label", "log_label",
           "replica_logs", "index_label")


class JobKind(namedtuple("JobKind", _FIELDS, defaults=(KUBEFLOW_JOB_NAME_LABEL, KUBEFLOW_JOB_ROLE_LABEL, None, False,
                                                       KUBEFLOW_REPLICA_INDEX_LABEL))):
    """One kind of job: its API coordinates, how its pods are found (name_label) and what role each has
    (role_label), whose log tells the result (the pod whose log_label, the role_label unless given, has
    the value log_role; log_role also names the result's log keys), and its failure predicate (failure:
    observation -> why the job cannot succeed any more, or None).

    With replica_logs the result also holds the log of every pod that started, each named by its role
    and its index (the value of index_label)."""

    __slots__ = ()

    @property
    def api_version(self):
        return "{0}/{1}".format(self.group, self.version)

    @property
    def result_key(self):
        """The key of a module's result that holds the job object, e.g. mpijob."""
        return self.kind.lower()

    def pod_role(self, pod):
        return _label(pod, self.role_label)

    def is_log_pod(self, pod):
        """Whether the pod is one whose log tells the result (an MPIJob's launcher, a TFJob's master)."""
        return _label(pod, self.log_label or self.role_label) == self.log_role

    def pod_index(self, pod):
        """The pod's index among the pods of its role, or None when its label holds none."""
        index = _label(pod, self.index_label)
        return int(index) if index.isdigit() else None


def _label(pod, label):
    return ((pod.get("metadata") or {}).get("labels") or {}).get(label, "")
