# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A sweep's sizes into each launcher's size variables, and the inputs refused before any run."""

import os
import re

import pytest
import yaml

from ansible_collections.gpuops.cluster.plugins.module_utils.launchers import LAUNCHERS
from ansible_collections.gpuops.cluster.plugins.module_utils.training.sweep_plan import (
    SHAPES, SweepError, check_floors, check_ranks, placement, plan_sweep, written_variables,
)

ROLE_TASKS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..", "roles", "training_sweep", "tasks")
SLURM = {"slurm_launcher_nodes": 2, "slurm_launcher_tasks_per_node": 2, "slurm_launcher_gpus_per_node": 0}


def shapes(launcher, settings, ranks):
    plan = plan_sweep(launcher, ranks, None, settings, "sweep", "/logs")
    return [dict((name, value) for name, value in size["vars"].items() if name in SHAPES[launcher].inputs())
            for size in plan["sizes"]]


def test_slurm_takes_the_fewest_nodes_that_hold_the_ranks_in_equal_shares():
    plan = plan_sweep("slurm", [4, 1, 2], 0.8, SLURM, "gpuops-sweep", "/logs")
    assert [(size["ranks"], size["placement"]) for size in plan["sizes"]] == [
        (1, "1 node(s) x 1 task(s)"), (2, "1 node(s) x 2 task(s)"), (4, "2 node(s) x 2 task(s)")]
    assert plan["sizes"][2]["vars"] == {
        "gpuops_training_expect_ranks": 4, "slurm_launcher_nodes": 2, "slurm_launcher_tasks_per_node": 2,
        "slurm_launcher_gpus_per_node": 0, "slurm_launcher_run_name": "gpuops-sweep-4ranks",
        "slurm_launcher_job_name": "gpuops-sweep-4ranks",
        "slurm_launcher_log_path": "/logs/gpuops-sweep-4ranks.log"}
    assert plan["baseline"] == 1 and plan["floors"] == {1: 0.8, 2: 0.8, 4: 0.8}
    assert plan["lines"][0].startswith("1 rank(s): 1 node(s) x 1 task(s), run gpuops-sweep-1rank, the baseline (")


def test_gpus_follow_the_ranks_one_per_task_by_default():
    settings = {"slurm_launcher_nodes": 4, "slurm_launcher_tasks_per_node": None, "slurm_launcher_gpus_per_node": 8}
    assert shapes("slurm", settings, [1, 8, 16]) == [
        {"slurm_launcher_nodes": 1, "slurm_launcher_tasks_per_node": 1, "slurm_launcher_gpus_per_node": 1},
        {"slurm_launcher_nodes": 1, "slurm_launcher_tasks_per_node": 8, "slurm_launcher_gpus_per_node": 8},
        {"slurm_launcher_nodes": 2, "slurm_launcher_tasks_per_node": 8, "slurm_launcher_gpus_per_node": 8}]
    # Two tasks of four GPUs each keep their four GPUs.
    settings.update(slurm_launcher_tasks_per_node=2)
    assert shapes("slurm", settings, [1])[0]["slurm_launcher_gpus_per_node"] == 4


@pytest.mark.parametrize("launcher, settings, ranks, expected", [
    ("mpijob", {"mpijob_launcher_workers": 2, "mpijob_launcher_slots_per_worker": 2, "mpijob_launcher_gpus_per_worker": 2},
     [1, 4], [{"mpijob_launcher_workers": 1, "mpijob_launcher_slots_per_worker": 1, "mpijob_launcher_gpus_per_worker": 1},
              {"mpijob_launcher_workers": 2, "mpijob_launcher_slots_per_worker": 2, "mpijob_launcher_gpus_per_worker": 2}]),
    ("job", {"job_launcher_workers": 3, "job_launcher_slots_per_worker": None, "job_launcher_gpus_per_worker": 0},
     [1, 3], [{"job_launcher_workers": 1, "job_launcher_slots_per_worker": 1, "job_launcher_gpus_per_worker": 0},
              {"job_launcher_workers": 3, "job_launcher_slots_per_worker": 1, "job_launcher_gpus_per_worker": 0}]),
    ("ssh", {"ssh_launcher_hosts": ["node1", "node2"], "ssh_launcher_slots_per_host": 2},
     [1, 2, 4], [{"ssh_launcher_hosts": ["node1"], "ssh_launcher_slots_per_host": 1},
                 {"ssh_launcher_hosts": ["node1"], "ssh_launcher_slots_per_host": 2},
                 {"ssh_launcher_hosts": ["node1", "node2"], "ssh_launcher_slots_per_host": 2}]),
    ("pod", {"pod_launcher_ranks": None, "pod_launcher_gpus": 4},
     [1, 4], [{"pod_launcher_ranks": 1, "pod_launcher_gpus": 1}, {"pod_launcher_ranks": 4, "pod_launcher_gpus": 4}]),
    ("tfjob", {"tfjob_launcher_workers": 4}, [1, 2, 4],
     [{"tfjob_launcher_workers": 1}, {"tfjob_launcher_workers": 2}, {"tfjob_launcher_workers": 4}]),
    # Pods of one rank per GPU: a size takes the fewest pods, each keeping a GPU per rank.
    ("pytorchjob", {"pytorchjob_launcher_workers": 2, "pytorchjob_launcher_procs_per_worker": None,
                    "pytorchjob_launcher_gpus_per_worker": 4}, [1, 4, 8],
     [{"pytorchjob_launcher_workers": 1, "pytorchjob_launcher_procs_per_worker": 1, "pytorchjob_launcher_gpus_per_worker": 1},
      {"pytorchjob_launcher_workers": 1, "pytorchjob_launcher_procs_per_worker": 4, "pytorchjob_launcher_gpus_per_worker": 4},
      {"pytorchjob_launcher_workers": 2, "pytorchjob_launcher_procs_per_worker": 4, "pytorchjob_launcher_gpus_per_worker": 4}]),
])
def test_each_launcher_gets_its_own_size_variables(launcher, settings, ranks, expected):
    assert shapes(launcher, settings, ranks) == expected


def test_every_launcher_the_input_check_knows_has_a_shape():
    assert sorted(SHAPES) == sorted(LAUNCHERS)


def test_kubernetes_launchers_get_a_name_a_log_and_a_report_per_size():
    plan = plan_sweep("mpijob", [2], None, {"mpijob_launcher_workers": 2}, "lab-sweep", "/logs")
    size = plan["sizes"][0]["vars"]
    assert (size["mpijob_launcher_name"], size["kube_job_log_path"], size["kube_job_report_path"]) == (
        "lab-sweep-2ranks", "/logs/lab-sweep-2ranks.log", "/logs/lab-sweep-2ranks.json")


def test_the_role_runs_the_plans_launcher_role_by_name_with_the_plans_variables():
    """size.yml names no launcher: it sets whatever variables the plan gives and includes the plan's role, and
    plan.yml probes the same variables. A new launcher needs no branch there."""
    with open(os.path.join(ROLE_TASKS, "size.yml")) as handle:
        tasks = yaml.safe_load(handle)
    include = tasks[2]["block"][0]["ansible.builtin.include_role"]
    assert include == {"name": "gpuops.cluster.{{ __training_sweep_plan.role }}"}
    assert tasks[1]["loop"] == "{{ __training_sweep_size.vars | dict2items }}"
    with open(os.path.join(ROLE_TASKS, "plan.yml")) as handle:
        probe = [task for task in yaml.safe_load(handle) if "ansible.builtin.assert" in task][0]["vars"]
    assert probe["__training_sweep_probed"] == "{{ __training_sweep_plan.sizes[0].vars.keys() | sort }}"
    with open(os.path.join(ROLE_TASKS, "size.yml")) as handle:
        assert not re.search(r"\b(%s)_launcher" % "|".join(LAUNCHERS), handle.read())


@pytest.mark.parametrize("launcher", sorted(SHAPES))
def test_the_plan_names_the_registrys_role_and_each_size_the_variables_it_writes(launcher):
    settings = {name: 1 for name in SHAPES[launcher].inputs()}
    plan = plan_sweep(launcher, [1], None, settings, "sweep", "/logs")
    assert plan["role"] == LAUNCHERS[launcher].role
    assert sorted(plan["sizes"][0]["vars"]) == written_variables(launcher)


@pytest.mark.parametrize("launcher", sorted(SHAPES))
def test_a_size_on_one_node_requires_no_transport_between_nodes(launcher):
    shape = SHAPES[launcher]
    # Two groups of one rank each; the pod launcher's one pod holds both ranks.
    settings = {shape.groups: ["node1", "node2"] if launcher == "ssh" else 2, shape.per_group: 1 if shape.groups else 2,
                shape.gpus: 0, "gpuops_training_require_transport": ["P2P", "ib"]}
    settings.pop(None, None)
    plan = plan_sweep(launcher, [1, 2], None, settings, "sweep", "/logs")
    required = dict((size["ranks"], size["vars"]["gpuops_training_require_transport"]) for size in plan["sizes"])
    assert required == ({1: ["P2P"], 2: ["P2P"]} if shape.groups is None else {1: ["P2P"], 2: ["P2P", "ib"]})
    assert sorted(plan["sizes"][0]["vars"]) == written_variables(launcher, ["P2P", "ib"])


@pytest.mark.parametrize("launcher", sorted(SHAPES))
def test_a_size_on_one_node_requires_no_gpudirect_rdma(launcher):
    shape = SHAPES[launcher]
    settings = {shape.groups: ["node1", "node2"] if launcher == "ssh" else 2, shape.per_group: 1 if shape.groups else 2,
                shape.gpus: 0, "gpuops_training_require_gpudirect_rdma": "yes"}
    settings.pop(None, None)
    plan = plan_sweep(launcher, [1, 2], None, settings, "sweep", "/logs")
    required = dict((size["ranks"], size["vars"]["gpuops_training_require_gpudirect_rdma"]) for size in plan["sizes"])
    assert required == ({1: False, 2: False} if shape.groups is None else {1: False, 2: True})
    assert sorted(plan["sizes"][0]["vars"]) == written_variables(launcher, gpudirect=True)
    unset = plan_sweep(launcher, [1, 2], None, dict(settings, gpuops_training_require_gpudirect_rdma=False), "sweep", "/l")
    assert all("gpuops_training_require_gpudirect_rdma" not in size["vars"] for size in unset["sizes"])


def test_transports_inside_a_node_are_required_as_given_and_set_no_size_variable():
    settings = dict(SLURM, gpuops_training_require_transport=["P2P"])
    plan = plan_sweep("slurm", [1, 4], None, settings, "sweep", "/logs")
    assert all("gpuops_training_require_transport" not in size["vars"] for size in plan["sizes"])


def test_a_size_the_inventory_cannot_hold_is_refused_naming_the_variables():
    with pytest.raises(SweepError) as refused:
        plan_sweep("slurm", [1, 3, 8], None, SLURM, "sweep", "/logs")
    assert refused.value.problems == [
        "gpuops_sweep_ranks: got [1, 3, 8] (with slurm_launcher_nodes=2, slurm_launcher_tasks_per_node=2, "
        "slurm_launcher_gpus_per_node=0); expected sizes that at most 2 node(s) of at most 2 task(s) hold in equal "
        "shares: 3 rank(s) do not",
        "gpuops_sweep_ranks: got [1, 3, 8] (with slurm_launcher_nodes=2, slurm_launcher_tasks_per_node=2, "
        "slurm_launcher_gpus_per_node=0); expected sizes that at most 2 node(s) of at most 2 task(s) hold in equal "
        "shares: 8 rank(s) do not"]
    assert placement(6, 2, 4) == (2, 3) and placement(5, 2, 4) is None


def test_an_unknown_launcher_and_a_bad_capacity_are_refused():
    with pytest.raises(SweepError) as refused:
        plan_sweep("kubectl", [1], None, {}, "sweep", "/logs")
    expected = "gpuops_launcher: got 'kubectl'; expected one of mpijob, tfjob, pytorchjob, pod, job, ssh, slurm"
    assert refused.value.problems == [expected]
    with pytest.raises(SweepError) as refused:
        plan_sweep("slurm", [1], None, dict(SLURM, slurm_launcher_nodes="two"), "sweep", "/logs")
    assert refused.value.problems == ["slurm_launcher_nodes: got 'two'; expected a whole number"]


@pytest.mark.parametrize("ranks", [[], [0, 1], [1, -2], [1, 2, 2], [1, 2.5], ["one"], "1,2,4", None, [True]])
def test_bad_sizes_are_refused_naming_the_variable(ranks):
    sizes, problems = check_ranks(ranks)
    assert sizes == [] and len(problems) == 1
    assert problems[0].startswith("gpuops_sweep_ranks: got ")


def test_sizes_given_as_strings_by_yaml_are_whole_numbers():
    assert check_ranks(["4", 1, 2]) == ([1, 2, 4], [])


@pytest.mark.parametrize("floors", [0, 1.01, -0.5, "high", [0.8], True, {2: 1.5}, {3: 0.8}, {"two": 0.8}, {2: 0}])
def test_bad_floors_are_refused_naming_the_variable(floors):
    found, problems = check_floors(floors, [1, 2, 4])
    assert found == {} and len(problems) == 1
    assert problems[0].startswith("gpuops_sweep_min_efficiency: got ")
    assert "a share above 0 and at most 1" in problems[0]


def test_floors_for_every_size_or_by_size():
    assert check_floors(0.8, [1, 2]) == ({1: 0.8, 2: 0.8}, [])
    assert check_floors({"4": "0.75", 2: 1}, [1, 2, 4]) == ({4: 0.75, 2: 1.0}, [])
    assert check_floors(None, [1, 2]) == ({}, [])


def test_a_bad_name_is_refused():
    with pytest.raises(SweepError) as refused:
        plan_sweep("slurm", [1], None, SLURM, "My Sweep", "/logs")
    assert refused.value.problems[0].startswith("gpuops_sweep_name: got 'My Sweep'; expected a name of lowercase letters")
