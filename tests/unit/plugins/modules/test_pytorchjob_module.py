# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.cluster.pytorchjob as Ansible runs it (argument spec, check mode, idempotence, fail_json), on a fake cluster."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.pytorchjob import PYTORCHJOB
from ansible_collections.gpuops.cluster.plugins.modules import pytorchjob
from gpuops_testlib.fake_job_api import FakeMPIJobApi
from gpuops_testlib.module_exit import catch_exits, run_k8s_module
from gpuops_testlib.pytorchjob_pods import (
    LOGS,
    master_completes,
    pods_run,
    worker_crashes,
)

ARGS = dict(name="ddp-bench", namespace="ml", image="pytorch:2.5.1-cuda12.4", command=["torchrun", "bench.py"],
            workers=3, procs_per_worker=2, gpus_per_worker=2)


@pytest.fixture(autouse=True)
def capture_exit(monkeypatch):
    catch_exits(monkeypatch)


def test_bad_input_fails_before_any_api_client_is_built_listing_every_problem():
    outcome = run_k8s_module(pytorchjob, dict(ARGS, workers=0, procs_per_worker=0, gpus_per_worker=-1), api=None)
    assert outcome.failed
    assert outcome.result["problems"] == ["workers must be at least 1, got 0", "gpus_per_worker must be at least 0, got -1",
                                          "procs_per_worker must be at least 1, got 0"]
    assert outcome.result["msg"].startswith("invalid PyTorchJob arguments (3 problem(s)): workers must be at least 1")


def test_check_mode_shows_the_spec_and_creates_nothing_then_a_second_run_changes_nothing():
    api = FakeMPIJobApi(kind=PYTORCHJOB)
    planned = run_k8s_module(pytorchjob, ARGS, api, check_mode=True, diff=True)
    assert (planned.failed, planned.result["changed"], planned.result["method"]) == (False, True, "created")
    spec = planned.result["diff"]["after"]["spec"]
    assert {replica_type: replica["replicas"] for replica_type, replica in spec["pytorchReplicaSpecs"].items()} == {
        "Master": 1, "Worker": 2}
    assert (spec["nprocPerNode"], planned.result["pytorchjob"]["kind"], api.writes) == ("2", "PyTorchJob", [])
    first = run_k8s_module(pytorchjob, ARGS, api)
    second = run_k8s_module(pytorchjob, ARGS, api)
    assert (first.result["changed"], second.result["changed"], second.result["method"]) == (True, False, "unchanged")
    assert [write[0] for write in api.writes] == ["create"]


def test_a_failed_worker_fails_the_task_with_the_reason_and_every_pods_log():
    api = FakeMPIJobApi(kind=PYTORCHJOB, logs=LOGS, script={2: pods_run, 3: worker_crashes})
    outcome = run_k8s_module(pytorchjob, dict(ARGS, wait=True, wait_sleep=0.01), api)
    assert outcome.failed
    assert outcome.result["msg"].startswith("PyTorchJob ml/ddp-bench FAILED after ")
    assert outcome.result["reason"].startswith("worker pod(s) failed: ddp-bench-worker-1: container pytorch exit code 1")
    assert [log["pod"] for log in outcome.result["replica_logs"]] == ["ddp-bench-master-0", "ddp-bench-worker-0",
                                                                      "ddp-bench-worker-1"]


def test_a_job_whose_master_completes_returns_the_masters_log():
    api = FakeMPIJobApi(kind=PYTORCHJOB, logs=LOGS, script={2: pods_run, 3: master_completes})
    outcome = run_k8s_module(pytorchjob, dict(ARGS, wait=True, wait_sleep=0.01), api)
    assert not outcome.failed
    assert (outcome.result["phase"], outcome.result["master_log_pod"]) == ("Succeeded", "ddp-bench-master-0")


def test_the_argument_spec_is_the_shared_one_with_the_kinds_own_options():
    spec = pytorchjob.argument_spec()
    assert spec["procs_per_worker"] == {"type": "int"}
    assert spec["clean_pod_policy"]["choices"] == ["None", "Running", "All"]
    assert spec["api_key"]["no_log"] is True
    assert "parameter_servers" not in spec
