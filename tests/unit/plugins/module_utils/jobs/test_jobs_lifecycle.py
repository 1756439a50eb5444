# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ensure_present / ensure_absent against a fake cluster (gpuops_testlib.fake_job_api): idempotence, force, check
mode, fail-fast, logs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.applied_spec import APPLIED_SPEC_ANNOTATION
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.errors import JobFailedError, SpecConflictError, WaitTimeoutError
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.lifecycle import ensure_absent, ensure_present
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.mpijob import MPIJOB, build_mpijob
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import ApiError
from gpuops_testlib.fake_job_api import BENCH, LOG, FakeMPIJobApi, existing, running, settings, succeeded


def test_create_sends_the_spec_with_the_applied_spec_annotation():
    api = FakeMPIJobApi()
    body = build_mpijob(BENCH)
    result = ensure_present(MPIJOB, api, body, settings())
    assert result["changed"] is True
    assert result["method"] == "created"
    assert result["spec"] == body["spec"]
    assert result["phase"] == "Pending"
    [(verb, namespace, sent)] = api.writes
    assert (verb, namespace) == ("create", "ml")
    assert sent["spec"] == body["spec"]
    assert APPLIED_SPEC_ANNOTATION in sent["metadata"]["annotations"]


def test_check_mode_writes_nothing_and_returns_the_spec_it_would_create():
    api = FakeMPIJobApi()
    body = build_mpijob(BENCH)
    result = ensure_present(MPIJOB, api, body, settings(check_mode=True, wait=True))
    assert api.writes == []
    assert (result["changed"], result["method"]) == (True, "created")
    assert result["spec"] == body["spec"]
    assert result["mpijob"] == body
    assert result["diff"] == {"before": {}, "after": {"spec": body["spec"]}}


# Two workers more: the launcher's wait for their names (its init container's WORKERS) and the replicas.
MORE_WORKERS = ['spec.mpiReplicaSpecs.Launcher.template.spec.initContainers[0].env[1].value: "2" -> "4"',
                "spec.mpiReplicaSpecs.Worker.replicas: 2 -> 4"]


def test_same_spec_again_is_unchanged_and_different_spec_fails_without_force():
    api = existing()
    result = ensure_present(MPIJOB, api, build_mpijob(BENCH), settings())
    assert (result["changed"], result["method"], result["differences"]) == (False, "unchanged", [])
    with pytest.raises(SpecConflictError) as raised:
        ensure_present(MPIJOB, api, build_mpijob(dict(BENCH, workers=4)), settings())
    assert str(raised.value) == (
        "MPIJob ml/bench exists with a different spec (" + "; ".join(MORE_WORKERS) + "). MPIJob specs "
        "are mostly immutable: set force=true to delete and recreate it, or use another name.")
    assert api.writes == []


def test_force_deletes_waits_until_gone_and_creates_again():
    api = existing()
    api.deletion_reads = 2
    result = ensure_present(MPIJOB, api, build_mpijob(dict(BENCH, workers=4)), settings(force=True))
    assert (result["changed"], result["method"]) == (True, "replaced")
    assert [w[0] for w in api.writes] == ["delete", "create"]
    assert api.writes[1][2]["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 4


def test_force_in_check_mode_only_reports_the_replacement():
    api = existing()
    result = ensure_present(MPIJOB, api, build_mpijob(dict(BENCH, workers=4)), settings(force=True, check_mode=True))
    assert (result["changed"], result["method"]) == (True, "replaced")
    assert result["differences"] == MORE_WORKERS
    assert api.writes == []


def test_wait_until_succeeded_returns_status_and_the_launcher_log_tail():
    api = FakeMPIJobApi(logs={"bench-launcher-x7k2p": LOG}, script={3: running, 6: succeeded})
    result = ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True, log_lines=2))
    assert result["phase"] == "Succeeded"
    assert result["elapsed"] == 4.0
    assert result["replica_statuses"] == {"Launcher": {"succeeded": 1}, "Worker": {"active": 2}}
    assert result["launcher_log"] == "Iter #9: 100.0 img/sec per GPU\nTotal img/sec on 4 GPU(s): 400.0 +-1.0\n"
    assert result["launcher_log_source"] == "pod/bench-launcher-x7k2p"
    assert result["launcher_log_error"] is None
    assert sorted(p["name"] for p in result["pods"]) == ["bench-launcher-x7k2p", "bench-worker-0", "bench-worker-1"]


def test_second_run_on_a_finished_job_is_unchanged_and_returns_its_status_at_once():
    api = FakeMPIJobApi(logs={"bench-launcher-x7k2p": LOG}, script={2: running, 3: succeeded})
    ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True))
    api.writes = []
    result = ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True))
    assert (result["changed"], result["phase"], result["elapsed"]) == (False, "Succeeded", 0.0)
    assert api.writes == []


def worker_crashes(api):
    for pod in api.pods:
        if pod["metadata"]["name"] == "bench-worker-1":
            pod["status"] = {"phase": "Failed", "containerStatuses": [
                {"name": "worker", "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]}


def test_failed_worker_ends_the_wait_at_once_with_reason_events_and_log():
    events = [
        {"involvedObject": {"kind": "Pod", "name": "bench-worker-1"}, "type": "Warning", "reason": "OOMKilling",
         "message": "Memory cgroup out of memory", "count": 1, "lastTimestamp": "2025-06-01T10:05:00Z"},
        {"involvedObject": {"kind": "MPIJob", "name": "bench"}, "type": "Normal", "reason": "MPIJobRunning",
         "message": "MPIJob ml/bench is running", "count": 1, "lastTimestamp": "2025-06-01T10:01:00Z"},
    ]
    api = FakeMPIJobApi(events=events, logs={"bench-launcher-x7k2p": LOG + "ORTE has lost communication\n"},
                        script={3: running, 5: worker_crashes})
    clock = itertools.count(0.0, 1.0)
    with pytest.raises(JobFailedError) as raised:
        ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True, wait_timeout=3600, log_lines=1,
                                                                  ticks_factory=lambda: clock))
    details = raised.value.details
    assert str(raised.value).startswith("MPIJob ml/bench FAILED after 3.0 s: worker pod(s) failed: bench-worker-1: "
                                        "container worker exit code 137 (OOMKilled)")
    # The waiter stopped at the failing look: the clock was not run on towards the timeout.
    assert next(clock) == 4.0
    assert details["changed"] is True
    assert details["detected_at"] == 1000.0
    assert details["phase"] == "Running"
    assert details["launcher_log"] == "ORTE has lost communication\n"
    assert details["failed_pods"] == [{
        "name": "bench-worker-1", "role": "worker", "phase": "Failed", "node": "node1", "reason": None, "message": None,
        "terminated_containers": [{"name": "worker", "exit_code": 137, "reason": "OOMKilled", "message": None,
                                   "finished_at": None}],
        "events": [{"type": "Warning", "reason": "OOMKilling", "message": "Memory cgroup out of memory", "count": 1,
                    "last_seen": "2025-06-01T10:05:00Z"}]}]
    assert details["events"] == [{"type": "Normal", "reason": "MPIJobRunning", "message": "MPIJob ml/bench is running",
                                  "count": 1, "last_seen": "2025-06-01T10:01:00Z"}]


def test_failed_condition_ends_the_wait():
    def fail(api):
        api.set_conditions("ml", "bench", ("Failed", "DeadlineExceeded", "MPIJob ml/bench has failed"))

    api = FakeMPIJobApi(script={2: fail})
    with pytest.raises(JobFailedError) as raised:
        ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True))
    assert raised.value.details["reason"] == "the MPIJob failed: DeadlineExceeded: MPIJob ml/bench has failed"
    assert raised.value.details["launcher_log_error"] == "no launcher pod exists (yet)"


def test_timeout_names_the_phase_and_the_pods():
    api = FakeMPIJobApi(script={2: running})
    with pytest.raises(WaitTimeoutError) as raised:
        ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True, wait_timeout=5,
                                                                  ticks_factory=lambda: iter([0.0, 1.0, 5.0])))
    assert str(raised.value) == (
        "timed out after 5 s waiting for MPIJob ml/bench to be Succeeded; it is Running (pods: bench-worker-0=Running, "
        "bench-worker-1=Running, bench-launcher-x7k2p=Running)")


def test_without_fail_on_unschedulable_the_timeout_tells_why_a_pod_is_not_scheduled():
    def pending(api):
        name = api.add_pod("bench", "worker", "Pending", 0,
                           unschedulable="0/3 nodes are available: 3 Insufficient hugepages-1Gi.")
        assert name == "bench-worker-0"

    api = FakeMPIJobApi(script={2: pending})
    with pytest.raises(WaitTimeoutError) as raised:
        ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True, wait_timeout=5, fail_on_unschedulable=False,
                                                                  ticks_factory=lambda: iter([0.0, 5.0])))
    assert str(raised.value).endswith("it is Pending (pods: bench-worker-0=Pending (0/3 nodes are available: 3 "
                                      "Insufficient hugepages-1Gi.))")


def test_wait_for_running():
    api = FakeMPIJobApi(script={3: running})
    result = ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True, wait_for="Running"))
    assert result["phase"] == "Running"


def test_a_launcher_log_the_api_cannot_serve_is_empty_and_the_result_says_why():
    unavailable = ApiError("reading the log of pod ml/bench-launcher-x7k2p: HTTP 500: no kubelet", status=500)
    api = FakeMPIJobApi(logs={"bench-launcher-x7k2p": unavailable}, script={2: running, 3: succeeded})
    result = ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True))
    assert result["phase"] == "Succeeded"
    assert (result["launcher_log"], result["launcher_log_source"]) == ("", "none")
    assert result["launcher_log_pod"] == "bench-launcher-x7k2p"
    assert result["launcher_log_error"] == ("the API could not serve the log of launcher pod bench-launcher-x7k2p: "
                                            "reading the log of pod ml/bench-launcher-x7k2p: HTTP 500: no kubelet")


def test_a_launcher_that_did_not_start_has_no_log_and_the_result_says_why():
    def pending_launcher(api):
        api.add_pod("bench", "launcher", "Pending")
        api.add_pod("bench", "worker", "Failed", 1, exit_code=1, reason="Error")

    api = FakeMPIJobApi(logs={"bench-launcher-x7k2p": LOG}, script={2: pending_launcher})
    with pytest.raises(JobFailedError) as raised:
        ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True))
    details = raised.value.details
    assert (details["launcher_log"], details["launcher_log_source"]) == ("", "none")
    assert details["launcher_log_error"] == "launcher pod bench-launcher-x7k2p has not started (phase Pending)"


def test_absent_deletes_and_waits_until_gone():
    api = existing()
    api.deletion_reads = 3
    result = ensure_absent(MPIJOB, api, "ml", "bench", settings(wait=True))
    assert (result["changed"], result["method"]) == (True, "deleted")
    assert api.writes == [("delete", "ml", "bench")]
    assert result["elapsed"] == 3.0
    assert api.get("ml", "bench") is None


def test_absent_when_gone_and_in_check_mode():
    api = FakeMPIJobApi()
    assert ensure_absent(MPIJOB, api, "ml", "bench", settings(wait=True))["changed"] is False
    api = existing()
    result = ensure_absent(MPIJOB, api, "ml", "bench", settings(check_mode=True, wait=True))
    assert (result["changed"], api.writes) == (True, [])


def test_absent_times_out_when_the_job_stays():
    api = existing()
    api.deletion_reads = 100
    with pytest.raises(WaitTimeoutError) as raised:
        ensure_absent(MPIJOB, api, "ml", "bench", settings(wait=True, wait_timeout=2,
                                                           ticks_factory=lambda: iter([0.0, 1.0, 2.0])))
    assert str(raised.value) == ("MPIJob ml/bench was not gone 2 s after its deletion (foreground: its pods are "
                                 "deleted first)")
