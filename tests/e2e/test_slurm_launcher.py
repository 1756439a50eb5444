# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops_launcher=slurm on the lab's real Slurm (Debian's 22.05: munge, slurmctld on node1, slurmd on both nodes),
made by playbooks/lab_slurm.yml on the lab make lab made: the non-root user gpuops's own Python environment on both
nodes (playbooks/python_env.yml, from the lab's wheelhouse); the benchmark submitted from node1 by gpuops across both
nodes with that environment and judged; a scaling sweep of 1, 2 and 4 ranks; a rank killed mid-run; requests Slurm
refuses; inputs refused before any job."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gpuops_testlib.ansible_run import REPO_ROOT, ansible_env, run_playbook, start_playbook
from gpuops_testlib.lab_pods import NODE_CONTAINER_PREFIX, VERIFY_TRAINING, fault_mid_run
from main_job import CACHE_ROOT

LAB_INVENTORY = os.path.join(REPO_ROOT, "inventories", "lab")
LAB_SLURM = os.path.join(REPO_ROOT, "playbooks", "lab_slurm.yml")
PYTHON_ENV = os.path.join(REPO_ROOT, "playbooks", "python_env.yml")
SCALING_SWEEP = os.path.join(REPO_ROOT, "playbooks", "scaling_sweep.yml")
ENV_PYTHON = "/home/gpuops/venvs/gpuops-horovod/bin/python"
KEY = os.path.join(CACHE_ROOT, "lab", "slurm", "munge.key")
JOB_USER = "gpuops"
RUN_TASK = "Write the batch script, submit it and wait for the job"


def _on_node1(*argv):
    return subprocess.run(["podman", "exec", NODE_CONTAINER_PREFIX + "node1"] + list(argv), capture_output=True,
                          text=True, check=False)


@pytest.fixture(scope="module")
def lab_slurm(second_run):
    """The lab's Slurm, then gpuops's own environment on both nodes, which the lab inventory's jobs run with."""
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    first = run_playbook(LAB_SLURM, LAB_INVENTORY, timeout=600)
    assert first.rc == 0, first.explain()
    built = run_playbook(PYTHON_ENV, LAB_INVENTORY, timeout=1200)
    assert built.rc == 0, built.explain()
    return first, built


def _verify(tmp_path, name, *extra, options=()):
    """verify_training.yml with the Slurm launcher from node1, its log and report under tmp_path."""
    extra_vars = {"gpuops_launcher": "slurm", "gpuops_training_hosts": "node1", "slurm_launcher_run_name": name,
                  "slurm_launcher_job_name": name, "slurm_launcher_log_path": str(tmp_path / (name + ".log"))}
    return run_playbook(VERIFY_TRAINING, LAB_INVENTORY, [json.dumps(extra_vars)] + list(extra), options=options,
                        timeout=900)


def _jobs_of(name):
    return _on_node1("squeue", "--noheader", "--name", name, "--format", "%i %T").stdout.split()


def test_slurm_runs_with_a_key_of_the_labs_own_never_printed_and_a_second_run_changes_nothing(lab_slurm):
    lab_slurm = lab_slurm[0]
    assert oct(os.stat(KEY).st_mode & 0o777) == "0o600"
    with open(KEY, "rb") as handle:
        assert len(handle.read()) == 1024
    on_node = _on_node1("stat", "-c", "%U %a", "/etc/munge/munge.key").stdout.split()
    assert on_node == ["munge", "400"], on_node
    assert "censored" in json.dumps(lab_slurm.result("Give the node the lab's munge key", "node1"))
    again = run_playbook(LAB_SLURM, LAB_INVENTORY, timeout=600)
    assert again.rc == 0, again.explain()
    assert again.changed_tasks("node1") == [] and again.changed_tasks("node2") == []
    idle = _on_node1("sinfo", "--noheader", "--Node", "--format", "%N %t").stdout.split()
    assert sorted(zip(idle[::2], idle[1::2])) in ([("node1", "idle"), ("node2", "idle")],
                                                  [("node1", "mix"), ("node2", "mix")]), idle


def test_the_job_users_own_environment_is_built_without_root_verified_and_left_alone_on_a_second_run(lab_slurm):
    built = lab_slurm[1]
    for node in ("node1", "node2"):
        env = built.result("Publish the environment as user_python_env_result", node)["ansible_facts"]["user_python_env_result"]
        assert env["python"] == ENV_PYTHON and env["cpu_only"] is True, env
        assert sorted(name.lower() for name in env["controllers"]) == ["gloo", "mpi"], env
        assert "TensorFlow" in env["horovod_check_build"] and "[X] Gloo" in env["horovod_check_build"], env
        owner = subprocess.run(["podman", "exec", NODE_CONTAINER_PREFIX + node, "stat", "-c", "%U", ENV_PYTHON],
                               capture_output=True, text=True, check=False).stdout.strip()
        assert owner == JOB_USER
    again = run_playbook(PYTHON_ENV, LAB_INVENTORY, timeout=600)
    assert again.rc == 0, again.explain()
    assert again.changed_tasks("node1") == [] and again.changed_tasks("node2") == []


def test_a_scaling_sweep_of_one_two_and_four_ranks_through_slurm_reports_each_size_a_table_and_a_chart(
        lab_slurm, tmp_path):
    extra_vars = {"gpuops_launcher": "slurm", "gpuops_training_hosts": "node1", "gpuops_sweep_ranks": [1, 2, 4],
                  "gpuops_sweep_name": "e2e-sweep", "gpuops_sweep_dir": str(tmp_path),
                  "gpuops_sweep_min_efficiency": {"2": 0.3}}
    swept = run_playbook(SCALING_SWEEP, LAB_INVENTORY, [json.dumps(extra_vars)], timeout=1500)
    assert swept.rc == 0, swept.explain()
    with open(str(tmp_path / "e2e-sweep.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    assert report["passed"] is True, report
    sizes = {size["ranks"]: size for size in report["sizes"]}
    assert sorted(sizes) == [1, 2, 4], report
    assert sizes[1]["scaling_efficiency"] == 1.0, report
    assert all(size["passed"] and size["img_per_sec_total"] > 0 for size in sizes.values()), report
    with open(str(tmp_path / "e2e-sweep.png"), "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    printed = swept.result("Print the sweep", "node1")["msg"]
    summary = printed if isinstance(printed, str) else "\n".join(printed)
    assert str(tmp_path / "e2e-sweep.png") in summary and str(tmp_path / "e2e-sweep.json") in summary, summary
    with open(str(tmp_path / "e2e-sweep-4ranks.json"), encoding="utf-8") as handle:
        four = json.load(handle)
    assert sorted(set(rank["host"] for rank in four["per_rank"])) == ["node1", "node2"], four["per_rank"]
    sys.stderr.write("slurm sweep:\n%s\n" % summary)


def test_the_benchmark_as_a_non_root_user_across_both_nodes_passes_after_a_check_that_submits_nothing(
        lab_slurm, tmp_path):
    planned = _verify(tmp_path, "e2e-slurm", options=("--check", "--diff"))
    assert planned.rc == 0, planned.explain()
    assert "#SBATCH --nodes=2" in planned.result(RUN_TASK, "node1")["script"]
    assert ENV_PYTHON in planned.result(RUN_TASK, "node1")["script"]
    assert _jobs_of("e2e-slurm") == []

    ran = _verify(tmp_path, "e2e-slurm")
    assert ran.rc == 0, ran.explain()
    job = ran.result(RUN_TASK, "node1")
    owner = _on_node1("stat", "-c", "%U", job["output_path"]).stdout.strip()
    assert owner == JOB_USER
    with open(str(tmp_path / "e2e-slurm.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    assert report["passed"] is True, report["summary"]
    assert report["ranks"] == 4
    assert sorted(set(rank["host"] for rank in report["per_rank"])) == ["node1", "node2"], report["per_rank"]
    lines = dict(line.split(":", 1) for line in report["summary"])
    assert lines["verdict"].strip().startswith("PASSED (Slurm job %s from node1 as gpuops (mpirun, 2 node(s) x 2"
                                               % job["job_id"]), lines


def test_a_rank_killed_mid_run_fails_the_run_within_seconds_naming_the_job_with_its_output_kept(lab_slurm, tmp_path):
    extra_vars = {"gpuops_launcher": "slurm", "gpuops_training_hosts": "node1", "slurm_launcher_run_name": "killed",
                  "slurm_launcher_job_name": "e2e-killed", "slurm_launcher_log_path": str(tmp_path / "killed.log"),
                  "slurm_launcher_program_args": ["--framework", "tensorflow", "--device", "cpu", "--model",
                                                  "small_cnn", "--batch-size", "16", "--num-warmup-batches", "1",
                                                  "--num-iters", "200", "--num-batches-per-iter", "2"]}
    started = start_playbook(VERIFY_TRAINING, LAB_INVENTORY, [json.dumps(extra_vars)], env=ansible_env())

    def iterating():
        return "Iter #" in _on_node1("sh", "-c", "cat /home/gpuops/gpuops-training/e2e-killed-*.out 2>/dev/null").stdout

    def kill_a_rank_on_node2():
        subprocess.run(["podman", "exec", NODE_CONTAINER_PREFIX + "node2", "pkill", "-KILL", "-u", JOB_USER, "-f",
                        "gpuops_benchmark.py"], check=True, capture_output=True)

    run, seconds = fault_mid_run(started, iterating, kill_a_rank_on_node2)
    assert run.rc != 0
    message = json.dumps(dict(run.failed("node1")))
    assert "Slurm job" in message, message
    # The failed job was cancelled: nothing of it waits or runs on.
    assert not set(_jobs_of("e2e-killed")[1::2]) & {"PENDING", "RUNNING"}, _jobs_of("e2e-killed")
    with open(str(tmp_path / "killed.log"), encoding="utf-8") as handle:
        assert "Iter #" in handle.read()
    sys.stderr.write("slurm launcher, rank killed: the task returned %.1f s later\n" % seconds)
    assert seconds < 60


@pytest.mark.parametrize("extra, expected", [
    (["slurm_launcher_partition=nope"], ["sbatch refused job e2e-refused", "Invalid partition name specified"]),
    # Slurm queues this one (the partition's limits are not enforced at submission) and it would never start.
    (["slurm_launcher_nodes=3", "gpuops_training_expect_ranks=6"], ["is PENDING for reason PartitionConfig"]),
    (["slurm_launcher_gpus_per_node=1"],
     ["sbatch refused job e2e-refused", "the cluster defines no gres gpu"]),
], ids=["unknown-partition", "more-nodes-than-the-cluster", "gpus-on-a-cluster-without"])
def test_a_request_slurm_refuses_fails_with_slurms_reason_and_leaves_no_job(lab_slurm, tmp_path, extra, expected):
    refused = _verify(tmp_path, "e2e-refused", *extra)
    assert refused.rc != 0
    message = refused.result(RUN_TASK, "node1")["msg"]
    assert all(text in message for text in expected), message
    assert not set(_jobs_of("e2e-refused")[1::2]) & {"PENDING", "RUNNING"}, _jobs_of("e2e-refused")


@pytest.mark.parametrize("extra, expected", [
    (["slurm_launcher_nodes=-1"], "slurm_launcher_nodes"),
    (["slurm_launcher_job_user=nobody2"], "slurm_launcher_job_user: no user 'nobody2' on the login host node1"),
], ids=["negative-nodes", "unknown-job-user"])
def test_bad_inputs_are_refused_naming_the_variable_before_any_job(lab_slurm, tmp_path, extra, expected):
    refused = _verify(tmp_path, "e2e-bad", *extra)
    assert refused.rc != 0
    assert expected in refused.output, refused.output[-3000:]
    assert RUN_TASK not in [name for name, _result in refused.failed("node1")]
    assert _jobs_of("e2e-bad") == []
