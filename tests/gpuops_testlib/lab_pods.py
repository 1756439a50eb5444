# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Acting on real pods of the lab make lab made (its kubelets run them in the podman nodes): reading pods and
logs with the lab's kubectl, killing a worker's process as a crash would, and MPIJob plays for the waits that
the e2e tests and bench/mpijob_failure_latency.py compare."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time

import pytest
import yaml

from gpuops_testlib.ansible_run import CACHE_ROOT, REPO_ROOT, ansible_env, finish, run_playbook, write_play

LAB_KUBECONFIG = os.path.join(CACHE_ROOT, "lab", "control-plane", "kubeconfig")
NODE_CONTAINER_PREFIX = "gpuops-lab-"
JOB_LABELS = "training.kubeflow.org/job-name=%s,training.kubeflow.org/job-role=%s"
# The benchmark long enough to be killed mid-run: TensorFlow ranks on CPU, a thousand iterations.
LONG_BENCHMARK = ["/opt/gpuops/venv/bin/python3", "/opt/gpuops/benchmark/gpuops_benchmark.py", "--framework",
                  "tensorflow", "--device", "cpu", "--model", "small_cnn", "--batch-size", "8",
                  "--num-warmup-batches", "1", "--num-iters", "1000", "--num-batches-per-iter", "1"]

# The benchmark a launcher test runs to a verdict: two iterations of one batch.
SHORT_BENCHMARK_ARGS = ["--framework", "tensorflow", "--device", "cpu", "--model", "small_cnn", "--batch-size", "8",
                        "--num-warmup-batches", "1", "--num-iters", "2", "--num-batches-per-iter", "1"]
# Where the lab's workload image holds the benchmark, as a launcher role's variables name them.
WORKLOAD_PYTHON = "/opt/gpuops/venv/bin/python3"
WORKLOAD_BENCHMARK = "/opt/gpuops/benchmark/gpuops_benchmark.py"
VERIFY_TRAINING = os.path.join(REPO_ROOT, "playbooks", "verify_training.yml")


def module_namespace(fixture_name, namespace):
    """A module-scoped fixture, named fixture_name, that asserts the lab is up (second_run) and deletes the namespace
    at the module's end: a namespace being deleted takes no new object, so one serves the whole module."""
    @pytest.fixture(name=fixture_name, scope="module")
    def _namespace(second_run):
        assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
        yield
        kubectl("delete", "namespace", namespace, "--wait=false", check=False)
    return _namespace


def controller_inventory(path, variables):
    """An inventory of localhost alone (this Python) with these variables for all, as a launcher run on the
    controller needs; returns the path."""
    localhost = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    with open(str(path), "w", encoding="utf-8") as handle:
        yaml.safe_dump({"all": {"hosts": {"localhost": localhost}, "vars": variables}}, handle)
    return str(path)


def cache_env(tmp_path):
    """ansible-playbook's environment with GPUOPS_CACHE under tmp_path: a launcher's log and report land in
    tmp_path/cache/training."""
    return ansible_env(GPUOPS_CACHE=str(tmp_path / "cache"))


def verify_training(tmp_path, inventory, options=()):
    """playbooks/verify_training.yml on `inventory` to its end, with cache_env(tmp_path)."""
    return run_playbook(VERIFY_TRAINING, inventory, options=options, env=cache_env(tmp_path), timeout=900)


def verified(tmp_path, inventory, run_name, ranks):
    """verify_training.yml on `inventory`, passed with `ranks` ranks: (the run's report, its log)."""
    ran = verify_training(tmp_path, inventory)
    assert ran.rc == 0, ran.explain()
    training = tmp_path / "cache" / "training"
    report = json.loads((training / (run_name + ".json")).read_text())
    assert report["passed"] is True and report["ranks"] == ranks, report
    return report, (training / (run_name + ".log")).read_text()


# Cached: kubectl() runs in polling loops, and asking the build script costs a bash and a go process.
@functools.lru_cache(maxsize=None)
def lab_kubectl_path():
    """The kubectl of the lab's kube build (tools/build_kube_binaries.sh)."""
    bin_dir = subprocess.run(["bash", os.path.join(REPO_ROOT, "tools", "build_kube_binaries.sh"), "--print-dir"],
                             capture_output=True, text=True, check=True).stdout.strip()
    return os.path.join(bin_dir, "kubectl")


@functools.lru_cache(maxsize=None)
def workload_image():
    """The lab's workload image name, from tools/build_workload_image.sh (builds nothing; the name is a hash of
    the image's inputs, fixed for a run)."""
    return subprocess.run(["bash", os.path.join(REPO_ROOT, "tools", "build_workload_image.sh"), "--name"],
                          capture_output=True, text=True, check=True).stdout.strip()


def kubectl(*args, check=True, stdin=None):
    """The lab's kubectl with its admin kubeconfig."""
    return subprocess.run([lab_kubectl_path(), "--kubeconfig", LAB_KUBECONFIG] + list(args), input=stdin,
                          capture_output=True, text=True, check=check)


def read_pod(namespace, name):
    done = kubectl("get", "pod", name, "-n", namespace, "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def pod_of_job(namespace, job_name, role):
    done = kubectl("get", "pods", "-n", namespace, "-l", JOB_LABELS % (job_name, role), "-o", "json", check=False)
    items = json.loads(done.stdout)["items"] if done.returncode == 0 else []
    return items[0] if items else None


def launcher_log(namespace, job_name):
    return kubectl("logs", "-n", namespace, "job/" + job_name + "-launcher", check=False).stdout


def wait_for(predicate, timeout, what, interval=0.1):
    """predicate's first true value, checked every interval seconds; AssertionError after timeout."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("timed out after %d s waiting for %s" % (timeout, what))


def fault_mid_run(started, has_iterated, fault):
    """For a playbook start_playbook started: wait (up to 600 s) until has_iterated() is true, then call
    fault(), which returns once the fault shows. Returns the finished run and the seconds from the fault to
    the playbook's end; the playbook never outlives this."""
    try:
        wait_for(has_iterated, 600, "the benchmark's first iteration")
        fault()
        faulted = time.time()
        run = finish(started, timeout=300)
        return run, time.time() - faulted
    finally:
        if started[1].poll() is None:
            started[1].kill()


def kill_worker(namespace, pod_name):
    """SIGKILL the worker's main process (its sshd, from which mpirun's ranks hang; sshd retitles itself) from
    the node that runs it, as a crash or the OOM killer would. Returns the node."""
    node = read_pod(namespace, pod_name)["spec"]["nodeName"]
    subprocess.run(["podman", "exec", NODE_CONTAINER_PREFIX + node, "pkill", "-KILL", "-f", "^sshd: /usr/sbin/sshd -De"],
                   check=True, capture_output=True)
    return node


def pod_failed(namespace, pod_name):
    return (read_pod(namespace, pod_name) or {}).get("status", {}).get("phase") == "Failed"


def mpijob_args(namespace, name, **args):
    """gpuops.cluster.mpijob arguments for a two-worker job of the lab's workload image running LONG_BENCHMARK."""
    return dict({"kubeconfig": LAB_KUBECONFIG, "namespace": namespace, "name": name, "image": workload_image(),
                 "image_pull_policy": "Never", "workers": 2, "slots_per_worker": 1,
                 "worker_command": ["/usr/sbin/sshd", "-De"],
                 "command": ["mpirun", "-np", "2", "--allow-run-as-root", "-bind-to", "none"] + LONG_BENCHMARK,
                 "wait": True, "wait_timeout": 600, "wait_sleep": 0.5}, **args)


def job_play(path, tasks):
    """A playbook of these tasks on localhost, with the Python running this."""
    return write_play(path, {"name": os.path.basename(str(path)), "hosts": "localhost", "connection": "local",
                             "gather_facts": False, "vars": {"ansible_python_interpreter": sys.executable},
                             "tasks": tasks})
