# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Slurm commands a job needs, run through a `run(argv, cwd)` that returns (rc, stdout, stderr): the module's
run_command, or a stand-in in tests. Each asks the controller (or slurmdbd) once; the caller paces them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.slurm import state as slurm_state
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.errors import CommandError
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.sbatch import PARTITION_OPTIONS, job_id_of, submission_error

ACCOUNTING_DISABLED = "accounting storage is disabled"
SINFO_FORMAT = "%P|%a|%D|%c|%G|%f|%l"


def _said(out, err):
    return ((err or "").strip() or (out or "").strip())[-500:]


class SlurmCommands(object):
    """sbatch, squeue, sacct, scontrol, scancel and sinfo for one user on one login host."""

    def __init__(self, run):
        self._run = run
        # sacct is asked until it says accounting is off; scontrol answers from then on.
        self.accounting = True

    def _call(self, argv, what, cwd=None):
        rc, out, err = self._run(argv, cwd)
        if rc != 0:
            raise CommandError("{0} failed ({1}, exit code {2}): {3}".format(what, " ".join(argv), rc, _said(out, err)))
        return out

    def submit(self, script, cwd, options):
        """The job id sbatch gives the script; a refusal raises SubmissionError naming the options at fault.

        A refusal over the partition or what the job asks of its nodes also says what sinfo says of the partition.
        """
        rc, out, err = self._run(["sbatch", "--parsable", script], cwd)
        if rc != 0:
            error = submission_error(rc, out, err, options)
            if PARTITION_OPTIONS.intersection(error.details["options_at_fault"]):
                error = submission_error(rc, out, err, options, hint=self.partitions(options))
            raise error
        return job_id_of(out)

    def active(self, name, user):
        """The user's jobs of that name still pending or running (squeue), oldest first."""
        out = self._call(["squeue", "--noheader", "--user=" + user, "--name=" + name,
                          "--states=" + ",".join(slurm_state.ACTIVE_STATES), "--format=" + slurm_state.SQUEUE_FORMAT],
                         "listing the queued jobs named " + name)
        return sorted(slurm_state.parse_squeue(out), key=lambda job: int(job.job_id) if job.job_id.isdigit() else 0)

    def status(self, job_id):
        """One look at the job: sacct (with its steps) while accounting answers for it, else the controller's record
        (scontrol); None when neither knows it."""
        if self.accounting:
            rc, out, err = self._run(["sacct", "-j", str(job_id), "--noheader", "--parsable2",
                                      "--format=" + ",".join(slurm_state.SACCT_FIELDS)], None)
            if rc == 0:
                found = slurm_state.parse_sacct(out, job_id)
                if found is not None:
                    return found
            elif ACCOUNTING_DISABLED in (err or out or "").lower():
                self.accounting = False
        return self.record(job_id)

    def record(self, job_id):
        """The controller's record of the job (scontrol), or None once it has left the controller."""
        rc, out, err = self._run(["scontrol", "--oneliner", "show", "job", str(job_id)], None)
        if rc != 0:
            if "invalid job id" in (err or out or "").lower():
                return None
            raise CommandError("reading Slurm job {0} failed (scontrol --oneliner show job {0}, exit code {1}): {2}".format(
                job_id, rc, _said(out, err)))
        return slurm_state.parse_scontrol(out)

    def cancel(self, job_id):
        self._call(["scancel", str(job_id)], "cancelling Slurm job {0}".format(job_id))

    def partitions(self, options):
        """What sinfo says of the job's partition, or of every partition when it knows none of that name, for a
        refused job's message."""
        argv = ["sinfo", "--noheader", "--format=" + SINFO_FORMAT]
        asked = options.get("partition")
        rc, out, err = self._run(argv + ["--partition=" + asked] if asked else argv, None)
        if rc == 0 and asked and not out.strip():
            rc, out, err = self._run(argv, None)
        if rc != 0 or not out.strip():
            return "sinfo says nothing of the partitions ({0})".format(_said(out, err) or "no output")
        rows = []
        for line in out.strip().splitlines():
            fields = (line.split("|") + [""] * 7)[:7]
            rows.append("{0} {1}: {2} node(s) of {3} CPU(s), gres {4}, features {5}, time limit {6}".format(*fields))
        return "sinfo: " + "; ".join(rows)
