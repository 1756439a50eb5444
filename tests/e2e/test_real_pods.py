# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What only real pods show, on the lab make lab made: the nodes' kubelets admit hugepages requests, and the
faults users of the MPI Operator meet (an image that cannot be pulled, more GPUs than a node has, a worker
killed mid-run, the API server restarted) are reported by gpuops.cluster.mpijob within seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid

import pytest
import yaml

from gpuops_testlib.ansible_run import finish, run_playbook, start_playbook
from gpuops_testlib.lab_pods import (
    LAB_KUBECONFIG, fault_mid_run, job_play, kill_worker, kubectl, lab_kubectl_path, launcher_log, mpijob_args,
    pod_failed, pod_of_job, wait_for, workload_image,
)
from main_job import RUN_DIR


def _pod_spec(name, node, command, resources, volumes=(), mounts=()):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "restartPolicy": "Never", "volumes": list(volumes),
                     "containers": [{"name": "main", "image": workload_image(), "imagePullPolicy": "Never",
                                     "command": command, "resources": {"limits": resources},
                                     "volumeMounts": list(mounts)}]}}


def _run_pod(pod, timeout="120s"):
    """Create the pod, wait until it ends, return (phase, log); the pod is deleted afterwards."""
    name = pod["metadata"]["name"]
    kubectl("apply", "-f", "-", stdin=json.dumps(pod))
    try:
        kubectl("wait", "pod/" + name, "--for=jsonpath={.status.phase}=Succeeded", "--timeout=" + timeout, check=False)
        phase = kubectl("get", "pod/" + name, "-o", "jsonpath={.status.phase}").stdout
        return phase, kubectl("logs", "pod/" + name, check=False).stdout
    finally:
        kubectl("delete", "pod/" + name, "--wait=false", check=False)


MAP_ONE_PAGE = (
    "import mmap, os\n"
    "print(open('/proc/meminfo').read().split('HugePages_Total:')[1].split()[0], 'pages in the pool')\n"
    "fd = os.open('/hugepages/page', os.O_CREAT | os.O_RDWR)\n"
    "os.ftruncate(fd, 2 * 1024 * 1024)\n"
    "page = mmap.mmap(fd, 2 * 1024 * 1024)\n"
    "page[:5] = b'hello'\n"
    "print('mapped a 2 MiB page:', page[:5].decode())\n")


def test_a_pod_requesting_hugepages_is_admitted_and_maps_its_page(second_run):
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    capacity = kubectl("get", "node/node1", "-o", "jsonpath={.status.allocatable.hugepages-2Mi}").stdout
    assert capacity == "128Mi", capacity
    pod = _pod_spec("hugepages-" + uuid.uuid4().hex[:6], "node1", ["python3", "-c", MAP_ONE_PAGE],
                    {"hugepages-2Mi": "4Mi", "memory": "256Mi", "cpu": "100m"},
                    volumes=[{"name": "hugepages", "emptyDir": {"medium": "HugePages"}}],
                    mounts=[{"name": "hugepages", "mountPath": "/hugepages"}])
    phase, log = _run_pod(pod)
    assert phase == "Succeeded", (phase, log)
    assert "64 pages in the pool" in log and "mapped a 2 MiB page: hello" in log, log


# ---- Faults in real pods: gpuops.cluster.mpijob must return with the reason within seconds, never hang. ----

FAULTS_NAMESPACE = "e2e-faults"


def _job_play(tmp_path, name, **args):
    """A playbook of one gpuops.cluster.mpijob task that creates the job and waits for it."""
    return job_play(tmp_path / (name + ".yml"), [{"name": "job", "register": "job", "ignore_errors": True,
                                                  "gpuops.cluster.mpijob": mpijob_args(FAULTS_NAMESPACE, name, **args)}])


@pytest.fixture(name="faults")
def _faults_namespace(second_run):
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    kubectl("create", "namespace", FAULTS_NAMESPACE, check=False)
    yield
    kubectl("delete", "mpijobs", "--all", "-n", FAULTS_NAMESPACE, "--wait=true", "--timeout=120s", check=False)


def _job_result(run):
    return run.result("job")


def test_an_image_that_cannot_be_pulled_fails_the_job_within_seconds(faults, tmp_path):
    started = time.time()
    run = run_playbook(_job_play(tmp_path, "no-image", image="localhost/gpuops-no-such-image:1"), timeout=300)
    seconds = time.time() - started
    job = _job_result(run)
    assert job["failed"] is True, job
    assert "container(s) cannot start" in job["msg"] and "ErrImageNeverPull" in job["msg"], job["msg"]
    assert "localhost/gpuops-no-such-image:1" in job["msg"], job["msg"]
    assert seconds < 60, "reported after %.0f s" % seconds
    sys.stderr.write("image that cannot be pulled: reported in %.1f s: %s\n" % (seconds, job["msg"]))


def test_a_launcher_that_fails_is_reported_with_its_log_which_the_cluster_keeps(faults, tmp_path):
    """The launcher pod is never restarted in place, so the Job controller does not delete it (and its log)."""
    started = time.time()
    play = _job_play(tmp_path, "launcher-fails", command=["sh", "-c", "echo the launcher gives up here; exit 3"],
                     backoff_limit=0)
    run = run_playbook(play, timeout=300)
    seconds = time.time() - started
    job = _job_result(run)
    assert job["failed"] is True, job
    assert "the MPIJob failed: BackoffLimitExceeded: Job has reached the specified backoff limit" in job["msg"], job["msg"]
    assert job["launcher_log"] == "the launcher gives up here\n", job
    assert seconds < 60, "reported after %.0f s" % seconds
    launcher = pod_of_job(FAULTS_NAMESPACE, "launcher-fails", "launcher")
    assert launcher["status"]["phase"] == "Failed", launcher["status"]
    assert launcher_log(FAULTS_NAMESPACE, "launcher-fails") == "the launcher gives up here\n"


def test_spread_workers_land_on_different_nodes_though_one_node_has_gpus_for_both(faults, tmp_path):
    """The cutoff-aggregation example: one GPU taken from each of the two nodes (each has two)."""
    run = run_playbook(_job_play(tmp_path, "spread", gpus_per_worker=1, spread_workers=True, clean_pod_policy="None",
                                 command=["sh", "-c", "echo spread"]), timeout=300)
    job = _job_result(run)
    assert not job.get("failed"), job
    nodes = sorted(pod["node"] for pod in job["pods"] if pod["role"] == "worker")
    assert nodes == ["node1", "node2"], job["pods"]


def test_more_gpus_than_any_node_has_is_unschedulable_with_the_schedulers_message(faults, tmp_path):
    started = time.time()
    run = run_playbook(_job_play(tmp_path, "too-many-gpus", gpus_per_worker=3), timeout=300)
    seconds = time.time() - started
    job = _job_result(run)
    assert job["failed"] is True, job
    assert "pod(s) cannot be scheduled" in job["msg"], job["msg"]
    assert "Insufficient nvidia.com/gpu" in job["msg"], job["msg"]
    assert seconds < 60, "reported after %.0f s" % seconds


def test_a_worker_killed_mid_run_is_reported_with_its_events_and_the_launcher_log(faults, tmp_path):
    def kill_until_failed():
        kill_worker(FAULTS_NAMESPACE, "killed-worker-1")
        wait_for(lambda: pod_failed(FAULTS_NAMESPACE, "killed-worker-1"), 60, "the worker pod's phase Failed")

    run, seconds = fault_mid_run(start_playbook(_job_play(tmp_path, "killed", gpus_per_worker=2)),
                                 lambda: "Iter #" in launcher_log(FAULTS_NAMESPACE, "killed"), kill_until_failed)
    job = _job_result(run)
    assert job["failed"] is True, job
    assert "killed-worker-1" in job["msg"] and "137" in job["msg"], job["msg"]
    failed = {pod["name"]: pod for pod in job["failed_pods"]}
    assert "killed-worker-1" in failed, job["failed_pods"]
    assert any(event["reason"] == "Started" for event in failed["killed-worker-1"]["events"]), failed
    assert "Iter #" in job["launcher_log"], job["launcher_log"][-2000:]
    sys.stderr.write("worker killed: the pod's status changed, then the task returned %.1f s later\n" % seconds)
    assert seconds < 10


def _control_plane(action):
    """kwokctl stop or start for the lab's control plane (etcd, the API server, controllers, scheduler)."""
    kwokctl = [os.path.join(os.path.dirname(lab_kubectl_path()), "kwokctl"), "--name", "gpuops-lab"]
    env = dict(os.environ, KWOK_WORKDIR=os.path.join(RUN_DIR, "kwok"))
    subprocess.run(kwokctl + [action, "cluster"], env=env, check=True, capture_output=True)
    if action == "stop":
        assert kubectl("get", "--raw=/readyz", "--request-timeout=3s", check=False).returncode != 0


def _launcher_running(job_name):
    return (pod_of_job(FAULTS_NAMESPACE, job_name, "launcher") or {}).get("status", {}).get("phase") == "Running"


def test_an_api_server_restart_while_waiting_is_ridden_out_and_an_outage_is_bounded(faults, tmp_path):
    started = start_playbook(_job_play(tmp_path, "restart", command=["sh", "-c", "sleep 60"]))
    try:
        wait_for(lambda: _launcher_running("restart"), 300, "the launcher pod running")
        _control_plane("stop")
        time.sleep(5)
        _control_plane("start")
        run = finish(started, timeout=300)
    finally:
        if started[1].poll() is None:
            started[1].kill()
    job = _job_result(run)
    assert not job.get("failed"), job
    assert job["phase"] == "Succeeded" and job["replica_statuses"]["Launcher"]["succeeded"] == 1, job

    # An API server that stays away: the wait gives up after its retries, naming the server, and claims nothing.
    started = start_playbook(_job_play(tmp_path, "outage", command=["sh", "-c", "sleep 120"], api_retries=2))
    try:
        wait_for(lambda: _launcher_running("outage"), 300, "the launcher pod running")
        _control_plane("stop")
        run = finish(started, timeout=120)
    finally:
        if started[1].poll() is None:
            started[1].kill()
        _control_plane("start")
        wait_for(lambda: kubectl("get", "--raw=/readyz", "--request-timeout=3s", check=False).returncode == 0, 120,
                 "the API server ready again")
    job = _job_result(run)
    assert job["failed"] is True, job
    with open(LAB_KUBECONFIG, encoding="utf-8") as handle:
        server = yaml.safe_load(handle)["clusters"][0]["cluster"]["server"]
    assert "stayed unavailable while waiting for MPIJob %s/outage (3 attempt(s)" % FAULTS_NAMESPACE in job["msg"], job
    assert server.split("//")[1] in job["msg"], (server, job["msg"])
    assert job.get("phase") != "Succeeded", job
