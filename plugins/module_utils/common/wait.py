# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Waiting with a deadline, on a success predicate and a failure predicate: a Kubernetes job, a Slurm job.

Plain Python, no Ansible and no client of any kind: the caller supplies `observe()` (one look at the
thing waited on, returning whatever its predicates understand) and the predicates themselves.

A generic wait (kubernetes.core's `wait_condition`) knows only the condition it waits for, so a job
that has already failed keeps it waiting until the timeout. Here every observation is first given to
the failure predicate, and a failure ends the wait at once, with its reason.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time
from collections import namedtuple

SUCCEEDED = "succeeded"
FAILED = "failed"
TIMED_OUT = "timed_out"


def clock(timeout, interval, monotonic=time.monotonic, sleep=time.sleep):
    """Yield the seconds elapsed: once at once, then after each `interval` until `timeout` has passed.

    The last look happens at (or just after) the timeout, so a state reached in the final
    interval is still seen. `monotonic` and `sleep` are parameters so that tests run on a fake clock.
    """
    started = monotonic()
    yield 0.0
    while True:
        elapsed = monotonic() - started
        if elapsed >= timeout:
            return
        sleep(min(interval, timeout - elapsed))
        yield monotonic() - started


class WaitResult(namedtuple("WaitResult", ("outcome", "observation", "elapsed", "reason", "looks"),
                            defaults=(None, 0))):
    """How a wait ended: `outcome` (SUCCEEDED, FAILED, TIMED_OUT), the last observation, the
    seconds it took, for FAILED the failure predicate's reason, and how many looks it took."""

    __slots__ = ()

    @property
    def succeeded(self):
        return self.outcome == SUCCEEDED

    def __repr__(self):
        return "WaitResult({0!r}, elapsed={1:.2f}, reason={2!r})".format(self.outcome, self.elapsed, self.reason)


def wait_for(observe, success, failure=None, timeout=300, interval=1.0, ticks=None):
    """Look with `observe()` until `success(observation)` is true or `failure(observation)` gives a reason.

    `failure` returns None (or anything false) while the object may still succeed, and a text
    explaining why it cannot otherwise; it is asked first, so an observation that is both ends
    the wait as a failure. `ticks` is an iterable of elapsed times (default: `clock(timeout,
    interval)`), which tests replace.
    """
    if ticks is None:
        ticks = clock(timeout, interval)
    observation = None
    elapsed = 0.0
    looks = 0
    for elapsed in ticks:
        observation = observe()
        looks += 1
        reason = failure(observation) if failure is not None else None
        if reason:
            return WaitResult(FAILED, observation, elapsed, reason=reason, looks=looks)
        if success(observation):
            return WaitResult(SUCCEEDED, observation, elapsed, looks=looks)
    return WaitResult(TIMED_OUT, observation, elapsed, looks=looks)
