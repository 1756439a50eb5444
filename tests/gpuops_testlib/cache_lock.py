# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One lock per shared thing the test workers make or start, in the folder of the build scripts' locks
(tools/build_lock.sh): two workers that reach it at once from a cold cache take turns instead of racing (two
unpacks into one folder, two control planes taking the same free ports)."""

from __future__ import annotations

import contextlib
import fcntl
import os

from gpuops_testlib.ansible_run import CACHE_ROOT


@contextlib.contextmanager
def held(name):
    """Holds $GPUOPS_CACHE/locks/<name>.lock while the block runs; waits while another process holds it."""
    folder = os.path.join(CACHE_ROOT, "locks")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name + ".lock"), "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
