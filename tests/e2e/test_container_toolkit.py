# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NVIDIA Container Toolkit on the lab make lab made. site.yml's nvidia_container_toolkit role installed the
toolkit on each node from the lab's signed repository in NVIDIA's layout (nvidia-ctk and nvidia-container-runtime
built from NVIDIA's source at the pinned tag; libnvidia-container an empty stand-in), and nvidia-ctk added the
NVIDIA runtime to each node's containerd as its default, and containerd restarted with it. Here: the running
containerd has the runtime, pods run through nvidia-container-runtime (by default and by the nvidia
RuntimeClass), the versions report shows each node's toolkit against the pin, and a configuration change
restarts containerd on one node, drained (the main job's finished MPIJob goes with its pods) and uncordoned,
with the kubelet reconnecting. No GPU: the runtime finds no
device to inject and runs the container as runc does."""

from __future__ import annotations

import base64
import json
import os
import subprocess

import pytest

from gpuops_testlib.ansible_run import CACHE_ROOT, ansible_env, run_playbook
from gpuops_testlib.lab_control_plane import LAB_INVENTORY
from gpuops_testlib.lab_pods import kubectl, wait_for, workload_image
from gpuops_testlib.versions import pinned
from main_job import LAB_DIR, REPO_ROOT

NAMESPACE = "e2e-toolkit"
NODES = ("node1", "node2")
PACKAGES = ("nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools",
            "libnvidia-container1")
PREPARE_NODES = os.path.join(REPO_ROOT, "playbooks", "prepare_nodes.yml")
RUNTIME_BINARY = "/usr/bin/nvidia-container-runtime"


@pytest.fixture(name="toolkit_namespace", scope="module")
def _toolkit_namespace(second_run):
    assert second_run.rc == 0, "the lab is not up: " + second_run.explain()
    kubectl("create", "namespace", NAMESPACE)
    yield
    kubectl("delete", "namespace", NAMESPACE, "--wait=true", "--timeout=180s", check=False)


def _on_node(node, command):
    return subprocess.run(["podman", "exec", "gpuops-lab-" + node, "sh", "-c", command], capture_output=True,
                          text=True, check=False)


def _containerd_pid(node):
    return _on_node(node, "cut -d' ' -f1 /run/gpuops-lab/containerd.pid").stdout.strip()


def _pods_on(node):
    """namespace/name of the pods on node that a drain evicts (all but DaemonSets')."""
    pods = json.loads(kubectl("get", "pods", "-A", "--field-selector", "spec.nodeName=" + node, "-o", "json").stdout)
    return {"%s/%s" % (pod["metadata"]["namespace"], pod["metadata"]["name"]) for pod in pods["items"]
            if not any(owner["kind"] == "DaemonSet" for owner in pod["metadata"].get("ownerReferences", []))}


def _run_pod(name, node, runtime_class=None):
    """A pod on node (of runtime_class, else of the default runtime), to completion; its container's runtime
    options as containerd recorded them."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE},
           "spec": {"restartPolicy": "Never", "nodeName": node,
                    "containers": [{"name": "probe", "image": workload_image(), "imagePullPolicy": "Never",
                                    "command": ["sh", "-c", "echo through the nvidia runtime"]}]}}
    if runtime_class:
        pod["spec"]["runtimeClassName"] = runtime_class
    kubectl("apply", "-f", "-", stdin=json.dumps(pod))
    wait_for(lambda: kubectl("get", "pod", "-n", NAMESPACE, name, "-o", "jsonpath={.status.phase}",
                             check=False).stdout == "Succeeded", 120, "pod %s to succeed" % name, interval=1)
    assert kubectl("logs", "-n", NAMESPACE, name).stdout.strip() == "through the nvidia runtime"
    container_id = kubectl("get", "pod", "-n", NAMESPACE, name, "-o",
                           "jsonpath={.status.containerStatuses[0].containerID}").stdout.split("://")[-1]
    info = _on_node(node, "ctr --namespace k8s.io containers info " + container_id)
    assert info.returncode == 0, info.stderr
    return json.loads(info.stdout)["Runtime"]


def _prepare(hosts, *arguments):
    return run_playbook(PREPARE_NODES, LAB_INVENTORY, ["prepare_nodes_hosts=" + hosts] + list(arguments),
                        ["--tags", "nvidia_container_toolkit"], env=ansible_env(TMPDIR=os.path.join(LAB_DIR, "tmp")),
                        timeout=600)


@pytest.mark.usefixtures("toolkit_namespace")
def test_each_node_has_the_pinned_toolkit_from_the_signed_repository_and_containerd_loaded_the_nvidia_runtime():
    version = pinned("nvidia_container_toolkit").lstrip("v")
    for node in NODES:
        installed = _on_node(node, "dpkg-query -W -f='${Package} ${Version}\\n' " + " ".join(PACKAGES)).stdout.split("\n")
        assert sorted(filter(None, installed)) == sorted("%s %s-1" % (package, version) for package in PACKAGES)
        origin = _on_node(node, "apt-cache policy nvidia-container-toolkit").stdout
        assert "file:/srv/libnvidia-container/stable/deb/amd64" in origin, origin
        assert _on_node(node, "nvidia-ctk --version").stdout.splitlines()[0].endswith("version " + version)
        # The drop-in nvidia-ctk wrote, imported by the lab's main file, and what this containerd loaded at its start.
        drop_in = _on_node(node, "cat /etc/containerd/conf.d/99-nvidia.toml").stdout
        assert 'BinaryName = "%s"' % RUNTIME_BINARY in drop_in, drop_in
        started = _on_node(node, "grep -o 'Runtimes:map\\[[a-z]*' /var/log/gpuops-lab/containerd.log").stdout
        assert "Runtimes:map[nvidia" in started, "containerd on %s runs without the nvidia runtime" % node
        assert _on_node(node, "test -e /var/lib/gpuops-nvidia-container-toolkit.restart-pending").returncode == 1


@pytest.mark.usefixtures("toolkit_namespace")
def test_site_s_versions_report_shows_each_node_s_toolkit_against_the_pin():
    with open(os.path.join(CACHE_ROOT, "versions-report.json"), encoding="utf-8") as handle:
        rows = [row for row in json.load(handle)["rows"] if row["component"] == "container_toolkit"]
    assert [(row["where"], row["observed"], row["pinned"], row["status"]) for row in rows] == [
        (node, pinned("nvidia_container_toolkit").lstrip("v"), pinned("nvidia_container_toolkit"), "match")
        for node in NODES], rows


@pytest.mark.usefixtures("toolkit_namespace")
def test_pods_run_through_nvidia_container_runtime_as_the_default_and_by_the_nvidia_runtime_class_on_each_node():
    kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                                                  "metadata": {"name": "nvidia"}, "handler": "nvidia"}))
    try:
        for node in NODES:
            for runtime_class in (None, "nvidia"):
                runtime = _run_pod("probe-%s-%s" % (runtime_class or "default", node), node, runtime_class)
                assert runtime["Name"] == "io.containerd.runc.v2", runtime
                # The runc shim's options, as containerd stores them (protobuf): the binary it ran instead of runc.
                assert runtime["Options"]["type_url"] == "containerd.runc.v1.Options", runtime
                assert RUNTIME_BINARY.encode() in base64.b64decode(runtime["Options"]["value"]), runtime
    finally:
        kubectl("delete", "pods", "--all", "-n", NAMESPACE, "--wait=true", "--timeout=120s", check=False)
        kubectl("delete", "runtimeclass", "nvidia", check=False)


@pytest.mark.usefixtures("toolkit_namespace")
def test_a_configuration_change_restarts_containerd_drained_on_one_node_and_the_kubelet_reconnects():
    before = {node: _containerd_pid(node) for node in NODES}
    on_node1 = _pods_on("node1")
    try:
        changed = _prepare("node1", "nvidia_container_toolkit_runtime_set_as_default=false")
        assert changed.rc == 0, changed.explain()
        assert changed.result("Restart the runtime with the given command", "node1")["changed"] is True
        drained = changed.result("Drain the Kubernetes node", "node1")
        assert drained["changed"] is True, drained
        assert on_node1 and not on_node1 & _pods_on("node1"), "node1's pods were not evicted: %s" % on_node1
        assert _containerd_pid("node1") != before["node1"] and _containerd_pid("node2") == before["node2"]
        assert 'default_runtime_name = "runc"' in _on_node("node1", "cat /etc/containerd/conf.d/99-nvidia.toml").stdout
        node = json.loads(kubectl("get", "node", "node1", "-o", "json").stdout)
        assert not node["spec"].get("unschedulable"), "node1 was left cordoned"
        assert [c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready"] == ["True"]
        # The kubelet talks to the new containerd: a pod starts there, with runc now the default.
        plain_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "after-restart", "namespace": NAMESPACE},
                     "spec": {"restartPolicy": "Never", "nodeName": "node1",
                              "containers": [{"name": "probe", "image": workload_image(), "imagePullPolicy": "Never",
                                              "command": ["true"]}]}}
        kubectl("apply", "-f", "-", stdin=json.dumps(plain_pod))
        wait_for(lambda: kubectl("get", "pod", "-n", NAMESPACE, "after-restart", "-o", "jsonpath={.status.phase}",
                                 check=False).stdout == "Succeeded", 120, "a pod on node1 after the restart", interval=1)

        again = _prepare("node1", "nvidia_container_toolkit_runtime_set_as_default=false")
        assert again.rc == 0, again.explain()
        assert all(stats["changed"] == 0 for stats in again.document["stats"].values()), again.document["stats"]
    finally:
        kubectl("delete", "pods", "--all", "-n", NAMESPACE, "--wait=true", "--timeout=120s", check=False)
        # The drain took the main job's finished launcher pod, and with it the log a later site.yml would verify
        # again: without the MPIJob, that run starts the benchmark afresh.
        kubectl("delete", "mpijob", "-n", "default", "gpuops-benchmark", "--wait=true", "--timeout=120s", check=False)
        restored = _prepare("node1")
        assert restored.rc == 0, restored.explain()
    assert 'default_runtime_name = "nvidia"' in _on_node("node1", "cat /etc/containerd/conf.d/99-nvidia.toml").stdout
