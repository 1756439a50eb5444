# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.cluster.slurm_job against a fake Slurm behind run_command: check mode writes and submits nothing, a job of
the same name still queued is reported and waited on instead of a duplicate, a failed step fails at the first look
that shows it (and the job is cancelled), a refusal names the option at fault, and without accounting the
controller's record decides."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.cluster.plugins.modules import slurm_job
from gpuops_testlib.module_exit import Exited, catch_exits

USER = "alice"
NAME = "gpuops-benchmark"
LOG_END = ["[rank 0] total images/sec: 412.5", "[rank 0] done"]


@pytest.fixture(autouse=True)
def capture_exit(monkeypatch):
    catch_exits(monkeypatch)
    monkeypatch.setattr(slurm_job, "current_user", lambda: USER)


class FakeSlurm(object):
    """The commands' answers: a queue for squeue, a series of sacct (or scontrol) answers, one look each, and
    what sbatch says. Every call is kept."""

    def __init__(self, looks=(), queue="", sbatch=(0, "4242\n", ""), accounting=True, records=None, sinfo=""):
        self.looks = list(looks)
        self.queue = queue
        self.sbatch = sbatch
        self.accounting = accounting
        self.records = list(records or [])
        self.sinfo = sinfo
        self.calls = []

    def names(self):
        return [call[0] for call in self.calls]

    def run(self, argv, cwd=None):
        assert argv[0] == "/usr/bin/" + os.path.basename(argv[0])
        argv = [os.path.basename(argv[0])] + list(argv[1:])
        self.calls.append(argv)
        tool = argv[0]
        if tool == "sbatch":
            return self.sbatch
        if tool == "squeue":
            return 0, self.queue, ""
        if tool == "sacct":
            if not self.accounting:
                return 1, "", "Slurm accounting storage is disabled\n"
            return 0, self.looks.pop(0) if len(self.looks) > 1 else self.looks[0], ""
        if tool == "scontrol":
            if not self.records:
                return 1, "", "slurm_load_jobs error: Invalid job id specified\n"
            return 0, self.records.pop(0) if len(self.records) > 1 else self.records[0], ""
        if tool == "scancel":
            return 0, "", ""
        if tool == "sinfo":
            return 0, self.sinfo, ""
        raise AssertionError(argv)


def run(monkeypatch, slurm, check_mode=False, diff=True, **args):
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda module, argv, **options: slurm.run(argv, options.get("cwd")))
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda module, name, required=False: "/usr/bin/" + name)
    module_args = dict(name=NAME, python="/home/alice/venv/bin/python", program="/home/alice/gpuops_benchmark.py",
                       nodes=2, tasks_per_node=2, poll_interval=0.01, wait_timeout=30)
    module_args.update(args)
    module_args.update(_ansible_check_mode=check_mode, _ansible_diff=diff)
    with patch_module_args(module_args):
        with pytest.raises(Exited) as exited:
            slurm_job.main()
    return exited.value


def write_output(folder, job_id="4242", lines=None):
    path = os.path.join(str(folder), "{0}-{1}.out".format(NAME, job_id))
    with open(path, "w") as output:
        output.write("\n".join(["[rank 1] step 1"] * 200 + (lines or LOG_END)) + "\n")
    return path


RUNNING = "4242|RUNNING|0:0|None|node[1-2]\n4242.batch|RUNNING|0:0||node1\n4242.0|RUNNING|0:0||node[1-2]\n"
COMPLETED = "4242|COMPLETED|0:0|None|node[1-2]\n4242.batch|COMPLETED|0:0||node1\n4242.0|COMPLETED|0:0||node[1-2]\n"
STEP_FAILED = "4242|RUNNING|0:0|None|node[1-2]\n4242.batch|RUNNING|0:0||node1\n4242.0|FAILED|0:9||node[1-2]\n"


def test_check_mode_returns_the_script_and_its_diff_and_submits_nothing(monkeypatch, tmp_path):
    slurm = FakeSlurm()
    done = run(monkeypatch, slurm, check_mode=True, script_dir=str(tmp_path / "gpuops"))
    assert not done.failed and done.result["changed"] and not done.result["submitted"]
    assert done.result["script"].startswith("#!/bin/bash\n#SBATCH --job-name=gpuops-benchmark\n#SBATCH --nodes=2\n")
    assert done.result["diff"]["before"] == "" and done.result["diff"]["after"] == done.result["script"]
    assert done.result["script_path"] == str(tmp_path / "gpuops" / "gpuops-benchmark.sbatch")
    assert done.result["launch_command"] == ("srun --mpi=pmix --kill-on-bad-exit=1 /home/alice/venv/bin/python "
                                             "/home/alice/gpuops_benchmark.py")
    # It looks at the queue (read only), and nothing else.
    assert slurm.names() == ["squeue"]
    assert not (tmp_path / "gpuops").exists()


def test_a_job_is_submitted_waited_for_and_its_output_read(monkeypatch, tmp_path):
    write_output(tmp_path)
    pending = "JobId=4242 JobName=gpuops-benchmark JobState=PENDING Reason=None ExitCode=0:0 NodeList=(null)\n"
    slurm = FakeSlurm(looks=["", RUNNING, COMPLETED], records=[pending])
    done = run(monkeypatch, slurm, script_dir=str(tmp_path), output_lines=2)
    result = done.result
    assert not done.failed and result["changed"] and result["submitted"] and not result["existing"]
    assert (result["job_id"], result["state"], result["exit_code"], result["nodes"]) == ("4242", "COMPLETED", "0:0", "node[1-2]")
    assert result["output_path"] == str(tmp_path / "gpuops-benchmark-4242.out")
    assert result["output_tail"] == "\n".join(LOG_END) and result["output_found"]
    assert [step["step_id"] for step in result["steps"]] == ["4242.batch", "4242.0"]
    script = tmp_path / "gpuops-benchmark.sbatch"
    assert script.read_text() == result["script"]
    assert stat.S_IMODE(script.stat().st_mode) == 0o600
    assert slurm.calls[:2] == [
        ["squeue", "--noheader", "--user=alice", "--name=gpuops-benchmark", "--states=PENDING,CONFIGURING,RUNNING,SUSPENDED",
         "--format=%i|%T|%r|%N|%j"],
        ["sbatch", "--parsable", str(script)]]
    # sacct had no line for the job yet at the first look: the controller's record answered, then sacct.
    assert slurm.names()[2:] == ["sacct", "scontrol", "sacct", "sacct"]
    assert slurm.calls[2] == ["sacct", "-j", "4242", "--noheader", "--parsable2", "--format=JobID,State,ExitCode,Reason,NodeList"]


def test_a_job_of_the_same_name_still_queued_is_reported_not_duplicated(monkeypatch, tmp_path):
    write_output(tmp_path, "4100")
    record = "JobId=4100 JobName=gpuops-benchmark JobState=RUNNING Reason=None ExitCode=0:0 NodeList=node[1-2] " \
             "StdOut={0}/gpuops-benchmark-4100.out\n".format(tmp_path)
    slurm = FakeSlurm(queue="4100|RUNNING|None|node[1-2]|gpuops-benchmark\n", records=[record],
                      looks=[RUNNING.replace("4242", "4100"), COMPLETED.replace("4242", "4100")])
    done = run(monkeypatch, slurm, script_dir=str(tmp_path))
    result = done.result
    assert not done.failed and result["existing"] and not result["submitted"] and not result["changed"]
    assert (result["job_id"], result["state"]) == ("4100", "COMPLETED")
    assert result["output_path"] == str(tmp_path / "gpuops-benchmark-4100.out")
    assert [job["job_id"] for job in result["existing_jobs"]] == ["4100"]
    assert "sbatch" not in slurm.names()
    assert not (tmp_path / "gpuops-benchmark.sbatch").exists()


def test_without_waiting_on_it_the_queued_job_is_only_reported(monkeypatch, tmp_path):
    slurm = FakeSlurm(queue="4100|PENDING|Priority||gpuops-benchmark\n4101|PENDING|Priority||gpuops-benchmark\n")
    done = run(monkeypatch, slurm, script_dir=str(tmp_path), wait_on_existing=False)
    result = done.result
    assert not done.failed and result["existing"] and not result["changed"]
    assert (result["job_id"], result["state"], result["reason"]) == ("4101", "PENDING", "Priority")
    assert [job["job_id"] for job in result["existing_jobs"]] == ["4100", "4101"]
    # scontrol knew neither: the output is where the options put it.
    assert result["output_path"] == str(tmp_path / "gpuops-benchmark-4101.out")
    assert slurm.names() == ["squeue", "scontrol"]


def test_check_mode_reports_the_queued_job_it_would_wait_on(monkeypatch, tmp_path):
    slurm = FakeSlurm(queue="4100|RUNNING|None|node1|gpuops-benchmark\n")
    done = run(monkeypatch, slurm, check_mode=True, script_dir=str(tmp_path))
    assert not done.failed and done.result["existing"] and done.result["job_id"] == "4100"
    assert slurm.names() == ["squeue", "scontrol"]


def test_a_failed_step_fails_at_once_with_the_state_the_reason_and_the_outputs_end(monkeypatch, tmp_path):
    write_output(tmp_path, lines=["[rank 3] Killed", "srun: error: node2: task 3: Killed"])
    slurm = FakeSlurm(looks=[STEP_FAILED])
    done = run(monkeypatch, slurm, script_dir=str(tmp_path), wait_timeout=600)
    result = done.result
    assert done.failed
    assert done.result["msg"] == (
        "step 4242.0 of Slurm job 4242 is FAILED: it ended with a non-zero exit code or another failure (signal 9, on "
        "node[1-2]), while the job is RUNNING; its output {0}/gpuops-benchmark-4242.out ends: ".format(tmp_path)
        + " | ".join(["[rank 1] step 1"] * 13 + ["[rank 3] Killed", "srun: error: node2: task 3: Killed"]))
    assert result["state"] == "RUNNING" and result["cancelled"] and result["submitted"]
    assert result["output_tail"].endswith("srun: error: node2: task 3: Killed")
    # One look, not the timeout's worth: the job still held its nodes and is cancelled.
    assert slurm.names() == ["squeue", "sbatch", "sacct", "scancel"]
    assert slurm.calls[-1] == ["scancel", "4242"]


def test_a_failed_job_fails_with_its_exit_code_and_is_not_cancelled_again(monkeypatch, tmp_path):
    failed = "4242|FAILED|1:0|NonZeroExitCode|node[1-2]\n4242.batch|FAILED|1:0||node1\n"
    slurm = FakeSlurm(looks=[RUNNING, failed])
    done = run(monkeypatch, slurm, script_dir=str(tmp_path))
    assert done.failed and done.result["msg"].startswith(
        "Slurm job 4242 is FAILED: it ended with a non-zero exit code or another failure (exit code 1, reason "
        "NonZeroExitCode, on node[1-2]); its output {0}/gpuops-benchmark-4242.out: cannot read".format(tmp_path))
    assert done.result["exit_code"] == "1:0" and not done.result["output_found"]
    assert "scancel" not in slurm.names()


def test_without_accounting_the_controllers_record_decides(monkeypatch, tmp_path):
    write_output(tmp_path)
    records = ["JobId=4242 JobName=gpuops-benchmark JobState=RUNNING Reason=None ExitCode=0:0 NodeList=node[1-2]\n",
               "JobId=4242 JobName=gpuops-benchmark JobState=COMPLETED Reason=None ExitCode=0:0 NodeList=node[1-2]\n"]
    slurm = FakeSlurm(accounting=False, records=records)
    done = run(monkeypatch, slurm, script_dir=str(tmp_path))
    assert not done.failed and done.result["state"] == "COMPLETED" and done.result["steps"] == []
    # sacct is asked once: it said accounting is off.
    assert slurm.names()[2:] == ["sacct", "scontrol", "scontrol"]


def test_a_refusal_names_the_option_and_what_the_partition_offers(monkeypatch, tmp_path):
    slurm = FakeSlurm(sbatch=(1, "", "sbatch: error: Batch job submission failed: Requested node configuration is not "
                                     "available\n"),
                      sinfo="gpu*|up|2|16|gpu:2|a100|2-00:00:00\n")
    done = run(monkeypatch, slurm, script_dir=str(tmp_path), gpus_per_node=4, partition="gpu")
    assert done.failed
    assert done.result["msg"] == (
        "sbatch refused job gpuops-benchmark: Requested node configuration is not available. nodes, tasks_per_node, "
        "gpus_per_node, cpus_per_task, constraint, partition: no 2 node(s) of partition 'gpu' have what the job asks of "
        "each: 2 task(s), 4 GPU(s) (--gres=gpu:4). sinfo: gpu* up: 2 node(s) of 16 CPU(s), gres gpu:2, features a100, "
        "time limit 2-00:00:00")
    assert done.result["options_at_fault"][:3] == ["nodes", "tasks_per_node", "gpus_per_node"]
    assert slurm.calls[-1] == ["sinfo", "--noheader", "--format=%P|%a|%D|%c|%G|%f|%l", "--partition=gpu"]


def test_bad_options_fail_before_any_command(monkeypatch, tmp_path):
    slurm = FakeSlurm()
    done = run(monkeypatch, slurm, script_dir=str(tmp_path), nodes=0, time_limit="2h", env={"NCCL-ALGO": "Ring"})
    assert done.failed and done.result["problems"] == [
        "nodes: got 0; expected a number of nodes, 1 or more",
        "time_limit: got '2h'; expected a time limit in one of sbatch's forms, minutes, minutes:seconds, "
        "hours:minutes:seconds, days-hours, days-hours:minutes or days-hours:minutes:seconds (such as 30, 01:30:00 or "
        "1-12), or null for the partition's default",
        "env: got {\"NCCL-ALGO\": \"Ring\"}; expected a mapping of environment variable names (letters, digits and _, "
        "not starting with a digit) to values; not names: NCCL-ALGO"]
    assert done.result["msg"].startswith("invalid Slurm job options (3 problem(s)): nodes: got 0;")
    assert slurm.calls == [] and list(tmp_path.iterdir()) == []


def test_rendered_writes_the_script_once_and_submits_nothing(monkeypatch, tmp_path):
    slurm = FakeSlurm()
    first = run(monkeypatch, slurm, state="rendered", script_dir=str(tmp_path / "new"), launch="mpirun")
    again = run(monkeypatch, slurm, state="rendered", script_dir=str(tmp_path / "new"), launch="mpirun")
    assert first.result["changed"] and not again.result["changed"]
    assert (tmp_path / "new" / "gpuops-benchmark.sbatch").read_text().endswith(
        "mpirun -np 4 /home/alice/venv/bin/python /home/alice/gpuops_benchmark.py\n")
    assert again.result["diff"]["before"] == again.result["diff"]["after"]
    assert slurm.calls == []


def test_a_job_still_running_at_the_timeout_is_left_in_the_queue(monkeypatch, tmp_path):
    slurm = FakeSlurm(looks=[RUNNING])
    done = run(monkeypatch, slurm, script_dir=str(tmp_path), wait_timeout=1, poll_interval=0.2, diff=False)
    assert done.failed and done.result["msg"].startswith(
        "Slurm job 4242 is still RUNNING after 1 s (wait_timeout); it is left in the queue, and the next run with the "
        "same name waits on it")
    assert "scancel" not in slurm.names() and "diff" not in done.result
