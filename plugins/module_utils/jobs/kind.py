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

_FIELDS = ("kind", "group", "version", "plural", "failure", "log_role", "name_label", "role_label")


class JobKind(namedtuple("JobKind", _FIELDS, defaults=(KUBEFLOW_JOB_NAME_LABEL, KUBEFLOW_JOB_ROLE_LABEL))):
    """One kind of job: its API coordinates, how its pods are found (name_label, role_label), whose
    log tells the result (log_role), and its failure predicate (failure: observation -> why the job
    cannot succeed any more, or None)."""

    __slots__ = ()

    @property
    def api_version(self):
        return "{0}/{1}".format(self.group, self.version)

    @property
    def result_key(self):
        """The key of a module's result that holds the job object, e.g. mpijob."""
        return self.kind.lower()

    def pod_role(self, pod):
        return ((pod.get("metadata") or {}).get("labels") or {}).get(self.role_label, "")
