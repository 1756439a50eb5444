# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops_launcher=job on the lab make lab made, with no operator: worker pods with host networking and sshd on
port 22122, one on each node, and an mpirun Job over them, judged by the verdict; check mode, a second run, the
workers taken down, and the faults (an image that cannot be pulled, more GPUs than a node has, a worker killed
mid-run), each reported within seconds."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from gpuops_testlib.ansible_run import start_playbook
from gpuops_testlib.lab_pods import (
    LONG_BENCHMARK, NODE_CONTAINER_PREFIX, SHORT_BENCHMARK_ARGS, VERIFY_TRAINING, WORKLOAD_BENCHMARK, WORKLOAD_PYTHON,
    cache_env, controller_inventory, fault_mid_run, kubectl, module_namespace, verify_training, workload_image,
)
from main_job import KUBECONFIG

NAMESPACE = "e2e-job"
PORT = 22122
RUN_TASK = "Run mpirun over the workers and wait until it succeeds (failing as soon as it fails)"
FAIL_TASK = "Fail with why the run failed and the end of its log"


def _inventory(path, name, **variables):
    return controller_inventory(path, dict({
        "gpuops_kubeconfig": KUBECONFIG, "gpuops_launcher": "job", "kube_job_namespace": NAMESPACE,
        "job_launcher_name": name, "job_launcher_image": workload_image(), "kube_job_image_pull_policy": "Never",
        "job_launcher_workers": 2, "job_launcher_host_network": True, "job_launcher_ssh_port": PORT,
        "kube_job_python": WORKLOAD_PYTHON, "kube_job_benchmark_path": WORKLOAD_BENCHMARK,
        "kube_job_benchmark_args": SHORT_BENCHMARK_ARGS, "kube_job_wait_timeout": 600}, **variables))


def _verify(tmp_path, name, options=(), **variables):
    return verify_training(tmp_path, _inventory(tmp_path / (name + ".yml"), name, **variables), options)


_job_namespace = module_namespace("job_namespace", NAMESPACE)


def _objects(name):
    """The Jobs, Services and Secrets of the run `name`."""
    done = kubectl("get", "jobs,services,secrets", "-n", NAMESPACE, "-o", "json", check=False)
    if done.returncode != 0:
        return []
    return sorted("%s/%s" % (item["kind"], item["metadata"]["name"]) for item in json.loads(done.stdout)["items"]
                  if item["metadata"]["name"] == name or item["metadata"]["name"].startswith(name + "-"))


def test_workers_and_an_mpirun_job_pass_the_verdict_one_worker_per_node_then_go_and_run_once(job_namespace, tmp_path):
    planned = _verify(tmp_path, "hostnet", options=("--check", "--diff"))
    assert planned.rc == 0, planned.explain()
    container = planned.result(RUN_TASK)["job"]["spec"]["template"]["spec"]["containers"][0]
    command = container["command"]
    assert command[:5] == ["mpirun", "-np", "2", "-H",
                           "hostnet-workers-0.hostnet-workers:1,hostnet-workers-1.hostnet-workers:1"], command
    # mpirun is told the workers' sshd port in its environment, under Open MPI 4's name and Open MPI 5's.
    env = dict((item["name"], item.get("value")) for item in container["env"])
    assert env["OMPI_MCA_plm_rsh_args"] == env["PRTE_MCA_plm_ssh_args"] == "-p %d" % PORT, env
    assert _objects("hostnet") == []

    ran = _verify(tmp_path, "hostnet")
    assert ran.rc == 0, ran.explain()
    with open(str(tmp_path / "cache" / "training" / "hostnet.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    assert report["passed"] is True and report["ranks"] == 2, report
    # Host networking: each rank names its node, and there is one on each.
    hosts = sorted({rank["host"] for rank in report["per_rank"]})
    assert len(hosts) == 2, report["per_rank"]
    assert report["summary"][0] == "verdict:     PASSED (worker pods and an mpirun Job (%s/hostnet))" % NAMESPACE
    sys.stderr.write("job launcher: %s\n" % "\n".join(report["summary"]))
    # The workers, their Service and their key are gone; the mpirun Job stays, with its log.
    assert _objects("hostnet") == ["Job/hostnet"]

    again = _verify(tmp_path, "hostnet")
    assert again.rc == 0, again.explain()
    assert again.result(RUN_TASK)["changed"] is False
    assert again.changed_tasks() == [], again.changed_tasks()


@pytest.mark.parametrize("name, variables, expected", [
    ("no-image", {"job_launcher_image": "localhost/gpuops-no-such-image:1"}, "ErrImageNeverPull"),
    ("too-many-gpus", {"job_launcher_gpus_per_worker": 3}, "Insufficient nvidia.com/gpu"),
])
def test_workers_that_cannot_start_fail_within_seconds_and_are_taken_down(job_namespace, tmp_path, name, variables,
                                                                          expected):
    started = time.time()
    run = _verify(tmp_path, name, **variables)
    seconds = time.time() - started
    assert run.rc != 0
    message = dict(run.failed())[FAIL_TASK]["msg"]
    assert expected in message, message
    assert seconds < 60, "reported after %.0f s" % seconds
    assert _objects(name) == []


def _kill_worker_sshd(name):
    """SIGKILL the sshd of worker 1 (the ranks' parent there), from its node."""
    pods = json.loads(kubectl("get", "pods", "-n", NAMESPACE, "-l", "batch.kubernetes.io/job-name=%s-workers" % name,
                              "-o", "json").stdout)["items"]
    node = [pod["spec"]["nodeName"] for pod in pods if pod["metadata"]["name"].startswith(name + "-workers-1-")][0]
    subprocess.run(["podman", "exec", NODE_CONTAINER_PREFIX + node, "pkill", "-KILL", "-f",
                    "^sshd: /usr/sbin/sshd -De -p %d" % PORT], check=True)


def test_a_worker_killed_mid_run_fails_the_run_within_seconds_with_its_log_kept(job_namespace, tmp_path):
    inventory = _inventory(tmp_path / "killed.yml", "killed", kube_job_benchmark_args=LONG_BENCHMARK[2:])
    run, seconds = fault_mid_run(start_playbook(VERIFY_TRAINING, inventory, env=cache_env(tmp_path)),
                                 lambda: "Iter #" in kubectl("logs", "-n", NAMESPACE, "job/killed", check=False).stdout,
                                 lambda: _kill_worker_sshd("killed"))
    assert run.rc != 0
    message = dict(run.failed())[FAIL_TASK]["msg"]
    assert "the Job failed" in message, message
    with open(str(tmp_path / "cache" / "training" / "killed.log"), encoding="utf-8") as handle:
        assert "Iter #" in handle.read()
    sys.stderr.write("job launcher, worker killed: the task returned %.1f s later\n" % seconds)
    assert seconds < 30
    assert _objects("killed") == ["Job/killed"]
