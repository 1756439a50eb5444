# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private registry credentials on the lab make lab made: one set of gpuops_registry_* variables puts a
docker-registry Secret in each namespace that pulls images, the device plugin's DaemonSet and an MPIJob's pods
(run for real) reference it, and no run, even with -v and --diff, prints the token. The lab's images are local,
so the pulls themselves never reach the (made-up) registry."""

from __future__ import annotations

import base64
import json
import os
import uuid

from gpuops_testlib.ansible_run import ansible_env, run_playbook
from gpuops_testlib.lab_pods import (
    SHORT_BENCHMARK_ARGS, WORKLOAD_BENCHMARK, WORKLOAD_PYTHON, controller_inventory, kubectl, module_namespace,
    workload_image,
)
from main_job import KUBECONFIG, LAB_DIR, REPO_ROOT

NAMESPACE = "e2e-registry"
PLUGIN_NAMESPACE = "e2e-registry-plugin"
SERVER = "registry.lab.invalid:5000"
USER = "$oauthtoken"
TOKEN = "e2e-token-" + uuid.uuid4().hex
SECRET = "gpuops-registry"
PLAYBOOKS = os.path.join(REPO_ROOT, "playbooks")

_job_namespace = module_namespace("registry_job_namespace", NAMESPACE)
_plugin_namespace = module_namespace("registry_plugin_namespace", PLUGIN_NAMESPACE)


def _inventory(tmp_path):
    return controller_inventory(tmp_path / "inventory.yml", {
        "gpuops_kubeconfig": KUBECONFIG, "gpuops_registry_server": SERVER, "gpuops_registry_username": USER,
        "gpuops_registry_token": TOKEN, "nvidia_device_plugin_namespace": PLUGIN_NAMESPACE,
        # No lab node is selected for this DaemonSet's pods: its image is NVIDIA's, which the lab cannot pull, and
        # the lab's own plugin already runs on each node. The test is about the Secret the DaemonSet references.
        "nvidia_device_plugin_node_selector": {"gpuops.io/device-plugin-image-available": "true"},
        "gpuops_launcher": "mpijob", "kube_job_namespace": NAMESPACE, "mpijob_launcher_name": "pulled",
        "mpijob_launcher_image": workload_image(), "kube_job_image_pull_policy": "Never",
        "mpijob_launcher_workers": 2, "kube_job_python": WORKLOAD_PYTHON,
        "kube_job_benchmark_path": WORKLOAD_BENCHMARK, "kube_job_benchmark_args": SHORT_BENCHMARK_ARGS,
        "kube_job_wait_timeout": 600})


def _run(playbook, inventory, tmp_path, *options, json_output=False):
    env = ansible_env(json_output=json_output, GPUOPS_CACHE=str(tmp_path / "cache"), TMPDIR=os.path.join(LAB_DIR, "tmp"))
    return run_playbook(os.path.join(PLAYBOOKS, playbook), inventory, options=list(options), env=env, timeout=900)


def _secret(namespace):
    secret = json.loads(kubectl("get", "secret", "-n", namespace, SECRET, "-o", "json").stdout)
    return secret["type"], json.loads(base64.b64decode(secret["data"][".dockerconfigjson"]))


def _assert_nothing_secret_printed(done):
    for shown in (TOKEN, base64.b64encode(("%s:%s" % (USER, TOKEN)).encode()).decode()):
        assert shown not in done.output, "a run printed the registry token"


def test_one_set_of_credentials_reaches_every_namespace_and_pod_and_is_never_printed(
        registry_job_namespace, registry_plugin_namespace, tmp_path):
    inventory = _inventory(tmp_path)
    stack = _run("gpu_stack.yml", inventory, tmp_path, "-v", "--diff", "--tags", "nvidia_device_plugin")
    assert stack.rc == 0, stack.output[-4000:]
    _assert_nothing_secret_printed(stack)
    verify = _run("verify_training.yml", inventory, tmp_path, "-v", "--diff")
    assert verify.rc == 0, verify.output[-4000:]
    _assert_nothing_secret_printed(verify)

    expected_auth = base64.b64encode(("%s:%s" % (USER, TOKEN)).encode()).decode()
    for namespace in (NAMESPACE, PLUGIN_NAMESPACE):
        kind, config = _secret(namespace)
        assert kind == "kubernetes.io/dockerconfigjson"
        assert list(config["auths"]) == [SERVER] and config["auths"][SERVER]["auth"] == expected_auth
    pulled_with = [{"name": SECRET}]
    daemonset = json.loads(kubectl("get", "daemonset", "-n", PLUGIN_NAMESPACE, "nvidia-device-plugin", "-o",
                                   "json").stdout)
    assert daemonset["spec"]["template"]["spec"]["imagePullSecrets"] == pulled_with
    mpijob = json.loads(kubectl("get", "mpijob", "-n", NAMESPACE, "pulled", "-o", "json").stdout)
    for replica in mpijob["spec"]["mpiReplicaSpecs"].values():
        assert replica["template"]["spec"]["imagePullSecrets"] == pulled_with
    pods = json.loads(kubectl("get", "pods", "-n", NAMESPACE, "-o", "json").stdout)["items"]
    assert pods, "the MPIJob left no pod to read"
    assert all(pod["spec"]["imagePullSecrets"] == pulled_with for pod in pods)

    again = _run("gpu_stack.yml", inventory, tmp_path, "--tags", "nvidia_device_plugin", json_output=True)
    assert again.rc == 0, again.explain()
    assert again.changed_tasks() == []
    # Gone before the next test: the tests that follow compare the API's objects before and after a run.
    kubectl("delete", "namespace", NAMESPACE, PLUGIN_NAMESPACE, "--wait=true", "--timeout=180s")
