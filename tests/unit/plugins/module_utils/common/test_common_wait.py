# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fail-fast waiter (common.wait) on a fake clock, waiting on MPIJob observations."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.common import wait
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.mpijob import mpijob_failure as job_failure
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.status import WAIT_PREDICATES, Observation
from gpuops_testlib.mpijob_objects import (
    CREATED,
    RUNNING,
    condition,
    job,
)


class FakeTime(object):
    def __init__(self):
        self.now = 100.0
        self.slept = []

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_clock_looks_at_once_then_every_interval_and_last_at_the_timeout():
    fake = FakeTime()
    assert list(wait.clock(5, 2, fake.monotonic, fake.sleep)) == [0.0, 2.0, 4.0, 5.0]
    assert fake.slept == [2, 2, 1.0]


def test_waiter_returns_at_the_first_failed_look_without_waiting_for_the_timeout():
    fake = FakeTime()
    looks = iter([Observation(job(CREATED)), Observation(job(CREATED, RUNNING)),
                  Observation(job(CREATED, RUNNING, condition("Failed", reason="Error", message="exit 1")))])
    remaining = []

    def observe():
        observation = next(looks)
        remaining.append(observation)
        return observation

    result = wait.wait_for(observe, WAIT_PREDICATES["Succeeded"], job_failure,
                           ticks=wait.clock(3600, 1.0, fake.monotonic, fake.sleep))
    assert result.outcome == wait.FAILED
    assert result.reason == "the MPIJob failed: Error: exit 1"
    assert result.looks == 3
    assert result.elapsed == 2.0
    # Two intervals slept, not an hour.
    assert sum(fake.slept) == 2.0


def test_waiter_success_and_timeout():
    succeeded = Observation(job(CREATED, condition("Succeeded")))
    result = wait.wait_for(lambda: succeeded, WAIT_PREDICATES["Succeeded"], job_failure, ticks=[0.0, 1.0])
    assert (result.outcome, result.looks, result.elapsed) == (wait.SUCCEEDED, 1, 0.0)
    running = Observation(job(CREATED, RUNNING))
    result = wait.wait_for(lambda: running, WAIT_PREDICATES["Succeeded"], job_failure, ticks=[0.0, 1.0, 2.0])
    assert (result.outcome, result.looks, result.elapsed) == (wait.TIMED_OUT, 3, 2.0)
    assert result.observation is running


def test_failure_is_asked_before_success():
    both = Observation(job(CREATED, condition("Failed", reason="X"), condition("Succeeded")))
    result = wait.wait_for(lambda: both, lambda observation: True, job_failure, ticks=[0.0])
    assert result.outcome == wait.FAILED
