# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the slurm_job module does, in order: check the options, build the script, compare it with the one on
disk, look for a job of the same name still queued, write and submit (never in check mode), then wait, failing as
soon as the job cannot succeed, and read the end of its output."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import os
import time
from shlex import quote

from ansible_collections.gpuops.cluster.plugins.module_utils.common.files import write_file
from ansible_collections.gpuops.cluster.plugins.module_utils.common.wait import FAILED, clock, wait_for
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm import state as slurm_state
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.errors import (
    InvalidOptionsError, JobFailedError, WaitTimeoutError)
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.options import option_problems
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.output import quoted_end, tail
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.script import (
    batch_script, expand_output, launch_command, output_pattern, ranks, script_path)

# The script may carry the environment's secrets.
SCRIPT_MODE = 0o600


def _read(path):
    try:
        with io.open(path, "r", encoding="utf-8") as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def _write(path, text):
    """Replace the file at once, with SCRIPT_MODE; its folder is made when missing."""
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        os.makedirs(folder, 0o755)
    write_file(path, text.encode("utf-8"), SCRIPT_MODE)


def _with_output(message, result):
    if result.get("output_error"):
        return "{0}; its output {1}: {2}".format(message, result["output_path"], result["output_error"])
    return "{0}; its output {1} ends: {2}".format(message, result["output_path"], quoted_end(result["output_tail"]))


def _existing(options, slurm, user, result, active):
    """Report the newest job of the same name instead of submitting another."""
    job = active[-1]
    record = slurm.record(job.job_id)
    pattern = record.stdout if record is not None and record.stdout else output_pattern(options)
    result.update(job.summary())
    result.update(changed=False, existing=True, existing_jobs=[found.summary() for found in active],
                  output_path=expand_output(pattern, job.job_id, options["name"], user))


def wait(options, slurm, result, sleep=time.sleep, monotonic=time.monotonic):
    """Wait for result's job; returns result with the job's end and its output's tail, or raises."""
    job_id = result["job_id"]
    ticks = clock(options["wait_timeout"], options["poll_interval"], monotonic=monotonic, sleep=sleep)
    outcome = wait_for(lambda: slurm.status(job_id), slurm_state.succeeded,
                       lambda status: slurm_state.failure(status, options["fail_on_pending_reasons"]), ticks=ticks)
    status = outcome.observation
    if status is not None:
        result.update(status.summary())
    result["elapsed"] = round(outcome.elapsed, 3)
    result["output_tail"], result["output_error"] = tail(result["output_path"], options["output_lines"])
    result["output_found"] = result["output_error"] is None
    if outcome.succeeded:
        return result
    if outcome.outcome == FAILED:
        if options["cancel_on_failure"] and status is not None and not slurm_state.finished(status):
            slurm.cancel(job_id)
            result["cancelled"] = True
        raise JobFailedError(_with_output(outcome.reason, result), **result)
    still = status.state_text if status is not None else "unknown to Slurm"
    raise WaitTimeoutError(_with_output(
        "Slurm job {0} is still {1} after {2} s (wait_timeout); it is left in the queue, and the next run with the "
        "same name waits on it".format(job_id, still, options["wait_timeout"]), result), **result)


def run(options, slurm, check_mode, user, sleep=time.sleep, monotonic=time.monotonic):
    """The module's result for its options (every option of options.ARGUMENT_SPEC); raises SlurmError.

    slurm: a commands.SlurmCommands; user: the user the module runs as, whose queue is searched.
    """
    problems = option_problems(options)
    if problems:
        raise InvalidOptionsError(problems)
    path = script_path(options)
    script = batch_script(options)
    before = _read(path)
    result = dict(changed=before != script, script_path=path, script=script, ranks=ranks(options),
                  launch_command=" ".join(quote(word) for word in launch_command(options)),
                  submitted=False, existing=False,
                  diff=dict(before=before or "", after=script, before_header=path, after_header=path))
    if options["state"] == "rendered":
        if result["changed"] and not check_mode:
            _write(path, script)
        return result
    active = slurm.active(options["name"], user)
    if active:
        _existing(options, slurm, user, result, active)
        if check_mode or not (options["wait"] and options["wait_on_existing"]):
            return result
    else:
        # A new run of the benchmark: submitted every time, as a measurement is.
        result["changed"] = True
        if check_mode:
            return result
        if before != script:
            _write(path, script)
        job_id = slurm.submit(path, options["script_dir"], options)
        result.update(submitted=True, job_id=job_id,
                      output_path=expand_output(output_pattern(options), job_id, options["name"], user))
        if not options["wait"]:
            return result
    return wait(options, slurm, result, sleep, monotonic)
