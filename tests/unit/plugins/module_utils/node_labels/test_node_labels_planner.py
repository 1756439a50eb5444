# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.node_labels.apply import apply_changes, reconcile
from ansible_collections.gpuops.cluster.plugins.module_utils.node_labels.errors import ApplyError, InvalidSpecError, UnknownNodesError
from ansible_collections.gpuops.cluster.plugins.module_utils.node_labels.planner import plan
from ansible_collections.gpuops.cluster.plugins.module_utils.node_labels.spec import NodeSpec, normalize_nodes
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.names import label_value_problems, qualified_name_problems
from gpuops_testlib.fake_node_api import FakeNodeApi, node


BASE_LABELS = {"kubernetes.io/hostname": "x", "kubernetes.io/os": "linux"}


# ------------------------------------------------------------------------------ syntax rules


@pytest.mark.parametrize("key", [
    "a", "gpu", "nvidia.com/gpu.present", "feature.node.kubernetes.io/pci-10de.present",
    "A_b-c.D9", "x" * 63, ("p" * 253) + "/name", "openshift.com/gpu-accelerator", "1abc",
])
def test_valid_qualified_names(key):
    assert qualified_name_problems(key) == []


@pytest.mark.parametrize("key, problem", [
    ("", "name part must be non-empty"),
    ("-gpu", "must start and end with an alphanumeric"),
    ("gpu.", "must start and end with an alphanumeric"),
    ("gpu product", "must consist of alphanumeric"),
    ("x" * 64, "no more than 63 characters"),
    ("/gpu", "prefix part must be non-empty"),
    ("nvidia.com/", "name part must be non-empty"),
    ("NVIDIA.com/gpu", "lowercase RFC 1123 subdomain"),
    ("a/b/c", "optional DNS subdomain prefix"),
    (("p" * 254) + "/name", "no more than 253 characters"),
    ("nvidia_com/gpu", "lowercase RFC 1123 subdomain"),
    (7, "must be a string"),
])
def test_invalid_qualified_names(key, problem):
    problems = qualified_name_problems(key)
    assert problems
    assert any(problem in text for text in problems)


@pytest.mark.parametrize("value", ["", "true", "8", "NVIDIA-A100-SXM4-40GB", "a" * 63, "a.b_c-d"])
def test_valid_label_values(value):
    assert label_value_problems(value) == []


@pytest.mark.parametrize("value", ["a" * 64, "NVIDIA A100", "-x", "x-", "a/b", "x@y"])
def test_invalid_label_values(value):
    assert label_value_problems(value)


# ------------------------------------------------------------------------------ input forms


def test_list_and_dict_forms_and_common_labels_normalize_the_same():
    from_list = normalize_nodes(
        ["gpu-1", {"name": "gpu-2", "labels": {"nvidia.com/gpu.count": 4}}],
        labels={"nvidia.com/gpu.present": True, "nvidia.com/gpu.count": 8})
    from_dict = normalize_nodes(
        {"gpu-1": None, "gpu-2": {"labels": {"nvidia.com/gpu.count": "4"}}},
        labels={"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "8"})
    assert from_list == from_dict
    assert from_list["gpu-1"] == NodeSpec("gpu-1", {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "8"})
    assert from_list["gpu-2"].labels["nvidia.com/gpu.count"] == "4"


def test_node_taints_override_common_taints_by_key_and_effect():
    desired = normalize_nodes(
        [{"name": "gpu-1", "taints": [{"key": "nvidia.com/gpu", "value": "mig", "effect": "NoSchedule"}]}],
        taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
                {"key": "nvidia.com/gpu", "effect": "NoExecute"}])
    assert desired["gpu-1"].taints == [
        {"key": "nvidia.com/gpu", "value": "", "effect": "NoExecute"},
        {"key": "nvidia.com/gpu", "value": "mig", "effect": "NoSchedule"},
    ]


def test_every_problem_is_reported_at_once():
    with pytest.raises(InvalidSpecError) as caught:
        normalize_nodes(
            [
                {"name": "gpu-1", "labels": {"bad key": "x", "ok": "bad value"}},
                {"name": "gpu-2", "taints": [{"key": "k", "effect": "NoWay"}], "colour": "red"},
                {"labels": {"a": "b"}},
                42,
                "gpu-1",
            ],
            labels={"-common": "x"},
            taints=[{"key": "nvidia.com/gpu", "value": "v a l", "effect": "NoSchedule"}],
        )
    problems = caught.value.problems
    text = "\n".join(problems)
    assert "labels: label key '-common'" in text
    assert "taints[0]: taint value 'v a l'" in text
    assert "nodes[0] (gpu-1): label key 'bad key'" in text
    assert "nodes[0] (gpu-1): label value 'bad value' (key 'ok')" in text
    assert "nodes[1] (gpu-2) taints[0]: taint effect 'NoWay' (key 'k') must be one of NoSchedule, PreferNoSchedule, NoExecute" in text
    assert "nodes[1]: unknown field(s) colour" in text
    assert "nodes[2]: name must be a non-empty string, got None" in text
    assert "nodes[3]: must be a node name or a dict" in text
    assert "nodes[4] (gpu-1): node 'gpu-1' is listed more than once" in text
    assert str(caught.value).startswith("invalid node label/taint specification ({0} problem(s))".format(len(problems)))


def test_label_without_value_is_rejected_when_present_but_fine_when_absent():
    with pytest.raises(InvalidSpecError, match="has no value; use state=absent"):
        normalize_nodes({"gpu-1": {"labels": {"nvidia.com/gpu.present": None}}})
    desired = normalize_nodes({"gpu-1": {"labels": {"nvidia.com/gpu.present": None}}}, state="absent")
    assert desired["gpu-1"].labels == {"nvidia.com/gpu.present": None}


def test_taint_without_effect_only_allowed_for_absent():
    with pytest.raises(InvalidSpecError, match="taint effect None"):
        normalize_nodes(["gpu-1"], taints=[{"key": "nvidia.com/gpu"}])
    desired = normalize_nodes(["gpu-1"], taints=[{"key": "nvidia.com/gpu"}], state="absent")
    assert desired["gpu-1"].taints == [{"key": "nvidia.com/gpu", "value": "", "effect": None}]


def test_duplicate_taints_on_one_node_are_rejected():
    with pytest.raises(InvalidSpecError, match="taint k:NoSchedule is given more than once"):
        normalize_nodes([{"name": "n", "taints": [{"key": "k", "effect": "NoSchedule"},
                                                  {"key": "k", "value": "v", "effect": "NoSchedule"}]}])


def test_nodes_of_the_wrong_type_are_rejected():
    with pytest.raises(InvalidSpecError, match="nodes: must be a list or a dict, got str"):
        normalize_nodes("gpu-1")


# ------------------------------------------------------------------------------ planning


def test_plan_patches_only_what_differs():
    desired = normalize_nodes(["a", "b", "c"], labels={"nvidia.com/gpu.present": "true", "tier": "gpu"})
    live = [
        node("a", dict(BASE_LABELS, **{"nvidia.com/gpu.present": "true", "tier": "gpu"})),
        node("b", dict(BASE_LABELS, **{"nvidia.com/gpu.present": "false"})),
        node("c", BASE_LABELS),
    ]
    changes = plan(desired, live, "present")
    assert [change.name for change in changes] == ["b", "c"]
    assert changes[0].patch == {"metadata": {"labels": {"nvidia.com/gpu.present": "true", "tier": "gpu"}}}
    assert changes[0].before == {"labels": dict(BASE_LABELS, **{"nvidia.com/gpu.present": "false"})}
    assert changes[0].after == {"labels": dict(BASE_LABELS, **{"nvidia.com/gpu.present": "true", "tier": "gpu"})}
    assert changes[0].diff()["before_header"] == "node/b"


def test_plan_absent_removes_only_managed_keys_that_exist():
    desired = normalize_nodes(["a", "b"], labels={"nvidia.com/gpu.present": "", "tier": ""}, state="absent")
    live = [node("a", dict(BASE_LABELS, **{"nvidia.com/gpu.present": "true", "other": "keep"})), node("b", BASE_LABELS)]
    changes = plan(desired, live, "absent")
    assert [change.name for change in changes] == ["a"]
    assert changes[0].patch == {"metadata": {"labels": {"nvidia.com/gpu.present": None}}}
    assert changes[0].after == {"labels": dict(BASE_LABELS, other="keep")}


def test_unknown_nodes_are_all_named_before_anything_is_planned():
    desired = normalize_nodes(["a", "ghost-2", "b", "ghost-1"], labels={"x": "y"})
    with pytest.raises(UnknownNodesError) as caught:
        plan(desired, [node("a"), node("b")], "present")
    assert caught.value.names == ["ghost-1", "ghost-2"]
    assert str(caught.value) == "2 node(s) not found in the cluster, nothing was changed: ghost-1, ghost-2"


def test_taints_are_merged_into_the_full_list_with_resource_version():
    existing = [
        {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2025-01-01T00:00:00Z"},
        {"key": "nvidia.com/gpu", "value": "old", "effect": "NoSchedule"},
    ]
    desired = normalize_nodes(["a"], taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
                                             {"key": "dedicated", "value": "training", "effect": "PreferNoSchedule"}])
    (change,) = plan(desired, [node("a", BASE_LABELS, existing, version="42")], "present")
    assert change.patch == {
        "metadata": {"resourceVersion": "42"},
        "spec": {"taints": [
            {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2025-01-01T00:00:00Z"},
            {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
            {"key": "dedicated", "value": "training", "effect": "PreferNoSchedule"},
        ]},
    }
    assert change.before["taints"] == existing
    assert change.after["taints"] == change.patch["spec"]["taints"]


def test_taint_already_there_is_no_change_and_empty_value_matches_missing_value():
    desired = normalize_nodes(["a"], taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}])
    live = [node("a", BASE_LABELS, [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}])]
    assert plan(desired, live, "present") == []


def test_absent_taint_without_effect_removes_every_effect_and_null_clears_the_list():
    desired = normalize_nodes(["a"], taints=[{"key": "nvidia.com/gpu"}], state="absent")
    live = [node("a", BASE_LABELS, [{"key": "nvidia.com/gpu", "effect": "NoSchedule"},
                                    {"key": "nvidia.com/gpu", "value": "x", "effect": "NoExecute"}])]
    (change,) = plan(desired, live, "absent")
    assert change.patch == {"metadata": {"resourceVersion": "1"}, "spec": {"taints": None}}
    assert change.after["taints"] == []


def test_absent_taint_with_effect_keeps_the_other_effects():
    desired = normalize_nodes(["a"], taints=[{"key": "nvidia.com/gpu", "effect": "NoExecute"}], state="absent")
    live = [node("a", BASE_LABELS, [{"key": "nvidia.com/gpu", "effect": "NoSchedule"},
                                    {"key": "nvidia.com/gpu", "effect": "NoExecute"}])]
    (change,) = plan(desired, live, "absent")
    assert change.patch["spec"]["taints"] == [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]


def test_labels_only_patch_carries_no_resource_version():
    desired = normalize_nodes(["a"], labels={"x": "y"})
    (change,) = plan(desired, [node("a", BASE_LABELS, [{"key": "k", "effect": "NoSchedule"}])], "present")
    assert change.patch == {"metadata": {"labels": {"x": "y"}}}
    # The node's taints are shown in the diff for context even though they do not change.
    assert change.before["taints"] == change.after["taints"]


# ------------------------------------------------------------------------------ applying


def many_nodes(count):
    return [node("node-%04d" % index, BASE_LABELS) for index in range(count)]


FOUR_LABELS = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
               "nvidia.com/gpu.count": "8", "gpuops.io/bench": "yes"}


def test_reconcile_lists_once_patches_concurrently_and_is_idempotent():
    api = FakeNodeApi(many_nodes(64), patch_delay=0.02)
    desired = normalize_nodes([n["metadata"]["name"] for n in api.list_nodes()], labels=FOUR_LABELS)
    api.calls = []

    started = time.monotonic()
    changes, applied = reconcile(api, desired, "present", parallelism=8)
    elapsed = time.monotonic() - started

    assert len(changes) == 64 and len(applied) == 64
    assert [call[0] for call in api.calls].count("list") == 1
    assert [call[0] for call in api.calls].count("get") == 0
    assert len(api.patches()) == 64
    assert api.max_in_flight == 8
    # 64 patches of 20 ms, 8 at a time: about 0.16 s, far below the 1.28 s of one at a time.
    assert elapsed < 0.9
    assert all(all(n["metadata"]["labels"][k] == v for k, v in FOUR_LABELS.items()) for n in api.nodes.values())

    api.calls = []
    changes, applied = reconcile(api, desired, "present", parallelism=8)
    assert changes == [] and applied == []
    assert api.calls == [("list",)]


def test_parallelism_one_is_sequential():
    api = FakeNodeApi(many_nodes(5), patch_delay=0.01)
    desired = normalize_nodes(list(api.nodes), labels={"a": "b"})
    reconcile(api, desired, "present", parallelism=1)
    assert api.max_in_flight == 1
    assert len(api.patches()) == 5


def test_check_mode_plans_without_patching():
    api = FakeNodeApi(many_nodes(3))
    desired = normalize_nodes(list(api.nodes), labels={"a": "b"})
    changes, applied = reconcile(api, desired, "present", check_mode=True)
    assert len(changes) == 3 and applied == []
    assert api.calls == [("list",)]
    assert all("a" not in n["metadata"]["labels"] for n in api.nodes.values())


def test_unknown_nodes_mean_no_patch_at_all():
    api = FakeNodeApi(many_nodes(3))
    desired = normalize_nodes(["node-0000", "node-9999", "node-0001", "node-8888"], labels={"a": "b"})
    with pytest.raises(UnknownNodesError, match="node-8888, node-9999"):
        reconcile(api, desired, "present")
    assert api.calls == [("list",)]


def test_failures_are_collected_per_node_and_the_rest_are_applied():
    api = FakeNodeApi(many_nodes(6), fail={"node-0002": "HTTP 403 Forbidden", "node-0004": "HTTP 500 boom"})
    desired = normalize_nodes(list(api.nodes), labels={"a": "b"})
    with pytest.raises(ApplyError) as caught:
        reconcile(api, desired, "present", parallelism=3)
    assert caught.value.failures == {"node-0002": "HTTP 403 Forbidden", "node-0004": "HTTP 500 boom"}
    assert caught.value.applied == ["node-0000", "node-0001", "node-0003", "node-0005"]
    assert "patching failed on 2 node(s) (4 other node(s) were patched)" in str(caught.value)
    assert api.nodes["node-0003"]["metadata"]["labels"]["a"] == "b"
    assert "a" not in api.nodes["node-0002"]["metadata"]["labels"]


def test_taint_patch_conflict_is_replanned_from_the_fresh_node():
    api = FakeNodeApi([node("a", BASE_LABELS, [{"key": "old", "effect": "NoSchedule"}], version="5")])
    desired = normalize_nodes(["a"], taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}])
    changes = plan(desired, api.list_nodes(), "present")

    def someone_else_taints_first(fake, name):
        fake.before_patch = None
        with fake.lock:
            current = fake.nodes[name]
            current["spec"]["taints"].append({"key": "maintenance", "effect": "NoExecute"})
            current["metadata"]["resourceVersion"] = "6"

    api.before_patch = someone_else_taints_first
    assert apply_changes(api, changes, desired, "present") == ["a"]
    assert api.nodes["a"]["spec"]["taints"] == [
        {"key": "old", "effect": "NoSchedule"},
        {"key": "maintenance", "effect": "NoExecute"},
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
    ]
    assert [call[0] for call in api.calls] == ["list", "patch", "get", "patch"]


def test_conflicts_that_never_end_fail_the_node():
    api = FakeNodeApi([node("a", BASE_LABELS, [], version="5")])
    desired = normalize_nodes(["a"], taints=[{"key": "k", "effect": "NoSchedule"}])
    changes = plan(desired, api.list_nodes(), "present")

    def always_bump(fake, name):
        with fake.lock:
            fake.nodes[name]["metadata"]["resourceVersion"] = str(int(fake.nodes[name]["metadata"]["resourceVersion"]) + 1)

    api.before_patch = always_bump
    with pytest.raises(ApplyError, match="a: conflict"):
        apply_changes(api, changes, desired, "present")
    assert len(api.patches()) == 4
