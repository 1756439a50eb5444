# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops_launcher=pod on the lab make lab made: horovodrun in one real pod (two CPU ranks of the workload
image), judged by the verdict; check mode, a second run, and the faults (an image that cannot be pulled, more
GPUs than a node has, a rank killed mid-run), each reported within seconds with the pod's log kept."""

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

NAMESPACE = "e2e-pod"


def _inventory(path, name, **variables):
    return controller_inventory(path, dict({
        "gpuops_kubeconfig": KUBECONFIG, "gpuops_launcher": "pod", "kube_job_namespace": NAMESPACE,
        "pod_launcher_name": name, "pod_launcher_image": workload_image(), "kube_job_image_pull_policy": "Never",
        "pod_launcher_ranks": 2, "kube_job_python": WORKLOAD_PYTHON,
        "kube_job_benchmark_path": WORKLOAD_BENCHMARK, "kube_job_benchmark_args": SHORT_BENCHMARK_ARGS,
        "kube_job_wait_timeout": 600}, **variables))


def _verify(tmp_path, name, options=(), **variables):
    return verify_training(tmp_path, _inventory(tmp_path / (name + ".yml"), name, **variables), options)


_pod_namespace = module_namespace("pod_namespace", NAMESPACE)


def _jobs():
    done = kubectl("get", "jobs", "-n", NAMESPACE, "-o", "json", check=False)
    return [job["metadata"]["name"] for job in json.loads(done.stdout)["items"]] if done.returncode == 0 else []


RUN_TASK = "Run the ranks in one pod and wait until it succeeds (failing as soon as it fails)"


def test_horovodrun_in_one_pod_passes_the_verdict_after_a_check_that_creates_nothing_and_runs_once(
        pod_namespace, tmp_path):
    planned = _verify(tmp_path, "single", options=("--check", "--diff"))
    assert planned.rc == 0, planned.explain()
    container = planned.result(RUN_TASK)["job"]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][:5] == ["horovodrun", "-np", "2", "-H", "localhost:2"], container
    assert "single" not in _jobs()

    ran = _verify(tmp_path, "single")
    assert ran.rc == 0, ran.explain()
    with open(str(tmp_path / "cache" / "training" / "single.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    assert report["passed"] is True and report["ranks"] == 2, report
    assert report["summary"][0] == "verdict:     PASSED (one pod running horovodrun (%s/single))" % NAMESPACE
    sys.stderr.write("pod launcher: %s\n" % "\n".join(report["summary"]))

    again = _verify(tmp_path, "single")
    assert again.rc == 0, again.explain()
    assert again.result(RUN_TASK)["changed"] is False


@pytest.mark.parametrize("name, variables, expected", [
    ("no-image", {"pod_launcher_image": "localhost/gpuops-no-such-image:1"}, "ErrImageNeverPull"),
    ("too-many-gpus", {"pod_launcher_gpus": 3}, "Insufficient nvidia.com/gpu"),
])
def test_a_pod_that_cannot_start_fails_within_seconds(pod_namespace, tmp_path, name, variables, expected):
    started = time.time()
    run = _verify(tmp_path, name, **variables)
    seconds = time.time() - started
    assert run.rc != 0
    message = dict(run.failed())["Fail with why the run failed and the end of its log"]["msg"]
    assert expected in message, message
    assert seconds < 60, "reported after %.0f s" % seconds


def _pod_log(name):
    return kubectl("logs", "-n", NAMESPACE, "job/" + name, check=False).stdout


def _kill_one_rank(name):
    """SIGKILL the benchmark process of one rank, from the node that runs the pod."""
    pod = json.loads(kubectl("get", "pods", "-n", NAMESPACE, "-l", "batch.kubernetes.io/job-name=" + name,
                             "-o", "json").stdout)["items"][0]
    node = NODE_CONTAINER_PREFIX + pod["spec"]["nodeName"]
    pids = subprocess.run(["podman", "exec", node, "pgrep", "-f", "gpuops_benchmark.py --framework"],
                          check=True, capture_output=True, text=True).stdout.split()
    ranks = [pid for pid in pids
             if "horovodrun" not in subprocess.run(["podman", "exec", node, "cat", "/proc/%s/cmdline" % pid],
                                                   capture_output=True, text=True, check=False).stdout]
    subprocess.run(["podman", "exec", node, "kill", "-KILL", ranks[-1]], check=True)


def test_a_rank_killed_mid_run_fails_the_run_within_seconds_and_its_log_is_kept(pod_namespace, tmp_path):
    inventory = _inventory(tmp_path / "killed.yml", "killed", pod_launcher_command=[
        "horovodrun", "-np", "2", "-H", "localhost:2"] + LONG_BENCHMARK)
    run, seconds = fault_mid_run(start_playbook(VERIFY_TRAINING, inventory, env=cache_env(tmp_path)),
                                 lambda: "Iter #" in _pod_log("killed"), lambda: _kill_one_rank("killed"))
    assert run.rc != 0
    message = dict(run.failed())["Fail with why the run failed and the end of its log"]["msg"]
    assert "the Job failed: BackoffLimitExceeded" in message, message
    with open(str(tmp_path / "cache" / "training" / "killed.log"), encoding="utf-8") as handle:
        assert "Iter #" in handle.read()
    sys.stderr.write("pod launcher, rank killed: the task returned %.1f s later\n" % seconds)
    assert seconds < 30
