# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Planning, a pure function: the merge patch that brings each live node to its desired labels and taints."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.node_labels.errors import UnknownNodesError


class NodeChange(object):
    """One node that needs a patch: the merge patch and the before/after views for the diff."""

    __slots__ = ("name", "patch", "before", "after")

    def __init__(self, name, patch, before, after):
        self.name = name
        self.patch = patch
        self.before = before
        self.after = after

    def diff(self):
        header = "node/{0}".format(self.name)
        return {"before_header": header, "after_header": header, "before": self.before, "after": self.after}


def _taint_identity(taint):
    return taint.get("key"), taint.get("effect")


def _taint_value(taint):
    return taint.get("value") or ""


def _taint_for_api(taint):
    entry = {"key": taint["key"], "effect": taint["effect"]}
    if taint.get("value"):
        entry["value"] = taint["value"]
    return entry


def plan_node(spec, node, state):
    """The NodeChange that brings ``node`` (an API Node as a dict) to ``spec``, or None if none is needed."""
    metadata = node.get("metadata") or {}
    current_labels = dict(metadata.get("labels") or {})
    current_taints = list((node.get("spec") or {}).get("taints") or [])

    label_patch = {}
    new_labels = dict(current_labels)
    for key, value in spec.labels.items():
        if state == "present":
            if current_labels.get(key) != value:
                label_patch[key] = value
                new_labels[key] = value
        elif key in current_labels:
            label_patch[key] = None
            del new_labels[key]

    new_taints = [copy.deepcopy(t) for t in current_taints]
    if state == "present":
        for wanted in spec.taints:
            for existing in new_taints:
                if _taint_identity(existing) == (wanted["key"], wanted["effect"]):
                    if _taint_value(existing) != wanted["value"]:
                        existing.pop("timeAdded", None)
                        existing.pop("value", None)
                        if wanted["value"]:
                            existing["value"] = wanted["value"]
                    break
            else:
                new_taints.append(_taint_for_api(wanted))
    else:
        for unwanted in spec.taints:
            new_taints = [t for t in new_taints
                          if not (t.get("key") == unwanted["key"]
                                  and (unwanted["effect"] is None or t.get("effect") == unwanted["effect"]))]
    taints_changed = new_taints != current_taints

    if not label_patch and not taints_changed:
        return None

    patch = {}
    if label_patch:
        patch["metadata"] = {"labels": label_patch}
    if taints_changed:
        patch.setdefault("metadata", {})["resourceVersion"] = metadata.get("resourceVersion")
        # An empty list and an absent field mean the same to the apiserver; null removes the field.
        patch["spec"] = {"taints": new_taints or None}

    before = {"labels": current_labels}
    after = {"labels": new_labels}
    if spec.taints or current_taints:
        before["taints"] = current_taints
        after["taints"] = new_taints
    return NodeChange(spec.name, patch, before, after)


def plan(desired, live_nodes, state):
    """Plan every node at once.

    ``desired``: {name: NodeSpec}; ``live_nodes``: the API's Node objects as dicts (one list call).
    Returns the NodeChanges sorted by node name. Raises UnknownNodesError naming every node that is
    not in the cluster before anything is planned, let alone patched.
    """
    by_name = {}
    for node in live_nodes:
        name = (node.get("metadata") or {}).get("name")
        if name:
            by_name[name] = node
    unknown = [name for name in desired if name not in by_name]
    if unknown:
        raise UnknownNodesError(unknown)
    changes = []
    for name in sorted(desired):
        change = plan_node(desired[name], by_name[name], state)
        if change is not None:
            changes.append(change)
    return changes
