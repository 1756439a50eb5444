# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.modules import node_labels
from gpuops_testlib.fake_node_api import FakeNodeApi, node
from gpuops_testlib.module_exit import catch_exits, run_k8s_module


@pytest.fixture(autouse=True)
def capture_exit(monkeypatch):
    catch_exits(monkeypatch)


def run(args, api, check_mode=False, diff=False):
    """Run the module against ``api`` (None: the test asserts no API is ever built)."""
    return run_k8s_module(node_labels, args, api, check_mode, diff)


def cluster():
    return FakeNodeApi([node("gpu-1", {"kubernetes.io/hostname": "gpu-1"}),
                        node("gpu-2", {"kubernetes.io/hostname": "gpu-2", "nvidia.com/gpu.present": "true"}),
                        node("cpu-1", {"kubernetes.io/hostname": "cpu-1"})])


ARGS = {"nodes": ["gpu-1", "gpu-2"], "labels": {"nvidia.com/gpu.present": True, "nvidia.com/gpu.count": 8}}


def test_check_mode_reports_the_plan_and_patches_nothing():
    api = cluster()
    outcome = run(ARGS, api, check_mode=True, diff=True)
    assert outcome.failed is False
    assert outcome.result["changed"] is True
    assert outcome.result["changed_nodes"] == ["gpu-1", "gpu-2"]
    assert outcome.result["unchanged_count"] == 0
    assert outcome.result["patches"]["gpu-2"] == {"metadata": {"labels": {"nvidia.com/gpu.count": "8"}}}
    assert api.patches() == []
    diff = outcome.result["diff"]
    assert [d["before_header"] for d in diff] == ["node/gpu-1", "node/gpu-2"]
    assert diff[0]["before"] == {"labels": {"kubernetes.io/hostname": "gpu-1"}}
    assert diff[0]["after"] == {"labels": {"kubernetes.io/hostname": "gpu-1", "nvidia.com/gpu.present": "true",
                                           "nvidia.com/gpu.count": "8"}}


def test_apply_then_second_run_is_unchanged():
    api = cluster()
    first = run(ARGS, api)
    assert first.result["changed"] is True
    assert len(api.patches()) == 2
    assert "diff" not in first.result
    second = run(ARGS, api, diff=True)
    assert second.result["changed"] is False
    assert second.result["changed_nodes"] == []
    assert second.result["unchanged_count"] == 2
    assert second.result["diff"] == []
    assert len(api.patches()) == 2
    assert api.nodes["cpu-1"]["metadata"]["labels"] == {"kubernetes.io/hostname": "cpu-1"}


def test_absent_removes_only_the_given_keys():
    api = cluster()
    run(ARGS, api)
    outcome = run({"nodes": {"gpu-1": None, "gpu-2": None}, "labels": {"nvidia.com/gpu.count": ""},
                   "state": "absent"}, api)
    assert outcome.result["changed"] is True
    for name in ("gpu-1", "gpu-2"):
        assert api.nodes[name]["metadata"]["labels"] == {"kubernetes.io/hostname": name,
                                                         "nvidia.com/gpu.present": "true"}


def test_invalid_input_fails_before_any_api_call():
    outcome = run({"nodes": [{"name": "gpu-1", "labels": {"nvidia.com/gpu product": "A100 SXM4"}}],
                   "taints": [{"key": "nvidia.com/gpu", "effect": "NoScheduleAtAll"}]}, None)
    assert outcome.failed is True
    assert len(outcome.result["problems"]) == 3
    assert "label key 'nvidia.com/gpu product'" in outcome.result["msg"]
    assert "label value 'A100 SXM4'" in outcome.result["msg"]
    assert "taint effect 'NoScheduleAtAll'" in outcome.result["msg"]


def test_unknown_nodes_are_listed_in_one_error_and_nothing_is_patched():
    api = cluster()
    outcome = run({"nodes": ["gpu-1", "gpu-9", "gpu-7"], "labels": {"a": "b"}}, api)
    assert outcome.failed is True
    assert outcome.result["unknown_nodes"] == ["gpu-7", "gpu-9"]
    assert outcome.result["msg"] == "2 node(s) not found in the cluster, nothing was changed: gpu-7, gpu-9"
    assert api.calls == [("list",)]


def test_partial_failure_reports_failed_and_patched_nodes():
    api = cluster()
    api.fail = {"gpu-2": "patching node gpu-2: HTTP 403 Forbidden: nodes \"gpu-2\" is forbidden"}
    outcome = run(ARGS, api)
    assert outcome.failed is True
    assert outcome.result["changed"] is True
    assert outcome.result["changed_nodes"] == ["gpu-1"]
    assert list(outcome.result["failed_nodes"]) == ["gpu-2"]
    assert "patching failed on 1 node(s) (1 other node(s) were patched)" in outcome.result["msg"]


def test_parallelism_must_be_positive():
    outcome = run(dict(ARGS, parallelism=0), None)
    assert outcome.failed is True
    assert outcome.result["msg"] == "parallelism must be at least 1, got 0"


def test_cluster_errors_become_a_failure_message():
    class Unreachable(object):
        def list_nodes(self):
            raise OSError("connection refused")

    outcome = run(ARGS, Unreachable())
    assert outcome.failed is True
    assert outcome.result["msg"] == "Could not read the cluster's nodes: connection refused"


def test_api_key_is_not_logged():
    assert node_labels.argument_spec()["api_key"]["no_log"] is True
    assert node_labels.argument_spec()["password"]["no_log"] is True


def test_request_timeout_below_one_second_is_refused_before_any_api_call():
    outcome = run(dict(ARGS, request_timeout=0), None)
    assert outcome.failed is True
    assert outcome.result["msg"] == "request_timeout must be at least 1 second, got 0"
