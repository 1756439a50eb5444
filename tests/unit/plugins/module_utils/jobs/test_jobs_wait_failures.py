# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiting for an MPIJob on a fake cluster whose pods cannot start or be placed, and whose API server restarts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.errors import JobFailedError
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.lifecycle import ensure_absent, ensure_present
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.mpijob import MPIJOB, build_mpijob
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import ApiError
from gpuops_testlib.fake_job_api import (
    BENCH,
    LOG,
    FakeMPIJobApi,
    existing,
    running,
    settings,
    succeeded,
)

SERVER = "https://10.0.0.1:6443"
NEVER_PULL = 'Container image "horovod:0.28.1" is not present with pull policy of Never'
NO_GPU = "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."


def created(api):
    api.set_conditions("ml", "bench", ("Created", "MPIJobCreated", "created"))


def image_never_pulled(api):
    created(api)
    api.add_pod("bench", "worker", "Pending", 0, waiting=("ErrImageNeverPull", NEVER_PULL))
    api.add_pod("bench", "worker", "Pending", 1, waiting=("ContainerCreating", None))


def test_an_image_that_cannot_be_pulled_ends_the_wait_at_once_with_the_pod_and_its_events():
    events = [{"involvedObject": {"kind": "Pod", "name": "bench-worker-0"}, "type": "Warning",
               "reason": "ErrImageNeverPull", "message": NEVER_PULL, "count": 3,
               "lastTimestamp": "2025-06-01T10:00:05Z"}]
    api = FakeMPIJobApi(events=events, script={3: image_never_pulled})
    clock = itertools.count(0.0, 1.0)
    with pytest.raises(JobFailedError) as raised:
        ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True, wait_timeout=1800,
                                                                  ticks_factory=lambda: clock))
    assert str(raised.value) == (
        'MPIJob ml/bench FAILED after 1.0 s: container(s) cannot start: pod bench-worker-0: container worker (image '
        'horovod:0.28.1): ErrImageNeverPull: Container image "horovod:0.28.1" is not present with pull policy of Never')
    assert next(clock) == 2.0
    details = raised.value.details
    assert details["reason"] == str(raised.value).split(": ", 1)[1]
    assert details["failed_pods"] == [{
        "name": "bench-worker-0", "role": "worker", "phase": "Pending", "node": "node1", "reason": None,
        "message": None, "waiting_containers": [{"name": "worker", "image": "horovod:0.28.1",
                                                 "reason": "ErrImageNeverPull", "message": NEVER_PULL}],
        "events": [{"type": "Warning", "reason": "ErrImageNeverPull", "message": NEVER_PULL, "count": 3,
                    "last_seen": "2025-06-01T10:00:05Z"}]}]
    assert details["launcher_log_error"] == "no launcher pod exists (yet)"
    assert details["events"] == []


def workers_without_gpus(api):
    created(api)
    for index in (0, 1):
        api.add_pod("bench", "worker", "Pending", index, unschedulable=NO_GPU)


def test_an_unschedulable_worker_ends_the_wait_at_once_with_the_schedulers_message():
    api = FakeMPIJobApi(script={2: workers_without_gpus})
    with pytest.raises(JobFailedError) as raised:
        ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True, wait_timeout=1800))
    assert str(raised.value) == (
        "MPIJob ml/bench FAILED after 0.0 s: pod(s) cannot be scheduled: pods bench-worker-0, bench-worker-1: 0/2 "
        "nodes are available: 2 Insufficient nvidia.com/gpu. (set fail_on_unschedulable=false to wait for capacity "
        "instead, e.g. from a cluster autoscaler)")
    assert [(p["name"], p["unschedulable"]) for p in raised.value.details["failed_pods"]] == [
        ("bench-worker-0", NO_GPU), ("bench-worker-1", NO_GPU)]


def test_with_fail_on_unschedulable_off_the_wait_goes_on_until_the_pods_are_placed():
    def placed(api):
        api.pods = []
        running(api)

    api = FakeMPIJobApi(logs={"bench-launcher-x7k2p": LOG}, script={2: workers_without_gpus, 5: placed, 7: succeeded})
    result = ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True, fail_on_unschedulable=False))
    assert (result["phase"], result["elapsed"]) == ("Succeeded", 5.0)


def refused(count):
    return [ApiError("reading MPIJob ml/bench on {0}: connection refused".format(SERVER), server=SERVER)] * count


def test_a_restarting_api_server_is_waited_for_and_success_comes_only_from_the_job():
    def restart(api):
        api.outage.extend(refused(2) + [ApiError("listing the pods of MPIJob ml/bench on {0}: HTTP 503 Service "
                                                 "Unavailable".format(SERVER), status=503, server=SERVER)])

    slept = []
    api = FakeMPIJobApi(logs={"bench-launcher-x7k2p": LOG}, script={2: running, 3: restart, 8: succeeded})
    result = ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True, sleep=slept.append))
    assert slept == [0.5, 1.0, 2.0]
    # Reads 3 and 4 were refused, read 5 met the 503 on the pods, read 6 was the look after the restart
    # (still Running), read 7 the next look, and read 8 saw the job succeed.
    assert (result["phase"], result["elapsed"], api.reads) == ("Succeeded", 3.0, 8)
    assert result["launcher_log_source"] == "pod/bench-launcher-x7k2p"


def test_a_job_that_fails_during_the_outage_fails_the_task_once_the_api_answers():
    def restart_and_fail(api):
        api.outage.extend(refused(2))
        api.set_conditions("ml", "bench", ("Failed", "BackoffLimitExceeded", "launcher failed"))

    slept = []
    api = FakeMPIJobApi(script={2: running, 3: restart_and_fail})
    with pytest.raises(JobFailedError) as raised:
        ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True, sleep=slept.append))
    assert raised.value.details["reason"] == "the MPIJob failed: BackoffLimitExceeded: launcher failed"
    assert slept == [0.5, 1.0]


def test_an_api_server_down_past_the_retries_fails_naming_it_and_keeps_what_was_done():
    slept = []
    api = FakeMPIJobApi(script={2: running, 3: lambda api: api.outage.extend(refused(100))})
    with pytest.raises(ApiError) as raised:
        ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True, api_retries=10, sleep=slept.append))
    assert str(raised.value) == (
        "the API server https://10.0.0.1:6443 stayed unavailable while waiting for MPIJob ml/bench (11 attempt(s) "
        "over 31.5 s); the last error: reading MPIJob ml/bench on https://10.0.0.1:6443: connection refused")
    assert (raised.value.status, raised.value.server) == (None, SERVER)
    assert (raised.value.details["changed"], raised.value.details["method"]) == (True, "created")
    assert "phase" not in raised.value.details
    assert len(slept) == 10


def test_a_403_while_waiting_is_not_tried_again():
    forbidden = ApiError("listing the pods of MPIJob ml/bench on {0}: HTTP 403 Forbidden: pods is forbidden".format(
        SERVER), status=403, server=SERVER)
    slept = []
    api = FakeMPIJobApi(script={2: lambda api: api.outage.append(forbidden)})
    with pytest.raises(ApiError) as raised:
        ensure_present(MPIJOB, api, build_mpijob(BENCH), settings(wait=True, sleep=slept.append))
    assert str(raised.value) == str(forbidden)
    assert (raised.value.status, slept, api.reads) == (403, [], 2)


def test_the_wait_for_a_deletion_also_rides_out_a_restart():
    api = existing()
    api.deletion_reads = 2
    slept = []
    # The first look of the wait (after the read that found the job and the delete) meets the restart.
    api.script = {api.reads + 2: lambda fake: fake.outage.extend(refused(2))}
    result = ensure_absent(MPIJOB, api, "ml", "bench", settings(wait=True, sleep=slept.append))
    assert result["method"] == "deleted"
    assert slept == [0.5, 1.0]
    assert api.get("ml", "bench") is None
