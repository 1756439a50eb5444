# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared pod checks of a failure predicate: containers that cannot start, pods no node can take."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.failure import (
    CANNOT_START_REASONS,
    concerned,
    containers_cannot_start,
    unschedulable_pods,
    wait_failure,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.mpijob import MPIJOB
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.mpijob import mpijob_failure as job_failure
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.status import Observation, pod_summary
from gpuops_testlib.mpijob_objects import (
    CREATED,
    RUNNING,
    condition,
    job,
    pod,
)

NEVER_PULL = 'Container image "gpuops/missing:1" is not present with pull policy of Never'
NO_GPU = "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: 2 No " \
         "preemption victims found for incoming pod."


def waiting(name, role, reason, message=None, image="gpuops/missing:1", in_status=True):
    """A Pending pod whose one container waits with `reason`; the image in its status, or only in its spec."""
    found = pod(name, role, "Pending")
    found["spec"]["containers"] = [{"name": role, "image": image}]
    state = {"reason": reason}
    if message:
        state["message"] = message
    found["status"]["containerStatuses"] = [dict({"name": role, "state": {"waiting": state}},
                                                 **({"image": image} if in_status else {}))]
    return found


def unscheduled(name, role, message=NO_GPU, reason="Unschedulable"):
    found = pod(name, role, "Pending")
    del found["spec"]["nodeName"]
    found["status"]["conditions"] = [condition("PodScheduled", "False", reason, message)]
    return found


def running_job(*pods):
    return Observation(job(CREATED, RUNNING), pods=pods)


def test_a_worker_whose_image_is_never_pulled_fails_the_job_naming_pod_container_image_reason_and_message():
    observation = running_job(pod("bench-launcher-a", "launcher", "Running"),
                              waiting("bench-worker-0", "worker", "ErrImageNeverPull", NEVER_PULL))
    assert job_failure(observation) == (
        'container(s) cannot start: pod bench-worker-0: container worker (image gpuops/missing:1): ErrImageNeverPull: '
        'Container image "gpuops/missing:1" is not present with pull policy of Never')


def test_pods_with_the_same_cause_are_named_together_and_the_launcher_counts_too():
    back_off = 'Back-off pulling image "gpuops/missing:1"'
    observation = Observation(job(CREATED), pods=[
        waiting("bench-launcher-a", "launcher", "ImagePullBackOff", back_off),
        waiting("bench-worker-0", "worker", "ImagePullBackOff", back_off),
        waiting("bench-worker-1", "worker", "ImagePullBackOff", back_off)])
    assert job_failure(observation) == (
        'container(s) cannot start: pod bench-launcher-a: container launcher (image gpuops/missing:1): '
        'ImagePullBackOff: Back-off pulling image "gpuops/missing:1"; pods bench-worker-0, bench-worker-1: '
        'container worker (image gpuops/missing:1): ImagePullBackOff: Back-off pulling image "gpuops/missing:1"')


def test_beyond_five_pods_the_others_are_counted():
    pods = [waiting("bench-worker-{0}".format(i), "worker", "ErrImagePull") for i in range(8)]
    assert containers_cannot_start(running_job(*pods)) == (
        "container(s) cannot start: pods bench-worker-0, bench-worker-1, bench-worker-2, bench-worker-3, "
        "bench-worker-4 and 3 more: container worker (image gpuops/missing:1): ErrImagePull")


def test_a_container_the_runtime_cannot_create_takes_its_image_from_the_spec():
    observation = running_job(waiting("bench-worker-0", "worker", "CreateContainerConfigError",
                                      'secret "nccl-config" not found', image="horovod:0.28.1", in_status=False))
    assert containers_cannot_start(observation) == (
        'container(s) cannot start: pod bench-worker-0: container worker (image horovod:0.28.1): '
        'CreateContainerConfigError: secret "nccl-config" not found')


@pytest.mark.parametrize("reason", CANNOT_START_REASONS)
def test_every_reason_that_will_not_pass_is_a_failure(reason):
    assert job_failure(running_job(waiting("bench-worker-0", "worker", reason, "why"))) == (
        "container(s) cannot start: pod bench-worker-0: container worker (image gpuops/missing:1): {0}: why".format(
            reason))


@pytest.mark.parametrize("reason", ["ContainerCreating", "PodInitializing"])
def test_a_container_on_its_way_is_no_failure(reason):
    assert job_failure(running_job(waiting("bench-worker-0", "worker", reason))) is None


def test_pods_of_a_job_that_succeeded_or_on_their_way_out_are_no_failure():
    stuck = waiting("bench-worker-0", "worker", "ErrImagePull", "pull failed")
    assert job_failure(Observation(job(CREATED, condition("Succeeded")), pods=[stuck])) is None
    stuck["metadata"]["deletionTimestamp"] = "2025-06-01T10:09:00Z"
    assert job_failure(running_job(stuck)) is None


def test_an_unschedulable_pod_fails_the_wait_with_the_schedulers_message():
    observation = running_job(unscheduled("bench-worker-0", "worker"), unscheduled("bench-worker-1", "worker"))
    failure = wait_failure(MPIJOB)
    assert failure(observation) == (
        "pod(s) cannot be scheduled: pods bench-worker-0, bench-worker-1: 0/2 nodes are available: 2 Insufficient "
        "nvidia.com/gpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod. "
        "(set fail_on_unschedulable=false to wait for capacity instead, e.g. from a cluster autoscaler)")
    assert unschedulable_pods(observation) == failure(observation)


def test_a_site_with_an_autoscaler_waits_for_unschedulable_pods_but_not_for_a_failed_job():
    failure = wait_failure(MPIJOB, fail_on_unschedulable=False)
    assert failure(running_job(unscheduled("bench-worker-0", "worker"))) is None
    assert failure(Observation(job(CREATED, condition("Failed", reason="Evicted", message="evicted")))) == (
        "the MPIJob failed: Evicted: evicted")


def test_a_pod_held_back_for_another_reason_is_not_unschedulable():
    gated = unscheduled("bench-worker-0", "worker", message=None, reason="SchedulingGated")
    assert wait_failure(MPIJOB)(running_job(gated)) is None


def test_the_summary_carries_the_waiting_containers_and_the_schedulers_message():
    assert pod_summary(waiting("bench-worker-0", "worker", "ErrImageNeverPull", NEVER_PULL))["waiting_containers"] == [
        {"name": "worker", "image": "gpuops/missing:1", "reason": "ErrImageNeverPull", "message": NEVER_PULL}]
    assert pod_summary(unscheduled("bench-worker-1", "worker"))["unschedulable"] == NO_GPU


def test_the_pods_a_failure_report_names():
    assert concerned(pod("bench-worker-0", "worker", "Failed", 1, "Error"))
    assert concerned(waiting("bench-worker-1", "worker", "InvalidImageName", "bad"))
    assert concerned(unscheduled("bench-worker-2", "worker"))
    assert not concerned(pod("bench-worker-3", "worker", "Running"))
    assert not concerned(waiting("bench-worker-4", "worker", "ContainerCreating"))
