# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""An in-memory stand-in for the node API of plugins/module_utils/node_labels/kubernetes_api.py, for unit tests."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import threading
import time

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import ApiError, ConflictError


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch, as the apiserver applies application/merge-patch+json."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


class FakeNodeApi(object):
    """An in-memory apiserver for nodes: merge patches, resourceVersion checks, call accounting."""

    def __init__(self, nodes, patch_delay=0.0, fail=None):
        self.nodes = dict((node["metadata"]["name"], copy.deepcopy(node)) for node in nodes)
        self.patch_delay = patch_delay
        self.fail = fail or {}
        self.calls = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.before_patch = None

    def list_nodes(self):
        with self.lock:
            self.calls.append(("list",))
            return copy.deepcopy(list(self.nodes.values()))

    def get_node(self, name):
        with self.lock:
            self.calls.append(("get", name))
            return copy.deepcopy(self.nodes[name])

    def patch_node(self, name, patch):
        with self.lock:
            self.calls.append(("patch", name, copy.deepcopy(patch)))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.before_patch:
                self.before_patch(self, name)
            time.sleep(self.patch_delay)
            if name in self.fail:
                raise ApiError(self.fail[name], status=403)
            with self.lock:
                node = self.nodes[name]
                wanted_version = (patch.get("metadata") or {}).get("resourceVersion")
                if wanted_version is not None and wanted_version != node["metadata"]["resourceVersion"]:
                    raise ConflictError("conflict")
                updated = merge_patch(node, patch)
                updated["metadata"]["resourceVersion"] = str(int(node["metadata"]["resourceVersion"]) + 1)
                self.nodes[name] = updated
                return copy.deepcopy(updated)
        finally:
            with self.lock:
                self.in_flight -= 1

    def patches(self):
        return [call for call in self.calls if call[0] == "patch"]


def node(name, labels=None, taints=None, version="1"):
    body = {"metadata": {"name": name, "labels": dict(labels or {}), "resourceVersion": version}, "spec": {}}
    if taints is not None:
        body["spec"]["taints"] = taints
    return body
