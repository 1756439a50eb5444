# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.cluster.tfjob as Ansible runs it (argument spec, check mode, idempotence, fail_json), on a fake cluster."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.tfjob import TFJOB
from ansible_collections.gpuops.cluster.plugins.modules import tfjob
from gpuops_testlib.fake_job_api import FakeMPIJobApi
from gpuops_testlib.module_exit import catch_exits, run_k8s_module
from gpuops_testlib.tfjob_pods import (
    CREATED,
    RUNNING,
    ps_crashes,
    replicas_run,
)

ARGS = dict(name="ps-bench", namespace="ml", image="tensorflow:2.16.1-gpu", command=["python3", "bench.py"],
            workers=2, parameter_servers=1, chief=True, gpus_per_worker=1)


@pytest.fixture(autouse=True)
def capture_exit(monkeypatch):
    catch_exits(monkeypatch)


def test_bad_input_fails_before_any_api_client_is_built_listing_every_problem():
    outcome = run_k8s_module(tfjob, dict(ARGS, workers=0, parameter_servers=-1, port=0), api=None)
    assert outcome.failed
    assert outcome.result["problems"] == ["workers must be at least 1, got 0", "parameter_servers must be at least 0, got -1",
                                          "port must be at least 1, got 0"]
    assert outcome.result["msg"].startswith("invalid TFJob arguments (3 problem(s)): workers must be at least 1")


def test_check_mode_shows_the_spec_and_creates_nothing_then_a_second_run_changes_nothing():
    api = FakeMPIJobApi(kind=TFJOB)
    planned = run_k8s_module(tfjob, ARGS, api, check_mode=True, diff=True)
    assert (planned.failed, planned.result["changed"], planned.result["method"]) == (False, True, "created")
    replicas = planned.result["diff"]["after"]["spec"]["tfReplicaSpecs"]
    assert {replica_type: spec["replicas"] for replica_type, spec in replicas.items()} == {"Chief": 1, "PS": 1, "Worker": 2}
    assert planned.result["tfjob"]["kind"] == "TFJob"
    assert api.writes == []
    first = run_k8s_module(tfjob, ARGS, api)
    second = run_k8s_module(tfjob, ARGS, api)
    assert (first.result["changed"], second.result["changed"], second.result["method"]) == (True, False, "unchanged")
    assert "diff" not in first.result
    assert [write[0] for write in api.writes] == ["create"]


def test_a_failed_parameter_server_fails_the_task_with_the_reason_and_every_replicas_log():
    logs = {"ps-bench-chief-0": "UnavailableError\n", "ps-bench-ps-0": "Traceback: OOM\n",
            "ps-bench-worker-0": "worker 0\n", "ps-bench-worker-1": "worker 1\n"}
    api = FakeMPIJobApi(kind=TFJOB, logs=logs, script={2: replicas_run, 3: ps_crashes})
    outcome = run_k8s_module(tfjob, dict(ARGS, wait=True, wait_sleep=0.01), api)
    assert outcome.failed
    assert outcome.result["msg"].startswith("TFJob ml/ps-bench FAILED after ")
    assert outcome.result["reason"].startswith("ps pod(s) failed: ps-bench-ps-0: container tensorflow exit code 1")
    assert (outcome.result["changed"], outcome.result["master_log"]) == (True, "UnavailableError\n")
    assert outcome.result["replica_logs"] == [
        {"pod": "ps-bench-chief-0", "replica_type": "chief", "index": 0, "text": "UnavailableError\n", "error": None},
        {"pod": "ps-bench-ps-0", "replica_type": "ps", "index": 0, "text": "Traceback: OOM\n", "error": None},
        {"pod": "ps-bench-worker-0", "replica_type": "worker", "index": 0, "text": "worker 0\n", "error": None},
        {"pod": "ps-bench-worker-1", "replica_type": "worker", "index": 1, "text": "worker 1\n", "error": None},
    ]


def test_a_job_that_succeeds_returns_the_masters_log_and_the_replicas_logs():
    def chief_completes(api):
        api.set_conditions("ml", "ps-bench", CREATED, RUNNING, ("Succeeded", "TFJobSucceeded", "done"))
        api.pods[0]["status"]["phase"] = "Succeeded"

    api = FakeMPIJobApi(kind=TFJOB, logs={"ps-bench-chief-0": "done\n"}, script={2: replicas_run, 3: chief_completes})
    outcome = run_k8s_module(tfjob, dict(ARGS, wait=True, wait_sleep=0.01), api)
    assert not outcome.failed
    assert (outcome.result["phase"], outcome.result["master_log"], outcome.result["master_log_pod"]) == (
        "Succeeded", "done\n", "ps-bench-chief-0")
    not_served = [log["pod"] for log in outcome.result["replica_logs"] if log["error"]]
    assert not_served == ["ps-bench-ps-0", "ps-bench-worker-0", "ps-bench-worker-1"]


def test_a_definition_excludes_the_high_level_options_and_absent_deletes_the_job_it_names():
    definition = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "raw", "namespace": "ml"},
                  "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {"containers": [
                      {"name": "tensorflow", "image": "tf"}]}}}}}}
    refused = run_k8s_module(tfjob, dict(definition=definition, workers=2), api=None)
    assert refused.result["problems"] == ["definition is mutually exclusive with workers: give a raw TFJob or the "
                                          "high-level options, not both"]
    api = FakeMPIJobApi(kind=TFJOB)
    assert run_k8s_module(tfjob, dict(definition=definition), api).result["method"] == "created"
    deleted = run_k8s_module(tfjob, dict(definition=definition, state="absent"), api)
    assert (deleted.result["changed"], api.writes[-1]) == (True, ("delete", "ml", "raw"))


def test_the_argument_spec_is_the_shared_one_with_the_kinds_own_options():
    spec = tfjob.argument_spec()
    assert spec["chief"] == {"type": "bool", "default": False}
    assert spec["clean_pod_policy"]["choices"] == ["None", "Running", "All"]
    assert spec["api_key"]["no_log"] is True
    assert spec["fail_on_unschedulable"] == {"type": "bool", "default": True}
