# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What Slurm says of a job, and what that means for the wait.

Three sources, read as Slurm 22.05 prints them:

* ``sacct -j <id> --noheader --parsable2 --format=JobID,State,ExitCode,Reason,NodeList``: the job and its steps
  (``<id>.batch``, ``<id>.extern``, ``<id>.0``...), one ``|``-separated line each; a job cancelled by someone is
  ``CANCELLED by <uid>``. It needs accounting storage, and lags a little behind the controller.
* ``scontrol --oneliner show job <id>``: the controller's record (``JobState=``, ``Reason=``, ``ExitCode=``,
  ``NodeList=``, ``StdOut=``), without steps, kept ``MinJobAge`` seconds after the job ends.
* ``squeue --format=%i|%T|%r|%N|%j``: the queue, for a job of the same name still pending or running.

The failure predicate is asked before the success one (common.wait.wait_for): a job in a failed state, a step that
failed while the job still runs (a rank killed), or a job pending for a reason Slurm never gets past, ends the wait
at once with its reason.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import re
from collections import namedtuple

SACCT_FIELDS = ("JobID", "State", "ExitCode", "Reason", "NodeList")
SQUEUE_FORMAT = "%i|%T|%r|%N|%j"
SUCCEEDED = "COMPLETED"
# The final states other than COMPLETED, with what each means (sacct(1) and squeue(1), JOB STATE CODES).
FAILURES = {
    "FAILED": "it ended with a non-zero exit code or another failure",
    "NODE_FAIL": "one of its nodes failed",
    "TIMEOUT": "it reached its time limit",
    "CANCELLED": "it was cancelled",
    "OUT_OF_MEMORY": "it ran out of memory",
    "BOOT_FAIL": "a node could not be booted for it",
    "DEADLINE": "it reached its deadline",
    "PREEMPTED": "another job preempted it",
    "REVOKED": "another cluster of the federation runs it",
}
FINAL_STATES = (SUCCEEDED,) + tuple(sorted(FAILURES))
# The states of a job still waiting or running: a job of the same name in one of them is not submitted again.
ACTIVE_STATES = ("PENDING", "CONFIGURING", "RUNNING", "SUSPENDED")
# The step that adopts processes entering the job's nodes by ssh runs no rank: its state says nothing of the run.
_QUIET_STEPS = (".extern",)
# How Slurm says "nothing": a reason of None, scontrol's (null), sacct's NodeList of a job that never started.
_NONE = ("", "None", "none", "(null)", "None assigned")

Step = namedtuple("Step", ("step_id", "state", "detail", "exit_code", "nodes"))


class JobStatus(namedtuple("JobStatus", ("job_id", "state", "detail", "exit_code", "reason", "nodes", "steps",
                                         "source", "stdout", "name"))):
    """One look at a job: its state word (CANCELLED), the rest of Slurm's state text (by 1000), the exit code as
    Slurm prints it (<status>:<signal>), the reason (None when Slurm gives none), its nodes, its steps (sacct only),
    where the look came from, and, from scontrol, its output file and name."""

    __slots__ = ()

    def __new__(cls, job_id, state, detail=None, exit_code=None, reason=None, nodes=None, steps=(), source=None,
                stdout=None, name=None):
        return super(JobStatus, cls).__new__(cls, job_id, state, detail, exit_code, reason, nodes, tuple(steps), source,
                                             stdout, name)

    @property
    def state_text(self):
        return "{0} {1}".format(self.state, self.detail) if self.detail else self.state

    def summary(self):
        """The job as the task result returns it."""
        return {"job_id": self.job_id, "state": self.state, "state_text": self.state_text,
                "exit_code": self.exit_code, "reason": self.reason, "nodes": self.nodes,
                "steps": [{"step_id": step.step_id, "state": step.state, "exit_code": step.exit_code,
                           "nodes": step.nodes} for step in self.steps]}


def _value(text):
    text = (text or "").strip()
    return None if text in _NONE else text


def split_state(text):
    """('CANCELLED', 'by 1000') for 'CANCELLED by 1000'; a '+' that sacct adds to a cut state is dropped."""
    words = (text or "").strip().split(None, 1)
    if not words:
        return None, None
    return words[0].rstrip("+"), (words[1] if len(words) > 1 else None)


def parse_sacct(text, job_id):
    """The JobStatus of `job_id` in sacct's --parsable2 lines (SACCT_FIELDS), or None when it has no line for it
    (accounting not told of the job yet)."""
    job, steps = None, []
    for line in (text or "").splitlines():
        fields = line.split("|")
        if len(fields) < len(SACCT_FIELDS):
            continue
        record_id, state_text, exit_code, reason = fields[0].strip(), fields[1], fields[2], fields[3]
        nodes = "|".join(fields[4:])
        state, detail = split_state(state_text)
        if record_id == str(job_id):
            job = (state, detail, _value(exit_code), _value(reason), _value(nodes))
        elif record_id.startswith("{0}.".format(job_id)):
            steps.append(Step(record_id, state, detail, _value(exit_code), _value(nodes)))
    if job is None:
        return None
    state, detail, exit_code, reason, nodes = job
    return JobStatus(str(job_id), state, detail, exit_code, reason, nodes, steps, source="sacct")


_SCONTROL_FIELD = re.compile(r"(?:^|\s)(JobId|JobName|JobState|Reason|ExitCode|NodeList|StdOut)=(\S*)")


def parse_scontrol(text):
    """The JobStatus in `scontrol --oneliner show job <id>`'s output, or None when it holds no job record."""
    fields = dict(_SCONTROL_FIELD.findall(text or ""))
    if "JobId" not in fields or "JobState" not in fields:
        return None
    state, detail = split_state(fields["JobState"])
    return JobStatus(fields["JobId"], state, detail, _value(fields.get("ExitCode")), _value(fields.get("Reason")),
                     _value(fields.get("NodeList")), source="scontrol", stdout=_value(fields.get("StdOut")),
                     name=_value(fields.get("JobName")))


def parse_squeue(text):
    """The jobs in squeue's lines (SQUEUE_FORMAT), in its order: a JobStatus each."""
    jobs = []
    for line in (text or "").splitlines():
        fields = line.strip().split("|", 4)
        if len(fields) < 5 or not fields[0]:
            continue
        state, detail = split_state(fields[1])
        jobs.append(JobStatus(fields[0], state, detail, reason=_value(fields[2]), nodes=_value(fields[3]),
                              source="squeue", name=fields[4]))
    return jobs


def _exit_words(exit_code):
    """'exit code 1', 'signal 9' or both, from Slurm's <status>:<signal>."""
    status, _colon, signal = (exit_code or "").partition(":")
    words = []
    if status not in ("", "0"):
        words.append("exit code " + status)
    if signal not in ("", "0"):
        words.append("signal " + signal)
    return " and ".join(words)


def _where(status_or_step):
    parts = []
    exit_words = _exit_words(status_or_step.exit_code)
    if exit_words:
        parts.append(exit_words)
    if getattr(status_or_step, "reason", None):
        parts.append("reason " + status_or_step.reason)
    if status_or_step.nodes:
        parts.append("on " + status_or_step.nodes)
    return " ({0})".format(", ".join(parts)) if parts else ""


def describe(status):
    """One line for a person: the job, its state and what it means, its exit code, reason and nodes."""
    meaning = FAILURES.get(status.state)
    text = "Slurm job {0} is {1}".format(status.job_id, status.state_text)
    if meaning:
        text += ": " + meaning
    return text + _where(status)


def failed_steps(status):
    return [step for step in status.steps if step.state in FAILURES and not step.step_id.endswith(_QUIET_STEPS)]


def hopeless_reason(status, patterns):
    """The pending reason among `patterns` (shell-style) that keeps the job from ever starting, or None."""
    if status.state != "PENDING" or not status.reason:
        return None
    # squeue and scontrol may add details after a comma (ReqNodeNotAvail,_UnavailableNodes:node1).
    reason = status.reason.split(",", 1)[0]
    return reason if any(fnmatch.fnmatchcase(reason, pattern) for pattern in patterns or []) else None


def failure(status, pending_reasons=()):
    """Why the job cannot succeed any more, or None while it still can (or has succeeded)."""
    if status is None:
        return ("the job is known neither to sacct nor to scontrol: its record left the controller (MinJobAge) and "
                "accounting has none")
    if status.state in FAILURES:
        return describe(status)
    if status.state == "COMPLETING" and _exit_words(status.exit_code):
        # The batch script has ended and its exit code is final; only the nodes' clean-up is left, which a hung
        # step can hold up for as long as slurmd's timeouts.
        return "Slurm job {0} failed: its batch script ended{1}, and Slurm is still cleaning up (COMPLETING)".format(
            status.job_id, _where(status))
    if status.state != SUCCEEDED:
        steps = failed_steps(status)
        if steps:
            step = steps[0]
            return "step {0} of Slurm job {1} is {2}: {3}{4}, while the job is {5}".format(
                step.step_id, status.job_id, "{0} {1}".format(step.state, step.detail) if step.detail else step.state,
                FAILURES[step.state], _where(step), status.state_text)
    reason = hopeless_reason(status, pending_reasons)
    if reason:
        return ("Slurm job {0} is PENDING for reason {1}, which Slurm does not get past without a change to the job "
                "or to the cluster (see JOB REASON CODES in squeue(1))".format(status.job_id, reason))
    return None


def succeeded(status):
    return status is not None and status.state == SUCCEEDED


def finished(status):
    return status is not None and status.state in FINAL_STATES
