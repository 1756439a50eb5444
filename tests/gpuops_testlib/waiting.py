# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Polling for a condition of the lab, failing the test with what was awaited."""

from __future__ import annotations

import time

import pytest


def wait_for(predicate, timeout, what, interval=0.5):
    """Poll predicate() until it returns something truthy; fail with `what` (a callable or text) on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail("timed out after %s s waiting for %s" % (timeout, what() if callable(what) else what),
                        pytrace=False)
        time.sleep(interval)
