# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The errors of a job's lifecycle, shared by every job kind. A failed API call is a k8s.errors.ApiError."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import KubernetesError


class InvalidArgumentError(KubernetesError):
    """Bad input, found before any API call. `problems` lists every one, each naming its argument."""

    def __init__(self, problems, kind="job"):
        self.problems = list(problems)
        super(InvalidArgumentError, self).__init__(
            "invalid {0} arguments ({1} problem(s)): {2}".format(kind, len(self.problems), "; ".join(self.problems)),
            problems=self.problems)


class SpecConflictError(KubernetesError):
    """The job exists with another spec and force is off."""


class JobFailedError(KubernetesError):
    """The wait saw the job fail; `details` holds the whole result (reason, pods, events, log)."""


class WaitTimeoutError(KubernetesError):
    """The wait ran out of time; `details` holds what was last seen."""
