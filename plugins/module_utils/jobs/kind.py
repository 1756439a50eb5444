# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What the shared job lifecycle needs to know about one kind of job (MPIJob, TFJob, PyTorchJob...)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# Labels the Kubeflow operators (the MPI Operator v2 and the Training Operator) put on a job's pods.
KUBEFLOW_JOB_NAME_LABEL = "training.kubeflow.org/job-name"
KUBEFLOW_JOB_ROLE_LABEL = "training.kubeflow.org/job-role"


class JobKind(object):
    """One kind of job: its API coordinates, how its pods are found, whose log tells the result,
    and its failure predicate (observation -> why the job cannot succeed any more, or None)."""

    def __init__(self, kind, group, version, plural, failure, log_role,
                 name_label=KUBEFLOW_JOB_NAME_LABEL, role_label=KUBEFLOW_JOB_ROLE_LABEL):
        self.kind = kind
        self.group = group
        self.version = version
        self.plural = plural
        self.failure = failure
        self.log_role = log_role
        self.name_label = name_label
        self.role_label = role_label

    @property
    def api_version(self):
        return "{0}/{1}".format(self.group, self.version)

    @property
    def result_key(self):
        """The key of a module's result that holds the job object, e.g. mpijob."""
        return self.kind.lower()

    def pod_role(self, pod):
        return ((pod.get("metadata") or {}).get("labels") or {}).get(self.role_label, "")

    def __repr__(self):
        return "JobKind({0})".format(self.api_version + "/" + self.kind)
