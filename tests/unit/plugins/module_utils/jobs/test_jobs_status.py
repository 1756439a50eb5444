# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The job status reader and the MPIJob failure predicate."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.mpijob import mpijob_failure as job_failure
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.status import WAIT_PREDICATES, Observation, job_status, pod_summary
from gpuops_testlib.mpijob_objects import CREATED, RUNNING, condition, job, pod


def test_succeeded_job():
    status = job_status(job(CREATED, condition("Running", "False", "MPIJobSucceeded"),
                            condition("Succeeded", reason="MPIJobSucceeded", message="MPIJob ml/bench successfully completed."),
                            replicaStatuses={"Launcher": {"succeeded": 1}, "Worker": {}},
                            startTime="2025-06-01T10:00:00Z", completionTime="2025-06-01T10:09:00Z"))
    assert status["phase"] == "Succeeded"
    assert status["reason"] == "MPIJobSucceeded"
    assert status["message"] == "MPIJob ml/bench successfully completed."
    assert status["replica_statuses"] == {"Launcher": {"succeeded": 1}, "Worker": {}}
    assert status["completion_time"] == "2025-06-01T10:09:00Z"
    assert [c["type"] for c in status["conditions"]] == ["Created", "Running", "Succeeded"]


def test_failed_job_carries_the_launchers_reason():
    status = job_status(job(CREATED, RUNNING, condition("Failed", reason="BackoffLimitExceeded/Error",
                                                        message="Job has reached the specified backoff limit: exit 1")))
    assert status["phase"] == "Failed"
    assert status["reason"] == "BackoffLimitExceeded/Error"
    assert status["message"] == "Job has reached the specified backoff limit: exit 1"


def test_running_job():
    status = job_status(job(CREATED, RUNNING, replicaStatuses={"Launcher": {"active": 1}, "Worker": {"active": 2}}))
    assert status["phase"] == "Running"
    assert status["replica_statuses"]["Worker"] == {"active": 2}


def test_created_only_and_no_status_at_all():
    assert job_status(job(CREATED))["phase"] == "Created"
    assert job_status(job())["phase"] == "Pending"
    assert job_status(job())["conditions"] == []


def test_failure_predicate_on_a_failed_condition():
    observation = Observation(job(CREATED, condition("Failed", reason="Evicted", message="1/2 workers are evicted")))
    assert job_failure(observation) == "the MPIJob failed: Evicted: 1/2 workers are evicted"


def test_failure_predicate_drops_the_empty_pod_reason_the_operator_appends():
    """What the MPI Operator v0.8 writes when the launcher pod failed without a reason of its own."""
    observation = Observation(job(CREATED, condition("Failed", reason="BackoffLimitExceeded/",
                                                     message="Job has reached the specified backoff limit: ")))
    assert job_failure(observation) == "the MPIJob failed: BackoffLimitExceeded: Job has reached the specified backoff limit"


def test_failure_predicate_on_a_failed_worker_while_the_job_still_says_running():
    observation = Observation(job(CREATED, RUNNING), pods=[
        pod("bench-launcher-abcde", "launcher", "Running"),
        pod("bench-worker-0", "worker", "Running"),
        pod("bench-worker-1", "worker", "Failed", exit_code=137, reason="OOMKilled")])
    assert job_failure(observation) == (
        "worker pod(s) failed: bench-worker-1: container worker exit code 137 (OOMKilled); the MPI Operator does "
        "not replace a failed worker, so mpirun has lost a rank and the job cannot succeed")


def test_a_failed_launcher_pod_alone_is_not_a_failure_since_the_job_retries_it():
    observation = Observation(job(CREATED, RUNNING), pods=[pod("bench-launcher-a", "launcher", "Failed", 1, "Error"),
                                                           pod("bench-worker-0", "worker", "Running")])
    assert job_failure(observation) is None


def test_operator_rejection_is_a_failure_only_before_any_condition():
    rejected = {"type": "Warning", "reason": "ValidationError",
                "message": "Found validation errors: spec.sshAuthMountPath: Required value"}
    assert job_failure(Observation(job(), warnings=[rejected])) == (
        "the MPI Operator rejected the MPIJob: Found validation errors: spec.sshAuthMountPath: Required value")
    assert job_failure(Observation(job(CREATED), warnings=[rejected])) is None


def test_a_deleted_job_ends_the_wait():
    assert job_failure(Observation(None)) == "the MPIJob was deleted while waiting for it"


def test_running_and_succeeded_predicates():
    assert not WAIT_PREDICATES["Succeeded"](Observation(job(CREATED, RUNNING)))
    assert WAIT_PREDICATES["Running"](Observation(job(CREATED, RUNNING)))
    assert WAIT_PREDICATES["Running"](Observation(job(CREATED, condition("Succeeded"))))
    assert not WAIT_PREDICATES["Running"](Observation(job(CREATED)))


def test_pod_summary():
    assert pod_summary(pod("bench-worker-1", "worker", "Failed", 1, "Error")) == {
        "name": "bench-worker-1", "role": "worker", "phase": "Failed", "node": "dgx-01", "reason": None,
        "message": None, "terminated_containers": [{"name": "worker", "exit_code": 1, "reason": "Error",
                                                    "message": None, "finished_at": "2025-06-01T10:05:00Z"}]}
