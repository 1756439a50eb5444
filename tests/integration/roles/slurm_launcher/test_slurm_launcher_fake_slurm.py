"""The slurm_launcher role through playbooks/verify_training.yml (gpuops_launcher=slurm), on this machine as its own
login host, against stand-ins for sbatch, squeue, sacct, scontrol, scancel, sinfo and srun first on PATH: sbatch
runs the script at once, writing its output where its #SBATCH lines say, and srun runs the program it is given,
which prints a log recorded on the lab (tests/unit/fixtures/training_logs). So the role's wiring - the input check,
the script, the submission, the fetch of the output to the controller, the same verdict the other launchers publish,
and the failure listing the job's end - runs for real without Slurm; the real Slurm runs are the integration tier's.
And the one decision the stand-ins cannot show: Ansible becomes the job user only when it connects as another one.
"""

import getpass
import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from gpuops_testlib.ansible_run import REPO_ROOT, ansible_env, run_playbook
from gpuops_testlib.fake_slurm import write_fake_slurm
from gpuops_testlib.role_cases import BECOME_EXPECTED, become_cases, run_task_cases, shown

VERIFY = os.path.join(REPO_ROOT, "playbooks", "verify_training.yml")
LOGS = Path(REPO_ROOT) / "tests" / "unit" / "fixtures" / "training_logs"
ROLE = Path(REPO_ROOT) / "roles" / "slurm_launcher"
SUBMIT_TASK = "Write the batch script, submit it and wait for the job"


def failing_program(folder):
    """A program that prints the lab's log of a run whose rank was killed, and fails as that run did."""
    path = Path(folder) / "killed.sh"
    path.write_text("#!/bin/sh\ncat {0}\nexit 137\n".format(LOGS / "lab_mpi_2node_rank_killed.log"))
    path.chmod(0o755)
    return str(path)


def verify(tmp_path, check=False, program=None, queue=None, jobs=None, **role_vars):
    """verify_training.yml with the Slurm launcher, this machine its login host; (the run, the stand-ins' calls).

    queue: what squeue prints; jobs: {job id: its end} of jobs submitted before."""
    state = tmp_path / "slurm"
    state.mkdir()
    if queue:
        (state / "queue").write_text(queue)
    for job_id, end in (jobs or {}).items():
        (state / (job_id + ".json")).write_text(json.dumps(end))
    write_fake_slurm(tmp_path / "bin")
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": {"login01": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
        "ansible_user": getpass.getuser()}}}}}}))
    extra = dict({"gpuops_launcher": "slurm", "slurm_launcher_nodes": 2, "slurm_launcher_tasks_per_node": 2,
                  "slurm_launcher_work_dir": str(tmp_path / "work"), "slurm_launcher_log_path": str(tmp_path / "logs" / "training-slurm.log"),
                  "slurm_launcher_python": "/bin/cat", "slurm_launcher_poll_interval": 0.2,
                  "slurm_launcher_program": program or str(LOGS / "lab_mpi_2node_4rank_tf.log"),
                  "slurm_launcher_env": {"HOROVOD_CYCLE_TIME": 1}, "gpuops_training_chart_enabled": False}, **role_vars)
    if program:
        extra["slurm_launcher_python"] = "/bin/sh"
    env = ansible_env(path_prefix=tmp_path / "bin", FAKE_SLURM=state)
    done = run_playbook(VERIFY, inventory, extra, ["--check", "--diff"] if check else [], env=env, timeout=300)
    calls_file = state / "calls"
    calls = [json.loads(line) for line in calls_file.read_text().splitlines()] if calls_file.exists() else []
    return done, calls


def test_a_job_runs_its_output_comes_back_and_the_verdict_is_the_other_launchers(tmp_path):
    done, calls = verify(tmp_path)
    assert done.rc == 0, done.explain()
    assert [call[0] for call in calls][:2] == ["squeue", "sbatch"]
    script = (tmp_path / "work" / "gpuops-benchmark.sbatch").read_text()
    assert "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=2\n" in script
    assert "export HOROVOD_CYCLE_TIME=1\nsrun --mpi=pmix --kill-on-bad-exit=1 /bin/cat " in script
    # The output, fetched where the other launchers keep their logs, judged once by training_verdict.
    log = tmp_path / "logs" / "training-slurm.log"
    assert log.read_text() == (LOGS / "lab_mpi_2node_4rank_tf.log").read_text()
    report = json.loads((tmp_path / "logs" / "training-slurm.json").read_text())
    assert report["passed"] and report["ranks"] == 4
    verdict = done.result("Publish the verdict for the summary", "login01")["ansible_facts"]["training_verdict_result"]
    assert verdict["passed"] and verdict["launched_by"].startswith(
        "Slurm job 4242 from login01 as {0} (srun --mpi=pmix, 2 node(s) x 2 task(s))".format(getpass.getuser()))
    job = done.result(SUBMIT_TASK, "login01")
    assert (job["job_id"], job["state"], job["submitted"]) == ("4242", "COMPLETED", True)


def test_a_failed_job_fails_the_run_with_its_end_and_the_verdict_of_its_output(tmp_path):
    done, calls = verify(tmp_path, program=failing_program(tmp_path))
    assert done.rc != 0
    # The job's own task fails at once (and is rescued); the role then fails listing everything.
    assert [name for name, _result in done.failed("login01")] == [SUBMIT_TASK, "Fail with everything that went wrong"]
    problems = done.result("Fail with everything that went wrong", "login01")["msg"]
    job_problem = problems[0]
    assert job_problem.startswith("Slurm job 4242 is FAILED: it ended with a non-zero exit code or another failure "
                                  "(exit code 137, reason NonZeroExitCode, on login01); its output ")
    assert "exited on signal 9 (Killed)." in job_problem
    assert job_problem.endswith("; the output is kept at {0}".format(tmp_path / "logs" / "training-slurm.log"))
    # The verdict of the output that came back is listed with it.
    assert problems[1:] == ["the run did not finish: no 'Total img/sec on N CPU(s)' line; no per-rank 'Img/sec per CPU' "
                            "line for rank(s) 0, 1", "expected 4 ranks, the log shows 2 (from Horovod 'Number of CPUs')"]
    assert "sbatch" in [call[0] for call in calls]


def test_check_mode_shows_the_script_and_submits_nothing(tmp_path):
    done, calls = verify(tmp_path, check=True)
    assert done.rc == 0, done.explain()
    job = done.result(SUBMIT_TASK, "login01")
    assert job["changed"] and not job["submitted"] and job["script"].startswith("#!/bin/bash\n")
    assert [call[0] for call in calls] == ["squeue"]
    assert not (tmp_path / "work").exists() and not (tmp_path / "logs").exists()


def test_a_queued_job_of_the_same_name_is_waited_on_not_submitted_again(tmp_path):
    earlier = tmp_path / "earlier.out"
    earlier.write_text((LOGS / "lab_mpi_2node_4rank_tf.log").read_text())
    done, calls = verify(tmp_path, queue="4100|RUNNING|None|login01|gpuops-benchmark\n",
                         jobs={"4100": {"rc": 0, "output": str(earlier), "name": "gpuops-benchmark"}})
    assert done.rc == 0, done.explain()
    assert "sbatch" not in [call[0] for call in calls]
    job = done.result(SUBMIT_TASK, "login01")
    assert (job["job_id"], job["existing"], job["submitted"], job["output_path"]) == ("4100", True, False, str(earlier))
    assert (tmp_path / "logs" / "training-slurm.log").read_text() == earlier.read_text()


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    return run_task_cases(tmp_path_factory.mktemp("slurm_launcher_become"), become_cases(
        [ROLE / "defaults" / "main.yml", ROLE / "vars" / "main.yml"],
        "slurm_launcher_job_user", "__slurm_launcher_become", "__slurm_launcher_job_user"))


@pytest.mark.parametrize("case, become, user", BECOME_EXPECTED)
def test_ansible_becomes_the_job_user_only_when_it_connects_as_another(rendered, case, become, user):
    assert shown(rendered, case) == {"become": become, "user": user}
