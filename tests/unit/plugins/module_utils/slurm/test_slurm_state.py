# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What slurm.state reads in sacct's, scontrol's and squeue's lines as Slurm 22.05 prints them, and what the wait
makes of it: which states end a job, which are failures and why, a failed step failing the job while it still runs,
and pending reasons Slurm never gets past."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.options import HOPELESS_PENDING_REASONS
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.state import (
    FINAL_STATES, failure, finished, parse_sacct, parse_scontrol, parse_squeue, succeeded)

# sacct -j <id> --noheader --parsable2 --format=JobID,State,ExitCode,Reason,NodeList
SACCT = {
    "completed": ("4242|COMPLETED|0:0|None|node[1-2]\n"
                  "4242.batch|COMPLETED|0:0||node1\n"
                  "4242.extern|COMPLETED|0:0||node[1-2]\n"
                  "4242.0|COMPLETED|0:0||node[1-2]\n"),
    "running": ("4242|RUNNING|0:0|None|node[1-2]\n"
                "4242.batch|RUNNING|0:0||node1\n"
                "4242.extern|RUNNING|0:0||node[1-2]\n"
                "4242.0|RUNNING|0:0||node[1-2]\n"),
    "rank killed, job still running": ("4243|RUNNING|0:0|None|node[1-2]\n"
                                       "4243.batch|RUNNING|0:0||node1\n"
                                       "4243.extern|RUNNING|0:0||node[1-2]\n"
                                       "4243.0|FAILED|0:9||node[1-2]\n"),
    "failed": ("4243|FAILED|1:0|NonZeroExitCode|node[1-2]\n"
               "4243.batch|FAILED|1:0||node1\n"
               "4243.extern|COMPLETED|0:0||node[1-2]\n"
               "4243.0|FAILED|1:0||node[1-2]\n"),
    "timeout": ("4244|TIMEOUT|0:0|None|node1\n"
                "4244.batch|CANCELLED|0:15||node1\n"
                "4244.extern|COMPLETED|0:0||node1\n"
                "4244.0|CANCELLED|0:15||node1\n"),
    "cancelled by a user": ("4245|CANCELLED by 1000|0:0|None|node[1-2]\n"
                            "4245.batch|CANCELLED|0:15||node1\n"
                            "4245.extern|COMPLETED|0:0||node[1-2]\n"),
    "cancelled while pending": "4246|CANCELLED by 1000|0:0|None|None assigned\n",
    "out of memory": ("4247|OUT_OF_MEMORY|0:125|None|node2\n"
                      "4247.batch|OUT_OF_MEMORY|0:125||node2\n"
                      "4247.extern|COMPLETED|0:0||node2\n"),
    "node failure": "4248|NODE_FAIL|0:0|None|node[1-2]\n4248.batch|CANCELLED|0:15||node1\n",
    "boot failure": "4249|BOOT_FAIL|0:0|None|node3\n",
    "deadline": "4250|DEADLINE|0:0|None|None assigned\n",
    "preempted": "4251|PREEMPTED|0:0|None|node[1-2]\n4251.batch|CANCELLED|0:15||node1\n",
    "pending for resources": "4252|PENDING|0:0|Resources|None assigned\n",
    "pending on bad constraints": "4253|PENDING|0:0|BadConstraints|None assigned\n",
    "pending over a per-job limit": "4254|PENDING|0:0|QOSMaxGRESPerJob|None assigned\n",
}


def sacct(case):
    text = SACCT[case]
    return parse_sacct(text, text.split("|", 1)[0])


def test_a_job_and_its_steps_from_sacct():
    status = sacct("completed")
    assert status.job_id == "4242" and status.state == "COMPLETED" and status.exit_code == "0:0"
    assert status.reason is None and status.nodes == "node[1-2]" and status.source == "sacct"
    assert [step.step_id for step in status.steps] == ["4242.batch", "4242.extern", "4242.0"]
    assert succeeded(status) and finished(status) and failure(status) is None


def test_a_job_sacct_has_no_line_for_yet():
    assert parse_sacct("", "4242") is None
    assert parse_sacct("4241|COMPLETED|0:0|None|node1\n", "4242") is None


def test_a_running_job_is_neither_done_nor_failed():
    status = sacct("running")
    assert not succeeded(status) and not finished(status) and failure(status) is None


FAILURES = {
    "failed": "Slurm job 4243 is FAILED: it ended with a non-zero exit code or another failure (exit code 1, reason "
              "NonZeroExitCode, on node[1-2])",
    "timeout": "Slurm job 4244 is TIMEOUT: it reached its time limit (on node1)",
    "cancelled by a user": "Slurm job 4245 is CANCELLED by 1000: it was cancelled (on node[1-2])",
    "cancelled while pending": "Slurm job 4246 is CANCELLED by 1000: it was cancelled",
    "out of memory": "Slurm job 4247 is OUT_OF_MEMORY: it ran out of memory (signal 125, on node2)",
    "node failure": "Slurm job 4248 is NODE_FAIL: one of its nodes failed (on node[1-2])",
    "boot failure": "Slurm job 4249 is BOOT_FAIL: a node could not be booted for it (on node3)",
    "deadline": "Slurm job 4250 is DEADLINE: it reached its deadline",
    "preempted": "Slurm job 4251 is PREEMPTED: another job preempted it (on node[1-2])",
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_each_failed_state_ends_the_wait_with_what_it_means(case):
    status = sacct(case)
    assert failure(status) == FAILURES[case]
    assert finished(status) and not succeeded(status)


def test_cancelled_by_keeps_who_cancelled():
    status = sacct("cancelled by a user")
    assert (status.state, status.detail, status.state_text) == ("CANCELLED", "by 1000", "CANCELLED by 1000")


def test_a_failed_step_fails_the_job_while_it_still_runs():
    status = sacct("rank killed, job still running")
    assert not finished(status)
    assert failure(status) == ("step 4243.0 of Slurm job 4243 is FAILED: it ended with a non-zero exit code or another "
                               "failure (signal 9, on node[1-2]), while the job is RUNNING")


def test_the_extern_step_says_nothing_of_the_run():
    text = "4242|RUNNING|0:0|None|node[1-2]\n4242.extern|CANCELLED|0:15||node[1-2]\n"
    assert failure(parse_sacct(text, "4242")) is None


def test_a_completed_job_succeeded_whatever_its_steps():
    text = "4242|COMPLETED|0:0|None|node1\n4242.0|CANCELLED|0:15||node1\n"
    assert succeeded(parse_sacct(text, "4242")) and failure(parse_sacct(text, "4242")) is None


def test_pending_for_resources_waits():
    status = sacct("pending for resources")
    assert status.reason == "Resources" and status.nodes is None
    assert failure(status, HOPELESS_PENDING_REASONS) is None


@pytest.mark.parametrize("reason", ["Priority", "Dependency", "AssocMaxJobsLimit", "QOSMaxJobsPerUserLimit",
                                    "QOSGrpGRES", "ReqNodeNotAvail", "PartitionNodeLimit", "JobHeldUser"])
def test_pending_for_a_reason_that_passes_waits(reason):
    status = parse_sacct("4255|PENDING|0:0|{0}|None assigned\n".format(reason), "4255")
    assert failure(status, HOPELESS_PENDING_REASONS) is None


@pytest.mark.parametrize("case, reason", [("pending on bad constraints", "BadConstraints"),
                                          ("pending over a per-job limit", "QOSMaxGRESPerJob")])
def test_a_pending_reason_slurm_never_gets_past_fails_at_once(case, reason):
    status = sacct(case)
    assert failure(status, HOPELESS_PENDING_REASONS) == (
        "Slurm job {0} is PENDING for reason {1}, which Slurm does not get past without a change to the job or to the "
        "cluster (see JOB REASON CODES in squeue(1))".format(status.job_id, reason))
    # With no patterns the wait goes on until its timeout.
    assert failure(status, []) is None


def test_a_request_larger_than_its_partition_fails_at_once():
    # As the lab's Slurm queued 3 nodes asked of a partition of 2: sbatch takes it, and it never starts.
    status = parse_squeue("4260|PENDING|PartitionConfig||gpuops-benchmark\n")[0]
    assert "is PENDING for reason PartitionConfig" in failure(status, HOPELESS_PENDING_REASONS)


def test_every_failed_state_is_final():
    assert set(FINAL_STATES) == {"COMPLETED", "FAILED", "NODE_FAIL", "TIMEOUT", "CANCELLED", "OUT_OF_MEMORY",
                                 "BOOT_FAIL", "DEADLINE", "PREEMPTED", "REVOKED"}


def test_a_job_nobody_knows_any_more_is_a_failure():
    assert "known neither to sacct nor to scontrol" in failure(None)


# scontrol --oneliner show job <id>: the controller's record, without accounting.
SCONTROL_FAILED = (
    "JobId=4243 JobName=gpuops-benchmark UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A Priority=4294901757 "
    "Nice=0 Account=(null) QOS=normal JobState=FAILED Reason=NonZeroExitCode Dependency=(null) Requeue=1 Restarts=0 "
    "BatchFlag=1 Reboot=0 ExitCode=1:0 RunTime=00:00:05 TimeLimit=00:30:00 TimeMin=N/A SubmitTime=2025-03-01T10:00:00 "
    "EligibleTime=2025-03-01T10:00:00 AccrueTime=2025-03-01T10:00:00 StartTime=2025-03-01T10:00:01 "
    "EndTime=2025-03-01T10:00:06 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2025-03-01T10:00:01 "
    "Scheduler=Main Partition=debug AllocNode:Sid=node1:4711 ReqNodeList=(null) ExcNodeList=(null) NodeList=node[1-2] "
    "BatchHost=node1 NumNodes=2 NumCPUs=4 NumTasks=4 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=4,node=2,billing=4 "
    "Socks/Node=* NtasksPerN:B:S:C=2:0:*:* CoreSpec=* MinCPUsNode=2 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) "
    "DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) "
    "Command=/home/alice/gpuops/gpuops-benchmark.sbatch WorkDir=/home/alice/gpuops "
    "StdErr=/home/alice/gpuops/gpuops-benchmark-4243.out StdIn=/dev/null StdOut=/home/alice/gpuops/gpuops-benchmark-4243.out "
    "Power=\n")
SCONTROL_PENDING = (
    "JobId=4252 JobName=gpuops-benchmark UserId=alice(1000) GroupId=alice(1000) JobState=PENDING "
    "Reason=ReqNodeNotAvail,_UnavailableNodes:node2 Dependency=(null) ExitCode=0:0 ReqNodeList=node2 "
    "ExcNodeList=(null) NodeList=(null) StdOut=/home/alice/gpuops/gpuops-benchmark-%j.out\n")


def test_the_controllers_record():
    status = parse_scontrol(SCONTROL_FAILED)
    assert status.summary() == {"job_id": "4243", "state": "FAILED", "state_text": "FAILED", "exit_code": "1:0",
                                "reason": "NonZeroExitCode", "nodes": "node[1-2]", "steps": []}
    assert status.stdout == "/home/alice/gpuops/gpuops-benchmark-4243.out" and status.name == "gpuops-benchmark"
    assert failure(status) == ("Slurm job 4243 is FAILED: it ended with a non-zero exit code or another failure (exit "
                               "code 1, reason NonZeroExitCode, on node[1-2])")


def test_a_completing_job_whose_script_failed_has_failed_and_one_that_succeeded_has_not_yet():
    # As the lab's Slurm left a job whose step's launch timed out: the script's exit code is final, the clean-up hangs.
    completing = SCONTROL_FAILED.replace("JobState=FAILED", "JobState=COMPLETING").replace("ExitCode=1:0", "ExitCode=140:0")
    assert failure(parse_scontrol(completing)) == (
        "Slurm job 4243 failed: its batch script ended (exit code 140, reason NonZeroExitCode, on node[1-2]), and Slurm "
        "is still cleaning up (COMPLETING)")
    cleaning_after_success = completing.replace("ExitCode=140:0", "ExitCode=0:0").replace("NonZeroExitCode", "None")
    assert failure(parse_scontrol(cleaning_after_success)) is None
    assert not finished(parse_scontrol(cleaning_after_success))


def test_a_pending_record_names_no_node_and_keeps_the_reasons_detail():
    status = parse_scontrol(SCONTROL_PENDING)
    assert (status.state, status.nodes, status.reason) == ("PENDING", None, "ReqNodeNotAvail,_UnavailableNodes:node2")
    assert failure(status, HOPELESS_PENDING_REASONS) is None
    assert "reason ReqNodeNotAvail," in failure(status, ["ReqNodeNotAvail"])


def test_no_record():
    assert parse_scontrol("") is None


def test_the_queue():
    jobs = parse_squeue("4250|RUNNING|None|node[1-2]|gpuops-benchmark\n4252|PENDING|Priority||gpuops-benchmark\n")
    assert [(job.job_id, job.state, job.reason, job.nodes, job.name) for job in jobs] == [
        ("4250", "RUNNING", None, "node[1-2]", "gpuops-benchmark"),
        ("4252", "PENDING", "Priority", None, "gpuops-benchmark")]
    assert parse_squeue("") == []
