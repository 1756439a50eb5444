# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad input to site.yml on the lab make lab made, as a user types it (-e name=value gives strings): the run
stops in its first task, the input check, with exactly the wrong values named, one line each; no other task
runs, no task changes anything and no API object appears, in check mode and for real."""

from __future__ import annotations

import os
import time

import pytest

from gpuops_testlib.ansible_run import ansible_env, run_playbook, short_name
from gpuops_testlib.lab_control_plane import LAB_INVENTORY
from main_job import LAB_DIR, REPO_ROOT, kubectl

SITE = os.path.join(REPO_ROOT, "playbooks", "site.yml")
CHECK_TASK = "Check the variables of every role this run takes here"
HOSTS = ("localhost", "node1", "node2")
NODES = ("node1", "node2")
LAUNCHERS = "one of mpijob, tfjob, pytorchjob, pod, job, ssh, slurm"
# What the API holds that a run could create; a list of uids, so an object made and deleted again shows too.
KINDS = "namespaces,serviceaccounts,configmaps,secrets,services,deployments,daemonsets,jobs,pods," \
        "mpijobs.kubeflow.org,tfjobs.kubeflow.org"


def on(hosts, *lines):
    return dict((host, list(lines)) for host in hosts)


# (id, -e arguments as typed, extra options, {host: the problem lines it reports}).
CASES = [
    ("unknown launcher", ["gpuops_launcher=bogus"], [],
     on(HOSTS, "gpuops_launcher: got 'bogus'; expected " + LAUNCHERS)),
    ("negative page count as a string", ["hugepages_1g_count=-3"], [],
     on(NODES, "hugepages_1g_count: got -3; expected a whole number of 1 GiB pages, 0 or more")),
    ("a word for a page count", ["hugepages_2m_count=lots"], [],
     on(NODES, "hugepages_2m_count: got 'lots'; expected a whole number")),
    ("a fraction above one", ["hugepages_max_memory_fraction=1.5"], [],
     on(NODES, "hugepages_max_memory_fraction: got 1.5; expected a share of the node's memory above 0 and at "
               "most 1, such as 0.9")),
    ("a mount point over /etc", ["hugepages_mount_enabled=true", "hugepages_1g_count=1", "hugepages_mount_path=/etc"], [],
     on(NODES, "hugepages_mount_path: got '/etc'; expected an absolute path of a directory of its own, such as "
               "/dev/hugepages1G")),
    ("a page size without pages", ["hugepages_mount_enabled=yes", "hugepages_mount_page_size=1G"], [],
     on(NODES, "hugepages_mount_page_size: got '1G' (with hugepages_1g_count=0, hugepages_2m_count=64); expected a "
               "page size with pages: set hugepages_1g_count above 0 (with its feature enabled), or choose the "
               "other page size")),
    ("a boolean that is not one", ["gpuops_training_operator=maybe"], [],
     on(HOSTS, "gpuops_training_operator: got 'maybe'; expected true or false")),
    ("an unknown GPU stack", ["gpuops_gpu_stack=cuda"], [],
     on(HOSTS, "gpuops_gpu_stack: got 'cuda'; expected one of device_plugin, gpu_operator")),
    ("zero expected ranks", ["gpuops_training_expect_ranks=0"], [],
     on(HOSTS, "gpuops_training_expect_ranks: got 0; expected a number of ranks, 1 or more")),
    ("an efficiency above one", ["gpuops_training_min_scaling_efficiency=90"], [],
     on(HOSTS, "gpuops_training_min_scaling_efficiency: got 90.0; expected a share above 0 and at most 1, such as 0.9")),
    ("every problem of a host at once", ["hugepages_1g_count=-1", "hugepages_2m_count=-2"], [],
     on(NODES, "hugepages_2m_count: got -2; expected a whole number of 2 MiB pages, 0 or more",
        "hugepages_1g_count: got -1; expected a whole number of 1 GiB pages, 0 or more")),
    ("expected ranks against the MPIJob's", ["gpuops_training_expect_ranks=3"], [],
     {"localhost": ["gpuops_training_expect_ranks: got 3 (with mpijob_launcher_workers=2, "
                    "mpijob_launcher_slots_per_worker=2, mpijob_launcher_gpus_per_worker=2); expected 4, the ranks the "
                    "mpijob launcher starts (2 workers x 2 slots), or leave it unset to expect that count"]}),
    ("the inventory's ranks against the chosen TFJob's", ["gpuops_launcher=tfjob"], [],
     {"localhost": ["gpuops_training_expect_ranks: got 4 (with tfjob_launcher_workers=2); expected 2, the ranks the "
                    "tfjob launcher starts (2 workers x 1 rank), or leave it unset to expect that count"]}),
    ("both wrong launcher values at once", ["mpijob_launcher_ssh_port=70000", "mpijob_launcher_workers=0"], [],
     {"localhost": ["mpijob_launcher_ssh_port: got 70000; expected a port from 1 to 65535 for the workers' sshd",
                    "mpijob_launcher_workers: got 0; expected a number of workers, 1 or more"]}),
    ("the SSH launcher's port on its hosts", ["gpuops_launcher=ssh", "ssh_launcher_ssh_port=0"], [],
     on(NODES, "ssh_launcher_ssh_port: got 0; expected a port from 1 to 65535, the hosts' SSH port")),
    ("a driver branch that is not one", ["nvidia_driver_branch=abc"], [],
     on(NODES, "nvidia_driver_branch: got 'abc'; expected a driver branch of three digits, such as 570, or null for "
               "the newest driver")),
    ("a boolean of the network role", ["gpu_network_nccl_enabled=maybe"], [],
     on(NODES, "gpu_network_nccl_enabled: got 'maybe'; expected true or false")),
    ("a stage skipped by --skip-tags is not checked", ["nvidia_driver_branch=abc", "mpijob_launcher_workers=0"],
     ["--skip-tags", "nodes"],
     {"localhost": ["mpijob_launcher_workers: got 0; expected a number of workers, 1 or more"]}),
    ("an operator version that is not a tag", ["mpi_operator_version=0.8"], [],
     {"localhost": ["mpi_operator_version: got '0.8'; expected a release tag of kubeflow/mpi-operator, such as v0.8.0"]}),
    ("a taint with an unknown effect", ['{"gpu_node_labels_taint_enabled": true, "gpu_node_labels_taint": '
                                        '{"key": "nvidia.com/gpu", "effect": "Sometimes"}}'], [],
     on(NODES, 'gpu_node_labels_taint: got {"effect": "Sometimes", "key": "nvidia.com/gpu"}; expected a taint whose '
               "effect is NoSchedule, PreferNoSchedule or NoExecute")),
    ("a stage left out by --tags is not checked", ["hugepages_1g_count=-1", "gpuops_training_expect_ranks=0"],
     ["--tags", "verify"],
     on(HOSTS, "gpuops_training_expect_ranks: got 0; expected a number of ranks, 1 or more")),
]


def _api_objects():
    listed = kubectl("get", KINDS, "-A", "-o", "jsonpath={range .items[*]}{.metadata.uid}{'\\n'}{end}")
    return set(listed.stdout.split())


def _settled_api_objects(timeout=180):
    """The uids once no namespace is being deleted: a deletion still running would empty it mid-test."""
    deadline = time.monotonic() + timeout
    while True:
        phases = kubectl("get", "namespaces", "-o", "jsonpath={range .items[*]}{.metadata.name}={.status.phase}{' '}{end}")
        terminating = [entry for entry in phases.stdout.split() if entry.endswith("=Terminating")]
        if not terminating:
            return _api_objects()
        assert time.monotonic() < deadline, "namespaces still being deleted after %d s: %s" % (timeout, terminating)
        time.sleep(2)


def _site(arguments, options, check):
    return run_playbook(SITE, LAB_INVENTORY, arguments, (["--check"] if check else []) + list(options),
                        env=ansible_env(TMPDIR=os.path.join(LAB_DIR, "tmp")), timeout=300)


# Every case for real, where a change would count; in check mode, which takes the same first task, the cases of
# each kind of host (all hosts, the nodes only) and of many problems at once.
IN_CHECK_MODE_TOO = ("unknown launcher", "negative page count as a string", "every problem of a host at once")
RUNS = [pytest.param(case[1], case[2], case[3], False, id=case[0] + "-real mode") for case in CASES] + [
    pytest.param(case[1], case[2], case[3], True, id=case[0] + "-check mode") for case in CASES if case[0] in IN_CHECK_MODE_TOO]


@pytest.mark.parametrize("arguments, options, problems, check", RUNS)
def test_bad_input_stops_the_run_in_its_first_task_naming_only_what_is_wrong(second_run, arguments, options,
                                                                             problems, check):
    assert second_run.rc == 0, second_run.explain()
    before = _settled_api_objects()
    done = _site(arguments, options, check)
    assert done.rc == 2, done.explain()
    assert {short_name(task) for task, _host, _result in done.tasks()} == {CHECK_TASK}, done.explain()
    reported = dict((host, result["problems"]) for _task, host, result in done.tasks() if result.get("failed"))
    assert reported == problems
    for host, result in ((host, result) for _task, host, result in done.tasks()):
        assert result["changed"] is False, host
        assert result["msg"].splitlines()[1:] == problems.get(host, []) or not result.get("failed"), result["msg"]
    assert all(stats["changed"] == 0 for stats in done.document["stats"].values()), done.document["stats"]
    assert _api_objects() == before
