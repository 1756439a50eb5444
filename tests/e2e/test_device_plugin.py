# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA's device plugin on the lab make lab made: its DaemonSet's pods run on the GPU-labelled nodes and only
there, and, as on any node without a GPU, each logs that NVML did not start and that it found no device."""

from __future__ import annotations

import json

from gpuops_testlib.lab_pods import wait_for
from gpuops_testlib.versions import pinned
from main_job import kubectl

NAMESPACE = "nvidia-device-plugin"
DAEMONSET = "nvidia-device-plugin"
GPU_LABEL = "nvidia.com/gpu.present"


def _plugin_pods():
    pods = json.loads(kubectl("get", "pods", "-n", NAMESPACE, "-o", "json").stdout)["items"]
    return {pod["spec"].get("nodeName"): pod for pod in pods if not pod["metadata"].get("deletionTimestamp")}


def _ready(pod):
    conditions = pod.get("status", {}).get("conditions", [])
    return pod["status"].get("phase") == "Running" and any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def _gpu_labelled_nodes():
    return sorted(kubectl("get", "nodes", "-l", GPU_LABEL + "=true", "-o", "jsonpath={.items[*].metadata.name}").stdout.split())


def test_the_plugin_runs_on_each_gpu_node_and_says_it_found_no_gpu(second_run):
    assert second_run.rc == 0, second_run.explain()
    assert _gpu_labelled_nodes() == ["node1", "node2"]
    pods = _plugin_pods()
    assert sorted(pods) == ["node1", "node2"], sorted(pods)
    for node, pod in pods.items():
        assert _ready(pod), (node, pod["status"])
        log = kubectl("logs", "-n", NAMESPACE, pod["metadata"]["name"]).stdout
        assert '"Starting NVIDIA Device Plugin" version="%s"' % pinned("lab_nvidia_device_plugin") in log, log[-2000:]
        assert "Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND." in log, log[-2000:]
        assert "No devices found. Waiting indefinitely." in log, log[-2000:]


def test_a_node_without_the_gpu_label_loses_its_plugin_pod_and_gets_it_back(second_run):
    assert second_run.rc == 0, second_run.explain()
    kubectl("label", "node", "node2", GPU_LABEL + "-")
    try:
        wait_for(lambda: sorted(_plugin_pods()) == ["node1"], 60, "the plugin pod on node2 to go")
        status = json.loads(kubectl("get", "daemonset", DAEMONSET, "-n", NAMESPACE, "-o", "json").stdout)["status"]
        assert status["desiredNumberScheduled"] == 1, status
    finally:
        kubectl("label", "node", "node2", GPU_LABEL + "=true", "--overwrite")
    wait_for(lambda: sorted(node for node, pod in _plugin_pods().items() if _ready(pod)) == ["node1", "node2"], 90,
             "the plugin pod on node2 to be Ready again")
