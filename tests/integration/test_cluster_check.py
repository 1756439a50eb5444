# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster check of playbooks/check_inputs.yml (gpuops.cluster.cluster_check), run as site.yml runs it: after the
input check, on the controller, before any change. A kubeconfig that is not there and an API server that does not
answer stop the run there, naming gpuops_kubeconfig and the server in words, also in check mode; so do a GPU host that
is not a node of the cluster, named by gpu_node_labels_node_name, and an extended resource no node offers; the lab's own
control plane answers; a site.yml that must stop stops before its node stage."""

from __future__ import annotations

import os
import sys

import yaml

from gpuops_testlib.ansible_run import REPO_ROOT, ansible_env, mode_options, run_playbook
from gpuops_testlib.waiting import wait_for

from gpu_stack_harness import fake_node, unique

CHECK_INPUTS = os.path.join(REPO_ROOT, "playbooks", "check_inputs.yml")
SITE = os.path.join(REPO_ROOT, "playbooks", "site.yml")
CLUSTER_TASK = "Check that the cluster answers, before any change"
STOP_TASK = "Stop when the cluster does not answer"
NODES_STOP_TASK = "Stop when the cluster lacks a node or a resource the run needs"
INPUT_TASK = "Check the variables of every role this run takes here"


NODE_ROLES = ("nvidia_driver", "nvidia_container_toolkit", "hugepages", "gpu_network", "gpu_selinux_contexts")


def _inventory(tmp_path, gpu_hosts=None, **variables):
    """localhost (this Python), and GPU hosts (by default gpu-node-1) whose node roles are switched off (their inputs
    are not what is tested), each with its own variables."""
    localhost = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    node = dict(localhost, **dict(("%s_enabled" % role, False) for role in NODE_ROLES))
    hosts = dict((name, dict(node, **own)) for name, own in (gpu_hosts or {"gpu-node-1": {}}).items())
    inventory = {"all": {"hosts": {"localhost": localhost}, "vars": variables,
                         "children": {"gpu_nodes": {"hosts": hosts}}}}
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(inventory))
    return str(path)


def _check(tmp_path, inventory, stages=("gpu_stack",), check=False, **extra):
    return run_playbook(CHECK_INPUTS, inventory, dict({"gpuops_input_check_stages": list(stages)}, **extra),
                        mode_options(check=check), env=ansible_env(str(tmp_path / "collections")), timeout=120)


def _closed_port_kubeconfig(tmp_path):
    """A kubeconfig whose API server is a port nothing listens on."""
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "gone",
        "clusters": [{"name": "gone", "cluster": {"server": "https://127.0.0.1:9"}}],
        "contexts": [{"name": "gone", "context": {"cluster": "gone", "user": "someone"}}],
        "users": [{"name": "someone", "user": {"token": "not-a-real-token"}}]}))
    path.chmod(0o600)
    return str(path)


def test_a_kubeconfig_that_is_not_there_stops_the_run_naming_the_variable_in_check_mode_too(tmp_path):
    missing = str(tmp_path / "no-such-kubeconfig")
    done = _check(tmp_path, _inventory(tmp_path, gpuops_kubeconfig=missing), check=True)
    assert done.rc != 0
    assert done.result(CLUSTER_TASK, "localhost").get("skipped") is True
    # The roles of every host that talk to the cluster: the GPU node's labels are set through it too.
    roles = done.result(INPUT_TASK, "localhost")["cluster_roles"] + done.result(INPUT_TASK, "gpu-node-1")["cluster_roles"]
    assert "nvidia_device_plugin" in roles and "mpi_operator" in roles and "gpu_node_labels" in roles, roles
    assert done.result(STOP_TASK, "localhost")["msg"] == (
        "gpuops_kubeconfig=%s: the kubeconfig is not a file on the controller; expected a kubeconfig on the controller "
        "whose API server answers, for %s (gpuops_cluster_check=false runs without this check)" % (missing, ", ".join(roles)))


def test_an_api_server_that_does_not_answer_stops_the_run_in_seconds_naming_it_without_a_trace(tmp_path):
    done = _check(tmp_path, _inventory(tmp_path, gpuops_kubeconfig=_closed_port_kubeconfig(tmp_path),
                                       gpuops_kube_context="gone"))
    assert done.rc != 0
    checked = done.result(CLUSTER_TASK, "localhost")
    assert checked["problem"] == "unreachable" and checked["server"] == "https://127.0.0.1:9", checked
    message = done.result(STOP_TASK, "localhost")["msg"]
    assert message.startswith("gpuops_kubeconfig=%s, gpuops_kube_context=gone: the API server at https://127.0.0.1:9 did "
                              "not answer: " % _closed_port_kubeconfig(tmp_path)), message
    assert "Connection refused" in message and "urllib3" not in message and "object at 0x" not in message, message
    # The token of the kubeconfig is a secret: it is in no output.
    assert "not-a-real-token" not in done.stdout + done.stderr
    assert done.seconds < 30, done.seconds


def _ready_node(lab, name):
    """A Node that the lab's kwok keeps Ready, once it says so."""
    lab.core.create_node(fake_node(name))
    wait_for(lambda: any(condition.type == "Ready" and condition.status == "True"
                         for condition in lab.core.read_node(name).status.conditions or []), 60, "node %s Ready" % name)


def test_the_lab_control_plane_answers_and_the_check_can_be_switched_off(lab, tmp_path):
    node = unique("cluster-check")
    _ready_node(lab, node)
    try:
        # The GPU host's node is named by gpu_node_labels_node_name, not by the inventory.
        inventory = _inventory(tmp_path, {"gpu-node-1": {"gpu_node_labels_node_name": node}},
                               gpuops_kubeconfig=lab.kubeconfig)
        done = _check(tmp_path, inventory, check=True)
    finally:
        lab.core.delete_node(node)
    assert done.rc == 0, done.explain()
    answered = done.result(CLUSTER_TASK, "localhost")
    assert answered["version"].startswith("v1.") and answered["changed"] is False, answered
    assert answered["nodes"] == [{"name": node, "found": True, "ready": True}], answered
    assert done.result(STOP_TASK, "localhost").get("skipped") is True
    assert done.result(NODES_STOP_TASK, "localhost").get("skipped") is True
    switched_off = _check(tmp_path, _inventory(tmp_path, gpuops_kubeconfig=str(tmp_path / "none"),
                                               gpuops_cluster_check=False))
    assert switched_off.rc == 0, switched_off.explain()
    assert switched_off.result(CLUSTER_TASK, "localhost").get("skipped") is True


def test_a_run_whose_roles_do_not_talk_to_the_cluster_does_not_ask_it(tmp_path):
    """The nodes stage alone, and the SSH launcher's verify stage, run where no cluster is."""
    inventory = _inventory(tmp_path, gpuops_kubeconfig=str(tmp_path / "none"), gpuops_launcher="ssh")
    done = _check(tmp_path, inventory, stages=("nodes", "verify"))
    assert done.rc == 0, done.explain()
    assert done.result(CLUSTER_TASK, "localhost").get("skipped") is True


def test_site_yml_stops_at_the_cluster_check_before_its_node_stage(tmp_path):
    missing = str(tmp_path / "no-such-kubeconfig")
    inventory = _inventory(tmp_path, gpuops_kubeconfig=missing,
                           mpijob_launcher_image="registry.example.com/ml/gpuops-benchmark:horovod-0.28.1")
    done = run_playbook(SITE, inventory, options=mode_options(check=False),
                        env=ansible_env(str(tmp_path / "collections")), timeout=300)
    assert done.rc != 0
    assert [name for name, _result in done.failed()] == [STOP_TASK], done.explain()
    # Nothing after the check ran on any host: the node stage's first play never started.
    assert [play["play"]["name"] for play in done.document["plays"]] == ["Check every input before any change"]


def test_a_gpu_host_that_is_not_a_node_of_the_cluster_stops_the_run_naming_it_in_check_mode_too(lab, tmp_path):
    """One GPU host whose node the cluster does not have, one that it has, Ready: the first is named, with the nodes the
    cluster has, before any change. (A node that is there but not Ready is tested on make lab's cluster, whose nodes
    no kwok controller keeps Ready: tests/e2e/test_site.py.)"""
    absent, ready = unique("absent"), unique("ready")
    _ready_node(lab, ready)
    try:
        inventory = _inventory(tmp_path, dict((host, {"gpu_node_labels_node_name": host}) for host in (absent, ready)),
                               gpuops_kubeconfig=lab.kubeconfig)
        done = _check(tmp_path, inventory, check=True)
    finally:
        lab.core.delete_node(ready)
    assert done.rc != 0
    checked = done.result(CLUSTER_TASK, "localhost")
    assert checked["problem"] == "nodes", checked
    assert sorted(checked["nodes"], key=lambda state: state["name"]) == sorted([
        {"name": absent, "found": False, "ready": False}, {"name": ready, "found": True, "ready": True}],
        key=lambda state: state["name"])
    message = done.result(NODES_STOP_TASK, "localhost")["msg"]
    assert message.startswith("gpu_node_labels_node_name: not a node of the cluster: %s (its nodes: " % absent), message
    assert ready in message.split("(its nodes:")[1] and "expected each GPU host to be a Ready node" in message, message
    assert done.result(STOP_TASK, "localhost").get("skipped") is True


def test_an_extended_resource_no_node_offers_stops_the_run_and_a_node_that_offers_it_lets_it_on(lab, tmp_path):
    """An RDMA device plugin's resource that the pods ask for (kube_job_resources): refused until a node offers it."""
    resource = "rdma.example.com/" + unique("hca")
    inventory = _inventory(tmp_path, gpuops_kubeconfig=lab.kubeconfig, kube_job_resources={resource: 1, "cpu": "1"},
                           mpijob_launcher_image="registry.example.com/ml/gpuops-benchmark:horovod-0.28.1")
    refused = _check(tmp_path, inventory, stages=("verify",), check=True)
    assert refused.rc != 0
    checked = refused.result(CLUSTER_TASK, "localhost")
    assert checked["problem"] == "resources" and "nodes" not in checked, checked
    assert refused.result(NODES_STOP_TASK, "localhost")["msg"].startswith(
        "kube_job_resources: no node offers %s (1 a pod); expected extended resources that a device plugin on the GPU "
        "nodes offers" % resource), refused.result(NODES_STOP_TASK, "localhost")["msg"]

    offering = fake_node(unique("hca-node"))
    for amounts in (offering["status"]["capacity"], offering["status"]["allocatable"]):
        amounts[resource] = "4"
    lab.core.create_node(offering)
    try:
        passed = _check(tmp_path, inventory, stages=("verify",), check=True)
    finally:
        lab.core.delete_node(offering["metadata"]["name"])
    assert passed.rc == 0, passed.explain()
    assert passed.result(NODES_STOP_TASK, "localhost").get("skipped") is True
