# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_check's judgement of the nodes a run labels: each wanted name found, Ready, or named with its reason, from
Node objects as the kubernetes client gives them (the integration tier asks a real API server)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from kubernetes.client import V1Node, V1NodeCondition, V1NodeStatus, V1ObjectMeta

from ansible_collections.gpuops.cluster.plugins.module_utils.inputs.stages import extended_resources
from ansible_collections.gpuops.cluster.plugins.modules.cluster_check import node_message, node_states, resource_message


def _node(name, *conditions, **allocatable):
    status = V1NodeStatus(conditions=[V1NodeCondition(type=kind, status=value, reason=reason, message=message)
                                      for kind, value, reason, message in conditions],
                          allocatable=dict((key.replace("__", "/"), amount) for key, amount in allocatable.items()))
    return V1Node(metadata=V1ObjectMeta(name=name), status=status if conditions or allocatable else None)


LISTED = [
    _node("node1", ("MemoryPressure", "False", None, None), ("Ready", "True", "KubeletReady", "kubelet is posting ready status")),
    _node("node2", ("Ready", "False", "KubeletNotReady", "container runtime is down")),
    _node("node3", ("Ready", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")),
    _node("node4"),
]


def test_each_wanted_node_is_found_and_ready_or_says_why_not():
    states = node_states(["node1", "node2", "node3", "node4", "dgx-01"], LISTED)
    assert states == [
        {"name": "node1", "found": True, "ready": True},
        {"name": "node2", "found": True, "ready": False, "reason": "KubeletNotReady: container runtime is down"},
        {"name": "node3", "found": True, "ready": False, "reason": "NodeStatusUnknown: Kubelet stopped posting node status."},
        {"name": "node4", "found": True, "ready": False, "reason": "no Ready condition: no kubelet has reported for it"},
        {"name": "dgx-01", "found": False, "ready": False},
    ]


def test_the_message_names_the_missing_nodes_with_the_clusters_and_each_node_not_ready():
    states = node_states(["dgx-02", "node2", "dgx-01", "node1"], LISTED)
    assert node_message(states, ["node2", "node1"]) == (
        "not a node of the cluster: dgx-02, dgx-01 (its nodes: node1, node2); "
        "node node2 is not Ready (KubeletNotReady: container runtime is down)")


def test_ready_nodes_give_no_message():
    assert node_message(node_states(["node1"], LISTED), ["node1"]) == ""
    assert node_message(node_states(["dgx-01"], []), []) == "not a node of the cluster: dgx-01 (its nodes: none)"


def test_a_resource_is_offered_where_a_node_has_as_much_allocatable_among_the_gpu_hosts_where_named():
    listed = [_node("node1", rdma__hca="1"), _node("node2", rdma__hca="4", example__fpga="0"), _node("node3")]
    asked = {"rdma/hca": 2, "example/fpga": "1"}
    assert resource_message(asked, listed, []) == "no node offers example/fpga (1 a pod)"
    assert resource_message(asked, listed, ["node1", "node3"]) == (
        "no GPU host's node offers example/fpga (1 a pod), rdma/hca (2 a pod)")
    assert resource_message({"rdma/hca": 4}, listed, ["node2"]) == ""
    assert resource_message({}, [], []) == ""


def test_the_extended_resources_checked_are_those_but_cpu_memory_hugepages_and_gpus():
    assert extended_resources({"cpu": "2", "memory": "4Gi", "hugepages-1Gi": "2Gi", "nvidia.com/gpu": 8, "amd.com/gpu": 1,
                               "rdma/rdma_shared_device_a": 1}) == {"rdma/rdma_shared_device_a": 1}
    assert extended_resources(None) == {}
