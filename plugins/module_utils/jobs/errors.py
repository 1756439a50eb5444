# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The errors of a job's lifecycle, shared by every job kind. A failed API call is a k8s.errors.ApiError."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import InvalidInputError, KubernetesError


class InvalidArgumentError(InvalidInputError):
    """Bad module arguments for a job of `kind`; each problem names its argument."""

    def __init__(self, problems, kind="job"):
        super(InvalidArgumentError, self).__init__(kind + " arguments", problems)


class SpecConflictError(KubernetesError):
    """The job exists with another spec and force is off."""


class JobFailedError(KubernetesError):
    """The wait saw the job fail; `details` holds the whole result (reason, pods, events, log)."""


class WaitTimeoutError(KubernetesError):
    """The wait ran out of time; `details` holds what was last seen."""
