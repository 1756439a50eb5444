# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The errors of the slurm package: each message is meant for a person, and `details` holds what the task result
carries besides it (the job id, its state, the output's tail)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class SlurmError(Exception):
    """Base of the errors the slurm_job module reports with fail_json."""

    def __init__(self, message, **details):
        super(SlurmError, self).__init__(message)
        self.details = details


class InvalidOptionsError(SlurmError):
    """Options that cannot make a job, found before anything is written or submitted; one line per problem."""

    def __init__(self, problems):
        self.problems = list(problems)
        super(InvalidOptionsError, self).__init__(
            "invalid Slurm job options ({0} problem(s)): {1}".format(len(self.problems), "; ".join(self.problems)),
            problems=self.problems)


class CommandError(SlurmError):
    """A Slurm command could not answer (no controller, munge, a missing tool)."""


class SubmissionError(SlurmError):
    """sbatch refused the job."""


class JobFailedError(SlurmError):
    """The job (or one of its steps) failed, or it waits for something Slurm will never give it."""


class WaitTimeoutError(SlurmError):
    """The job did not finish within the wait."""
