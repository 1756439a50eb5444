# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.cluster.versions_report as Ansible runs it (argument spec, check mode, diff, fail_json), on a fake cluster."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import ApiError
from ansible_collections.gpuops.cluster.plugins.modules import versions_report
from gpuops_testlib.fake_node_api import FakeNodeApi, node
from gpuops_testlib.module_exit import catch_exits, run_k8s_module
from gpuops_testlib.versions_report_cases import (
    EXAMPLE_TABLE,
    GPU,
    PINS,
    helm_secret,
    workload,
)


@pytest.fixture(autouse=True)
def capture_exit(monkeypatch):
    catch_exits(monkeypatch)


class FakeVersionsApi(FakeNodeApi):
    """FakeNodeApi's nodes, plus the DaemonSets, Deployments and Helm records the report reads."""

    def __init__(self, nodes, objects=None, helm=None):
        super(FakeVersionsApi, self).__init__(nodes)
        self.objects = dict(objects or {})
        self.helm = dict(helm or {})

    def read_daemonset(self, namespace, name):
        self.calls.append(("daemonset", namespace, name))
        return self.objects.get(("DaemonSet", namespace, name))

    def read_deployment(self, namespace, name):
        self.calls.append(("deployment", namespace, name))
        return self.objects.get(("Deployment", namespace, name))

    def list_helm_releases(self, namespace, release):
        self.calls.append(("helm", namespace, release))
        return self.helm.get((namespace, release), [])


def kubelet(name, version):
    body = node(name)
    body["status"] = {"nodeInfo": {"kubeletVersion": version}}
    return body


def cluster():
    """The two-node example of the module_utils tests, as objects in a fake cluster."""
    return FakeVersionsApi(
        [kubelet("dgx-01", "v1.34.4"), kubelet("dgx-02", "v1.33.2"), kubelet("cpu-01", "v1.34.4")],
        {("DaemonSet", "nvidia-device-plugin", "nvidia-device-plugin"): workload("nvcr.io/nvidia/k8s-device-plugin:v0.17.1"),
         ("Deployment", "mpi-operator", "mpi-operator"): workload("mpioperator/mpi-operator:0.8.1"),
         ("Deployment", "kubeflow", "training-operator"): workload(
             "ghcr.io/kubeflow/training-v1/training-operator:v1-d6eb98e",
             {"gpuops.io/training-operator-version": "v1.9.3"})})


def args(tmp_path, **more):
    return dict(dict(nodes=[{"name": "dgx-02", "gpu": None}, {"name": "dgx-01", "gpu": GPU, "toolkit": "1.17.4"}],
                     components=["nvidia_device_plugin", "mpi_operator", "training_operator"], pins=PINS,
                     path=str(tmp_path / "versions.json")), **more)


def run(module_args, api, check_mode=False, diff=False):
    return run_k8s_module(versions_report, module_args, api, check_mode, diff)


def test_check_mode_reports_and_writes_nothing(tmp_path):
    api = cluster()
    outcome = run(args(tmp_path), api, check_mode=True, diff=True)
    assert outcome.failed is False
    assert outcome.result["changed"] is True
    assert "\n".join(outcome.result["table"]) == EXAMPLE_TABLE
    assert [row["component"] for row in outcome.result["drift"]] == ["kubelet", "mpi_operator"]
    assert outcome.result["counts"]["match"] == 4
    assert outcome.result["diff"]["before"] == ""
    assert json.loads(outcome.result["diff"]["after"])["counts"]["drift"] == 2
    assert not os.path.exists(str(tmp_path / "versions.json"))
    assert api.calls == [("list",), ("daemonset", "nvidia-device-plugin", "nvidia-device-plugin"),
                         ("deployment", "mpi-operator", "mpi-operator"), ("deployment", "kubeflow", "training-operator")]


def test_the_file_is_written_once_then_left_alone_until_a_version_changes(tmp_path):
    api = cluster()
    first = run(args(tmp_path), api)
    assert first.result["changed"] is True
    assert first.result["path"] == str(tmp_path / "versions.json")
    with open(first.result["path"]) as handle:
        written = json.load(handle)
    assert written["rows"] == first.result["rows"]
    unchanged = run(args(tmp_path), api, diff=True)
    assert unchanged.result["changed"] is False
    assert "diff" not in unchanged.result, "an unchanged report shows no diff"
    assert run(args(tmp_path), api, check_mode=True).result["changed"] is False

    api.objects[("Deployment", "mpi-operator", "mpi-operator")] = workload("mpioperator/mpi-operator:0.8.2")
    upgraded = run(args(tmp_path), api, diff=True)
    assert upgraded.result["changed"] is True
    assert upgraded.result["drift"] == [row for row in upgraded.result["rows"] if row["component"] == "kubelet"
                                        and row["where"] == "dgx-02"]
    assert '"observed": "0.8.1"' in upgraded.result["diff"]["before"]
    assert '"observed": "0.8.2"' in upgraded.result["diff"]["after"]


def test_no_path_writes_no_file_and_changes_nothing(tmp_path):
    outcome = run(args(tmp_path, path=None), cluster())
    assert outcome.result["changed"] is False
    assert "path" not in outcome.result
    assert os.listdir(str(tmp_path)) == []


def test_fail_on_drift_fails_naming_each_drift_after_writing_the_file(tmp_path):
    outcome = run(args(tmp_path, fail_on_drift=True), cluster())
    assert outcome.failed is True
    assert outcome.result["msg"] == ("2 version(s) differ from their pins: kubelet on dgx-02 is v1.33.2, pinned v1.34.4; "
                                     "mpi_operator on mpi-operator/mpi-operator is 0.8.1, pinned v0.8.2")
    assert outcome.result["changed"] is True
    assert len(outcome.result["table"]) == 13
    assert os.path.exists(str(tmp_path / "versions.json"))


def test_fail_on_drift_passes_without_drift_absent_and_unknown_included(tmp_path):
    outcome = run(dict(nodes=["dgx-01", "dgx-09"], components=["training_operator", "gpu_operator"],
                       pins={"training_operator": "v1.9.3"}, fail_on_drift=True), cluster())
    assert outcome.failed is False
    assert outcome.result["counts"] == {"match": 1, "drift": 0, "absent": 2, "unknown": 6, "unpinned": 1}


def test_the_gpu_operator_from_its_helm_release_then_its_deployment_then_absent():
    api = cluster()
    api.helm[("gpu-operator", "gpu-operator")] = [helm_secret("v25.3.0", "3")]
    api.objects[("Deployment", "gpu-operator", "gpu-operator")] = workload("nvcr.io/nvidia/gpu-operator:v24.9.2")
    pins = {"gpu_operator": "v25.3.0"}
    (row,) = run(dict(components=["gpu_operator"], pins=pins), api).result["rows"]
    assert (row["where"], row["observed"], row["source"], row["status"]) == (
        "gpu-operator/gpu-operator", "v25.3.0", "helm chart", "match")
    assert ("deployment", "gpu-operator", "gpu-operator") not in api.calls

    api.helm.clear()
    (row,) = run(dict(components=["gpu_operator"], pins=pins), api).result["rows"]
    assert (row["where"], row["observed"], row["source"], row["status"]) == (
        "gpu-operator/gpu-operator", "v24.9.2", "image", "drift")

    api.objects.clear()
    (row,) = run(dict(components=["gpu_operator"], pins=pins, gpu_operator={"namespace": "nvidia-gpu-operator"}),
                 api).result["rows"]
    assert (row["where"], row["status"], row["note"]) == (
        "nvidia-gpu-operator/gpu-operator", "absent", "no Helm release, no Deployment gpu-operator")
    assert api.calls[-2:] == [("helm", "nvidia-gpu-operator", "gpu-operator"),
                              ("deployment", "nvidia-gpu-operator", "gpu-operator")]


def test_the_locations_follow_the_options_and_no_nodes_means_no_node_list():
    api = cluster()
    api.objects[("DaemonSet", "gpu", "plugin")] = workload("nvcr.io/nvidia/k8s-device-plugin:v0.17.1")
    outcome = run(dict(components=["nvidia_device_plugin"], nvidia_device_plugin={"namespace": "gpu", "name": "plugin"},
                       pins=PINS), api)
    assert outcome.result["rows"][0]["where"] == "gpu/plugin"
    assert outcome.result["rows"][0]["status"] == "match"
    assert api.calls == [("daemonset", "gpu", "plugin")]


def test_bad_input_fails_before_any_api_client_is_built(tmp_path):
    outcome = run(args(tmp_path, nodes=[{"gpu": GPU}]), None)
    assert outcome.failed is True
    assert outcome.result["msg"] == "nodes[0]: a node needs a name (a non-empty string), got None"
    outcome = run(args(tmp_path, pins={"cuda": 12.8}), None)
    assert outcome.result["msg"] == "pins.cuda: a version must be a string, got float 12.8"
    outcome = run(args(tmp_path, request_timeout=0), None)
    assert outcome.result["msg"] == "request_timeout must be at least 1 second, got 0"


def test_cluster_errors_become_one_failure_message(tmp_path):
    class Forbidden(FakeVersionsApi):
        def read_deployment(self, namespace, name):
            raise ApiError("reading Deployment {0}/{1}: HTTP 403 Forbidden".format(namespace, name), status=403)

    outcome = run(args(tmp_path), Forbidden([]))
    assert outcome.failed is True
    assert outcome.result["msg"] == "reading Deployment mpi-operator/mpi-operator: HTTP 403 Forbidden"
    assert outcome.result["status"] == 403
    assert not os.path.exists(str(tmp_path / "versions.json"))

    class Unreachable(object):
        def list_nodes(self):
            raise OSError("connection refused")

    outcome = run(args(tmp_path), Unreachable())
    assert outcome.result["msg"] == "Could not read the cluster: connection refused"


def test_a_report_that_cannot_be_written_fails_saying_where(tmp_path):
    outcome = run(args(tmp_path, path=str(tmp_path / "missing" / "versions.json")), cluster())
    assert outcome.failed is True
    assert outcome.result["msg"].startswith("cannot write the versions report {0}: ".format(
        tmp_path / "missing" / "versions.json"))
    assert outcome.result["changed"] is False
