# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pod options InfiniBand and RoCE need, on the lab make lab made: a pod given IPC_LOCK (which RDMA needs to
pin memory) and a /dev/shm size runs for real in a namespace the job_namespace role labelled privileged for it,
and its own /proc and df show both; the same pod without the option lacks the capability."""

from __future__ import annotations

import json

import yaml

from gpuops_testlib.ansible_run import ansible_env, run_playbook
from gpuops_testlib.lab_pods import controller_inventory, kubectl, module_namespace, workload_image
from main_job import KUBECONFIG

NAMESPACE = "e2e-rdma"
IPC_LOCK_BIT = 14  # CAP_IPC_LOCK in linux/capability.h
SHOW = "grep '^CapEff:' /proc/self/status; df -k /dev/shm | tail -n 1"

_namespace = module_namespace("rdma_namespace", NAMESPACE)


def _job(name, **options):
    return {"name": "Run " + name, "register": name.replace("-", "_"), "gpuops.cluster.batch_job": dict({
        "kubeconfig": KUBECONFIG, "name": name, "namespace": NAMESPACE, "image": workload_image(),
        "image_pull_policy": "Never", "command": ["sh", "-c", SHOW], "wait": True, "wait_timeout": 120,
        "ttl_seconds_after_finished": 60}, **options)}


def _run_pods(tmp_path):
    playbook = tmp_path / "rdma_pods.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "Create the namespace with the pod security IPC_LOCK needs",
         "ansible.builtin.include_role": {"name": "gpuops.cluster.job_namespace"},
         "vars": {"job_namespace_name": NAMESPACE, "job_namespace_kubeconfig": KUBECONFIG,
                  "job_namespace_capabilities": ["IPC_LOCK"]}},
        _job("with-ipc-lock", capabilities=["IPC_LOCK"], shm_size="256Mi"),
        _job("without", shm_size="256Mi"),
    ]}]))
    return run_playbook(str(playbook), controller_inventory(tmp_path / "inventory.yml", {}), env=ansible_env(), timeout=300)


def _effective_capabilities_and_shm_kib(log):
    capabilities_line, shm_line = log.strip().splitlines()[-2:]
    return int(capabilities_line.split()[1], 16), int(shm_line.split()[1])


def test_a_pod_with_ipc_lock_and_a_shm_size_runs_with_both(rdma_namespace, tmp_path):
    done = _run_pods(tmp_path)
    assert done.rc == 0, done.explain()
    labels = json.loads(kubectl("get", "namespace", NAMESPACE, "-o", "json").stdout)["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "privileged", labels

    with_lock = done.result("Run with-ipc-lock")
    assert with_lock["phase"] == "Succeeded", with_lock
    capabilities, shm_kib = _effective_capabilities_and_shm_kib(with_lock["launcher_log"])
    assert capabilities & (1 << IPC_LOCK_BIT), with_lock["launcher_log"]
    assert shm_kib == 256 * 1024, with_lock["launcher_log"]
    assert with_lock["job"]["spec"]["template"]["spec"]["containers"][0]["securityContext"] == {
        "capabilities": {"add": ["IPC_LOCK"]}}

    without = done.result("Run without")
    capabilities, _shm = _effective_capabilities_and_shm_kib(without["launcher_log"])
    assert not capabilities & (1 << IPC_LOCK_BIT), without["launcher_log"]
