# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The versions report: statuses, where versions are read from, the bad-input messages and the table's text."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.versions_report import report as vr
from gpuops_testlib.versions_report_cases import EXAMPLE_TABLE, GPU, PINS, helm_secret, workload


def node_object(name, kubelet="v1.34.4"):
    return {"metadata": {"name": name}, "status": {"nodeInfo": {"kubeletVersion": kubelet, "osImage": "Ubuntu 22.04"}}}


def report(nodes=(), node_objects=(), components=None, pins=None):
    return vr.build_report(vr.normalize_nodes(list(nodes)), list(node_objects), components or {},
                           vr.normalize_pins(PINS if pins is None else pins))


def rows_by(result):
    return dict(((row["component"], row["where"]), row) for row in result["rows"])


# ---------------------------------------------------------------------------------------------
# Statuses


def test_a_node_on_its_pins_matches_and_unpinned_versions_say_so():
    result = report([{"name": "dgx-01", "gpu": GPU, "toolkit": "1.17.4"}], [node_object("dgx-01")])
    rows = rows_by(result)
    assert rows[("driver", "dgx-01")] == {"component": "driver", "where": "dgx-01", "observed": "570.124.06",
                                          "pinned": "570", "status": "match", "source": "gpu facts", "note": None}
    assert rows[("kubelet", "dgx-01")]["status"] == "match"
    assert rows[("kubelet", "dgx-01")]["source"] == "node"
    assert rows[("cuda", "dgx-01")]["status"] == "unpinned"
    assert rows[("container_toolkit", "dgx-01")]["status"] == "unpinned"
    assert rows[("container_toolkit", "dgx-01")]["source"] == "given"
    assert result["drift"] == []


def test_a_version_other_than_the_pin_is_drift():
    result = report([{"name": "dgx-01", "gpu": dict(GPU, driver_version="550.54.15")}],
                    [node_object("dgx-01", "v1.33.2")],
                    {"mpi_operator": vr.observe_workload(workload("mpioperator/mpi-operator:0.8.1"),
                                                         "mpi-operator/mpi-operator")})
    assert [(row["component"], row["observed"], row["pinned"]) for row in result["drift"]] == [
        ("driver", "550.54.15", "570"), ("kubelet", "v1.33.2", "v1.34.4"), ("mpi_operator", "0.8.1", "v0.8.2")]
    assert result["counts"]["drift"] == 3


def test_a_component_or_a_node_not_in_the_cluster_is_absent():
    result = report(["dgx-09"], [node_object("dgx-01")],
                    {"nvidia_device_plugin": vr.observe_workload(None, "nvidia-device-plugin/nvidia-device-plugin")})
    rows = rows_by(result)
    assert rows[("kubelet", "dgx-09")]["status"] == "absent"
    assert rows[("kubelet", "dgx-09")]["note"] == "no such node in the cluster"
    plugin = rows[("nvidia_device_plugin", "nvidia-device-plugin/nvidia-device-plugin")]
    assert (plugin["observed"], plugin["pinned"], plugin["status"], plugin["note"]) == (None, "v0.17.1", "absent",
                                                                                        "not found")
    assert result["drift"] == []


def test_what_the_facts_cannot_give_is_unknown_never_guessed():
    no_gpu = {"present": False, "reason": "nvidia-smi was not found on this host", "count": 0}
    result = report([{"name": "a", "gpu": None}, {"name": "b", "gpu": no_gpu},
                     {"name": "c", "gpu": dict(GPU, cuda_version=None)}],
                    [node_object("a"), node_object("b"), {"metadata": {"name": "c"}, "status": {}}])
    rows = rows_by(result)
    assert [(rows[(component, "a")]["status"], rows[(component, "a")]["note"])
            for component in ("driver", "cuda", "container_toolkit")] == [
        ("unknown", "no GPU facts"), ("unknown", "no GPU facts"), ("unknown", "not reported")]
    assert rows[("driver", "b")]["observed"] is None
    assert rows[("driver", "b")]["note"] == "nvidia-smi was not found on this host"
    assert rows[("cuda", "c")]["status"] == "unknown"
    assert rows[("cuda", "c")]["note"] == "nvidia-smi did not report it"
    assert rows[("driver", "c")]["status"] == "match"
    assert rows[("kubelet", "c")]["status"] == "unknown"
    assert rows[("kubelet", "c")]["note"] == "not reported"


def test_unknown_beats_a_missing_pin_and_absent_beats_both():
    assert vr.judge(None, None) == "unknown"
    assert vr.judge(None, "v1", found=False) == "absent"
    assert vr.judge("1.0", None) == "unpinned"


# ---------------------------------------------------------------------------------------------
# Normalisation


@pytest.mark.parametrize("observed, pinned, expected", [
    ("0.8.2", "v0.8.2", True),
    ("v0.17.1", "0.17.1", True),
    (" V1.34.4 ", "v1.34.4", True),
    ("570.124.06", "570", True),
    ("1.34.4", "v1.34", True),
    ("570.124.06", "570.124", True),
    ("5700.1", "570", False),
    ("0.17.1-ubi9", "v0.17.1", False),
    ("v1.34.4+k3s1", "v1.34.4", False),
    ("0.8.1", "v0.8.2", False),
    ("0.8", "v0.8.2", False),
    ("vnext", "next", False),
])
def test_versions_are_compared_without_a_leading_v_and_a_short_pin_is_a_branch(observed, pinned, expected):
    assert vr.versions_match(observed, pinned) is expected


@pytest.mark.parametrize("image, tag", [
    ("nvcr.io/nvidia/k8s-device-plugin:v0.17.1", "v0.17.1"),
    ("mpioperator/mpi-operator:0.8.2", "0.8.2"),
    ("registry.example.com:5000/kubeflow/mpi-operator:0.8.2", "0.8.2"),
    ("registry.example.com:5000/kubeflow/mpi-operator", None),
    ("nvcr.io/nvidia/gpu-operator@sha256:" + "a" * 64, None),
    ("nvcr.io/nvidia/gpu-operator:v25.3.0@sha256:" + "a" * 64, "v25.3.0"),
    ("busybox", None),
])
def test_image_tags(image, tag):
    assert vr.image_tag(image) == tag


def test_an_image_tag_that_is_not_a_release_falls_back_to_the_roles_version_label():
    label = "gpuops.io/training-operator-version"
    image = "ghcr.io/kubeflow/training-v1/training-operator:v1-d6eb98e"
    assert vr.observe_workload(workload(image, {label: "v1.9.3"}), "kubeflow/training-operator", label) == {
        "where": "kubeflow/training-operator", "found": True, "observed": "v1.9.3", "source": "label", "note": None}
    seen = vr.observe_workload(workload(image), "kubeflow/training-operator", label)
    assert (seen["observed"], seen["note"]) == (None, "image tag is not a release: v1-d6eb98e")
    seen = vr.observe_workload(workload("nvcr.io/nvidia/k8s-device-plugin@sha256:" + "b" * 64), "ns/dp")
    assert seen["note"] == "image without a tag: nvcr.io/nvidia/k8s-device-plugin@sha256:" + "b" * 64
    # What runs wins over what the role says it applied.
    assert vr.observe_workload(workload("mpioperator/mpi-operator:0.8.1", {"v": "v0.8.2"}), "x/y", "v")["observed"] == "0.8.1"


def test_the_gpu_operator_chart_version_comes_from_the_newest_deployed_helm_record():
    seen = vr.observe_helm_chart([helm_secret("v25.3.0", "9"), helm_secret("v24.9.2", "10"),
                                  helm_secret("v24.6.0", "2")], "gpu-operator/gpu-operator")
    assert seen == {"where": "gpu-operator/gpu-operator", "found": True, "observed": "v24.9.2",
                    "source": "helm chart", "note": None}
    assert vr.observe_helm_chart([], "gpu-operator/gpu-operator") is None
    broken = helm_secret("v25.3.0")
    broken["data"]["release"] = base64.b64encode(b"not a release").decode("ascii")
    seen = vr.observe_helm_chart([broken], "gpu-operator/gpu-operator")
    assert seen["observed"] is None
    assert seen["note"].startswith("Helm release record unreadable: the release entry is not a Helm release")


# ---------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("nodes, message", [
    ("dgx-01", "nodes must be a list of node names or dicts, got str"),
    ([{"gpu": GPU}], "nodes[0]: a node needs a name (a non-empty string), got None"),
    (["dgx-01", {"name": " "}], "nodes[1]: a node needs a name (a non-empty string), got ' '"),
    ([42], "nodes[0]: must be a node name or a dict with name, gpu and toolkit, got int 42"),
    (["dgx-01", "dgx-01"], "nodes[1] (dgx-01): node dgx-01 is also nodes[0]"),
    ([{"name": "dgx-01", "gpus": GPU}], "nodes[0] (dgx-01): unknown key(s) gpus; expected name, gpu and toolkit"),
    ([{"name": "dgx-01", "gpu": "yes"}],
     "nodes[0] (dgx-01): gpu must be the node's gpuops_gpu fact (a dict) or null, got str 'yes'"),
    ([{"name": "dgx-01", "gpu": dict(GPU, cuda_version=12.8)}],
     "nodes[0] (dgx-01): gpu.cuda_version: a version must be a string, got float 12.8"),
    ([{"name": "dgx-01", "toolkit": 1}], "nodes[0] (dgx-01): toolkit: a version must be a string, got int 1"),
    ([{"name": "dgx-01", "toolkit": ""}], "nodes[0] (dgx-01): toolkit: a version must not be empty"),
])
def test_bad_nodes_are_refused_naming_the_item(nodes, message):
    with pytest.raises(ValueError) as caught:
        vr.normalize_nodes(nodes)
    assert str(caught.value) == message


@pytest.mark.parametrize("pins, message", [
    (["v1"], "pins must be a dict of component: version, got list"),
    ({"drivers": "570", "mpi": "v1"},
     "pins: unknown component(s) drivers, mpi; expected some of: driver, cuda, container_toolkit, kubelet, "
     "nvidia_device_plugin, gpu_operator, mpi_operator, training_operator"),
    ({"cuda": 12.8}, "pins.cuda: a version must be a string, got float 12.8"),
])
def test_bad_pins_are_refused_naming_the_pin(pins, message):
    with pytest.raises(ValueError) as caught:
        vr.normalize_pins(pins)
    assert str(caught.value) == message


def test_a_non_string_version_from_the_cluster_is_refused_naming_where():
    with pytest.raises(ValueError) as caught:
        report(["dgx-01"], [node_object("dgx-01", kubelet=134)])
    assert str(caught.value) == ("node dgx-01: status.nodeInfo.kubeletVersion: a version must be a string, "
                                 "got int 134")
    with pytest.raises(ValueError) as caught:
        report(components={"mpi_operator": vr.observation("mpi-operator/mpi-operator", observed=["0.8.2"])})
    assert str(caught.value) == ("mpi_operator at mpi-operator/mpi-operator: a version must be a string, "
                                 "got list ['0.8.2']")
    with pytest.raises(ValueError) as caught:
        report(components={"slurm": vr.observation("x")})
    assert str(caught.value).startswith("components: unknown component(s) slurm; expected some of: nvidia_device_plugin")


# ---------------------------------------------------------------------------------------------
# The table and the JSON


def two_node_example():
    nodes = [{"name": "dgx-02", "gpu": None},
             {"name": "dgx-01", "gpu": GPU, "toolkit": "1.17.4"}]
    node_objects = [node_object("dgx-01"), node_object("dgx-02", "v1.33.2"), node_object("cpu-01")]
    components = {
        "training_operator": vr.observe_workload(
            workload("ghcr.io/kubeflow/training-v1/training-operator:v1-d6eb98e",
                     {"gpuops.io/training-operator-version": "v1.9.3"}),
            "kubeflow/training-operator", "gpuops.io/training-operator-version"),
        "nvidia_device_plugin": vr.observe_workload(workload("nvcr.io/nvidia/k8s-device-plugin:v0.17.1"),
                                                    "nvidia-device-plugin/nvidia-device-plugin"),
        "mpi_operator": vr.observe_workload(workload("mpioperator/mpi-operator:0.8.1"), "mpi-operator/mpi-operator",
                                            "gpuops.io/mpi-operator-version"),
    }
    return report(nodes, node_objects, components)


def test_the_table_of_a_two_node_example():
    result = two_node_example()
    assert "\n".join(result["table"]) == EXAMPLE_TABLE
    assert result["nodes"] == ["dgx-01", "dgx-02"]
    assert [(row["component"], row["where"]) for row in result["drift"]] == [
        ("kubelet", "dgx-02"), ("mpi_operator", "mpi-operator/mpi-operator")]


def test_the_json_is_plain_stable_and_carries_no_table():
    result = two_node_example()
    text = vr.report_json(result)
    assert text == vr.report_json(two_node_example())
    content = json.loads(text)
    assert sorted(content) == ["counts", "drift", "format", "nodes", "rows"]
    assert content["counts"] == {"match": 4, "drift": 2, "absent": 0, "unknown": 3, "unpinned": 2}
    assert content["rows"][-1] == {"component": "training_operator", "where": "kubeflow/training-operator",
                                   "observed": "v1.9.3", "pinned": "v1.9.3", "status": "match", "source": "label",
                                   "note": None}


def test_no_nodes_and_no_components_is_an_empty_report():
    result = report()
    assert result["rows"] == []
    assert result["table"] == ["COMPONENT  WHERE  OBSERVED  PINNED  STATUS  NOTE",
                               "0 node(s), 0 cluster component(s): 0 match, 0 drift, 0 absent, 0 unknown, 0 unpinned"]
