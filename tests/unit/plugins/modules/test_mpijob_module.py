# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.cluster.mpijob as Ansible runs it (argument spec, check mode, diff, fail_json), on a fake cluster."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import ApiError
from ansible_collections.gpuops.cluster.plugins.modules import mpijob
from gpuops_testlib.fake_job_api import FakeMPIJobApi
from gpuops_testlib.module_exit import catch_exits, run_k8s_module


@pytest.fixture(autouse=True)
def capture_exit(monkeypatch):
    catch_exits(monkeypatch)


def run(args, api, check_mode=False, diff=False):
    """Run the module against ``api`` (None: the test asserts no API is ever built)."""
    return run_k8s_module(mpijob, args, api, check_mode, diff)


ARGS = dict(name="bench", namespace="ml", image="horovod:0.28.1", command=["mpirun", "python3", "bench.py"],
            workers=2, gpus_per_worker=2, resources={"cpu": 4, "memory": "8Gi", "hugepages-2Mi": "1Gi"})


def test_bad_input_fails_before_any_api_client_is_built_listing_every_problem():
    outcome = run(dict(ARGS, workers=0, gpus_per_worker=-1, resources={"memory": "lots"}), api=None)
    assert outcome.failed
    assert outcome.result["problems"] == [
        "workers must be at least 1, got 0",
        "gpus_per_worker must be at least 0, got -1",
        "resources: 'lots' is not a valid quantity for memory (expected a non-negative number with an optional "
        "suffix such as m, Mi, Gi or G, e.g. 500m, 16Gi, 2)",
    ]
    assert outcome.result["msg"].startswith("invalid MPIJob arguments (3 problem(s)): workers must be at least 1")


def test_definition_with_wrong_kind_fails_naming_definition():
    outcome = run(dict(definition={"apiVersion": "kubeflow.org/v2beta1", "kind": "Job", "metadata": {"name": "x"},
                                   "spec": {"mpiReplicaSpecs": {"Launcher": {}}}}), api=None)
    assert outcome.failed
    assert outcome.result["problems"] == ["definition.kind must be MPIJob, got 'Job'"]


def test_wait_options_are_checked():
    outcome = run(dict(ARGS, wait_timeout=0, wait_sleep=0, log_lines=-1, api_retries=-1), api=None)
    assert outcome.result["problems"] == ["wait_timeout must be at least 1 second, got 0",
                                          "wait_sleep must be above 0 seconds, got 0.0",
                                          "log_lines must be 0 (the whole log) or more, got -1",
                                          "api_retries must be 0 (no retry) or more, got -1"]


def test_wait_options_and_their_defaults():
    spec = mpijob.argument_spec()
    assert spec["fail_on_unschedulable"] == {"type": "bool", "default": True}
    assert spec["api_retries"] == {"type": "int", "default": 10}


def unschedulable_worker(fake):
    fake.set_conditions("ml", "bench", ("Created", "MPIJobCreated", "created"))
    fake.add_pod("bench", "worker", "Pending", 0,
                 unschedulable="0/2 nodes are available: 2 Insufficient nvidia.com/gpu.")


def test_an_unschedulable_pod_fails_the_task_unless_the_site_waits_for_capacity():
    outcome = run(dict(ARGS, wait=True, wait_sleep=0.01), FakeMPIJobApi(script={2: unschedulable_worker}))
    assert outcome.failed
    assert outcome.result["msg"].startswith("MPIJob ml/bench FAILED after ")
    assert outcome.result["reason"] == (
        "pod(s) cannot be scheduled: pod bench-worker-0: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu. "
        "(set fail_on_unschedulable=false to wait for capacity instead, e.g. from a cluster autoscaler)")
    waiting = run(dict(ARGS, wait=True, wait_timeout=1, wait_sleep=0.25, fail_on_unschedulable=False),
                  FakeMPIJobApi(script={2: unschedulable_worker}))
    assert waiting.result["msg"].startswith("timed out after 1 s waiting for MPIJob ml/bench to be Succeeded; it is "
                                            "Created (pods: bench-worker-0=Pending (0/2 nodes are available")


def test_api_retries_bounds_the_tries_of_a_look():
    def restart(fake):
        fake.outage.append(ApiError("reading MPIJob ml/bench on https://10.0.0.1:6443: connection refused",
                                    server="https://10.0.0.1:6443"))

    outcome = run(dict(ARGS, wait=True, api_retries=0), FakeMPIJobApi(script={2: restart}))
    assert outcome.failed
    assert outcome.result["msg"] == (
        "the API server https://10.0.0.1:6443 stayed unavailable while waiting for MPIJob ml/bench (1 attempt(s) over "
        "0.0 s); the last error: reading MPIJob ml/bench on https://10.0.0.1:6443: connection refused")
    assert (outcome.result["changed"], outcome.result["status"]) == (True, None)


def test_check_mode_with_diff_creates_nothing():
    api = FakeMPIJobApi()
    outcome = run(ARGS, api, check_mode=True, diff=True)
    assert not outcome.failed
    assert outcome.result["changed"] is True
    assert outcome.result["method"] == "created"
    assert outcome.result["diff"]["before"] == {}
    assert outcome.result["diff"]["after"]["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 2
    assert api.writes == []


def test_create_then_second_run_unchanged_without_diff_key():
    api = FakeMPIJobApi()
    first = run(ARGS, api)
    assert (first.failed, first.result["changed"], first.result["method"]) == (False, True, "created")
    assert "diff" not in first.result
    second = run(ARGS, api)
    assert (second.result["changed"], second.result["method"]) == (False, "unchanged")
    assert [w[0] for w in api.writes] == ["create"]


def test_different_spec_fails_and_lists_the_differences():
    api = FakeMPIJobApi()
    run(ARGS, api)
    outcome = run(dict(ARGS, env={"NCCL_DEBUG": "INFO"}), api)
    assert outcome.failed
    assert outcome.result["differences"][0].startswith("spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].env:")
    assert "set force=true" in outcome.result["msg"]


def test_failed_job_fails_the_task_with_reason_and_changed():
    def fail(fake):
        fake.set_conditions("ml", "bench", ("Failed", "Evicted", "1/2 workers are evicted"))

    api = FakeMPIJobApi(script={2: fail})
    outcome = run(dict(ARGS, wait=True, wait_sleep=0.01), api)
    assert outcome.failed
    assert outcome.result["changed"] is True
    assert outcome.result["reason"] == "the MPIJob failed: Evicted: 1/2 workers are evicted"
    assert outcome.result["msg"].startswith("MPIJob ml/bench FAILED after ")


def test_absent_needs_a_name_and_deletes():
    outcome = run(dict(state="absent"), api=None)
    assert outcome.result["problems"] == ["name is required (the MPIJob's metadata.name)"]
    api = FakeMPIJobApi()
    run(ARGS, api)
    outcome = run(dict(name="bench", namespace="ml", state="absent"), api)
    assert (outcome.result["changed"], outcome.result["method"]) == (True, "deleted")
    assert api.writes[-1] == ("delete", "ml", "bench")


def test_request_timeout_below_one_second_is_refused_before_any_api_client_is_built():
    outcome = run(dict(ARGS, request_timeout=0), api=None)
    assert outcome.failed
    assert outcome.result["problems"] == ["request_timeout must be at least 1 second, got 0"]
    assert outcome.result["msg"] == "invalid MPIJob arguments (1 problem(s)): request_timeout must be at least 1 second, got 0"


def test_api_key_is_not_logged_and_the_connection_options_are_the_shared_ones():
    assert mpijob.argument_spec()["api_key"]["no_log"] is True
    assert mpijob.argument_spec()["request_timeout"] == {"type": "int", "default": 60}


def test_launch_options_reach_the_spec_and_a_relative_host_path_is_refused():
    api = FakeMPIJobApi()
    outcome = run(dict(ARGS, shm_size="1Gi", host_paths=["/dev/hugepages"], privileged=True,
                       service_account="gpuops-benchmark"), api, check_mode=True)
    worker = outcome.result["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    assert worker["volumes"][1] == {"name": "host-path-0", "hostPath": {"path": "/dev/hugepages"}}
    assert worker["containers"][0]["securityContext"] == {"privileged": True}
    assert worker["serviceAccountName"] == "gpuops-benchmark"
    refused = run(dict(ARGS, host_paths=["sys"]), api=None)
    assert refused.result["problems"] == ["host_paths[0]: 'sys' must be an absolute path such as /dev/hugepages"]
