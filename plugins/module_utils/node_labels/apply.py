# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Sending the planned patches, several at a time, re-planning a node that changed in between.

A taint list is replaced as a whole by a merge patch: a patch that changes taints carries the
resourceVersion it was planned from, and a conflicting concurrent write is re-read and re-planned.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from concurrent.futures import ThreadPoolExecutor

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import ConflictError
from ansible_collections.gpuops.cluster.plugins.module_utils.node_labels.errors import ApplyError
from ansible_collections.gpuops.cluster.plugins.module_utils.node_labels.planner import plan, plan_node

CONFLICT_RETRIES = 3


def _apply_one(api, change, spec, state):
    patch = change.patch
    for attempt in range(CONFLICT_RETRIES + 1):
        try:
            api.patch_node(change.name, patch)
            return
        except ConflictError:
            if attempt == CONFLICT_RETRIES:
                raise
            # Someone else wrote the node between our list and our patch: plan it again from now.
            fresh = plan_node(spec, api.get_node(change.name), state)
            if fresh is None:
                return
            patch = fresh.patch


def apply_changes(api, changes, desired, state, parallelism=16):
    """Send each planned patch, ``parallelism`` at a time.

    ``api`` offers patch_node(name, patch) and get_node(name) and must be safe to share between
    threads. Returns the names patched; raises ApplyError naming every node that failed (the
    others stay patched: a merge patch per node is the unit of change).
    """
    if not changes:
        return []
    failures = {}
    applied = []
    workers = max(1, min(int(parallelism), len(changes)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [(change.name, pool.submit(_apply_one, api, change, desired[change.name], state))
                   for change in changes]
        for name, future in futures:
            error = future.exception()
            if error is None:
                applied.append(name)
            else:
                failures[name] = str(error) or type(error).__name__
    if failures:
        raise ApplyError(failures, applied)
    return applied


def reconcile(api, desired, state, check_mode=False, parallelism=16):
    """Validate-plan-apply in one call: returns (changes, applied names)."""
    changes = plan(desired, api.list_nodes(), state)
    if check_mode:
        return changes, []
    return changes, apply_changes(api, changes, desired, state, parallelism)
