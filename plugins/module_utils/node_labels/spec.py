# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The desired labels and taints of each node, from the module's input, validated before any API call.

Validation follows the API server's own syntax rules, so that a bad key fails here, before anything is
sent, instead of halfway through a thousand patches.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.common.values import api_text
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.names import (
    TAINT_EFFECTS,
    label_value_problems,
    qualified_name_problems,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.node_labels.errors import InvalidSpecError


class NodeSpec(object):
    """What one node should (state=present) or should not (state=absent) carry."""

    __slots__ = ("name", "labels", "taints")

    def __init__(self, name, labels=None, taints=None):
        self.name = name
        self.labels = dict(labels or {})
        self.taints = list(taints or [])

    def __eq__(self, other):
        return (isinstance(other, NodeSpec) and self.name == other.name and self.labels == other.labels
                and self.taints == other.taints)

    def __repr__(self):
        return "NodeSpec({0!r}, labels={1!r}, taints={2!r})".format(self.name, self.labels, self.taints)


def _normalize_taint(taint, where, state, problems):
    if not isinstance(taint, dict):
        problems.append("{0}: a taint must be a dict with key, value and effect, got {1!r}".format(where, taint))
        return None
    unknown = sorted(set(taint) - {"key", "value", "effect"})
    if unknown:
        problems.append("{0}: unknown taint field(s) {1}; expected key, value, effect".format(
            where, ", ".join(unknown)))
    key = taint.get("key")
    value = api_text(taint.get("value"))
    effect = taint.get("effect")
    for problem in qualified_name_problems(key):
        problems.append("{0}: taint key {1!r} {2}".format(where, key, problem))
    if value is None:
        value = ""
    for problem in label_value_problems(value):
        problems.append("{0}: taint value {1!r} (key {2!r}) {3}".format(where, value, key, problem))
    if effect is None and state == "absent":
        # Removing by key alone removes that key under every effect, as `kubectl taint nodes n key-` does.
        pass
    elif effect not in TAINT_EFFECTS:
        problems.append("{0}: taint effect {1!r} (key {2!r}) must be one of {3}".format(
            where, effect, key, ", ".join(TAINT_EFFECTS)))
    return {"key": key, "value": value, "effect": effect}


def _normalize_labels(labels, where, state, problems):
    if labels is None:
        return {}
    if not isinstance(labels, dict):
        problems.append("{0}: labels must be a dict of key: value, got {1!r}".format(where, labels))
        return {}
    result = {}
    for key, raw_value in labels.items():
        for problem in qualified_name_problems(key):
            problems.append("{0}: label key {1!r} {2}".format(where, key, problem))
        value = api_text(raw_value)
        if state == "present":
            if value is None:
                problems.append("{0}: label {1!r} has no value; use state=absent to remove a label".format(
                    where, key))
            else:
                for problem in label_value_problems(value):
                    problems.append("{0}: label value {1!r} (key {2!r}) {3}".format(where, value, key, problem))
        result[key] = value
    return result


def normalize_nodes(nodes, labels=None, taints=None, state="present"):
    """Turn the module's inputs into {node name: NodeSpec}, validating every key, value and effect.

    ``nodes`` is a list whose items are node names or dicts {name, labels, taints}, or a dict
    {node name: {labels, taints}} (a value of None means "only the common labels/taints").
    ``labels`` and ``taints`` apply to every node; a node's own entries override them by key
    (labels) or by key and effect (taints). Raises InvalidSpecError listing every problem found.
    """
    problems = []
    common_labels = _normalize_labels(labels, "labels", state, problems)
    common_taints = []
    if taints is not None and not isinstance(taints, list):
        problems.append("taints: must be a list of dicts, got {0!r}".format(taints))
    for index, taint in enumerate(taints or []):
        normalized = _normalize_taint(taint, "taints[{0}]".format(index), state, problems)
        if normalized is None:
            continue
        if any((t["key"], t["effect"]) == (normalized["key"], normalized["effect"]) for t in common_taints):
            problems.append("taints: taint {0}:{1} is given more than once".format(
                normalized["key"], normalized["effect"]))
        common_taints.append(normalized)

    entries = []
    if isinstance(nodes, dict):
        for name, spec in nodes.items():
            if spec is None:
                spec = {}
            if not isinstance(spec, dict):
                problems.append("nodes[{0!r}]: must be a dict with labels and/or taints, got {1!r}".format(name, spec))
                continue
            entry = dict(spec)
            entry["name"] = name
            entries.append(("nodes[{0!r}]".format(name), entry, True))
    elif isinstance(nodes, list):
        for index, item in enumerate(nodes):
            where = "nodes[{0}]".format(index)
            if isinstance(item, str):
                entries.append((where, {"name": item}, False))
            elif isinstance(item, dict):
                entries.append((where, item, False))
            else:
                problems.append("{0}: must be a node name or a dict with name, labels and taints, got {1!r}".format(
                    where, item))
    else:
        problems.append("nodes: must be a list or a dict, got {0}".format(type(nodes).__name__))

    desired = {}
    for where, entry, keyed_by_name in entries:
        name = entry.get("name")
        unknown = sorted(set(entry) - {"name", "labels", "taints"})
        if unknown:
            problems.append("{0}: unknown field(s) {1}; expected name, labels, taints".format(
                where, ", ".join(str(field) for field in unknown)))
        if not isinstance(name, str) or not name:
            problems.append("{0}: name must be a non-empty string, got {1!r}".format(where, name))
            continue
        if not keyed_by_name:
            where = "{0} ({1})".format(where, name)
        node_labels = dict(common_labels)
        node_labels.update(_normalize_labels(entry.get("labels"), where, state, problems))
        node_taints = list(common_taints)
        own_taints = entry.get("taints")
        if own_taints is not None and not isinstance(own_taints, list):
            problems.append("{0}: taints must be a list of dicts, got {1!r}".format(where, own_taints))
            own_taints = []
        own_identities = set()
        for index, taint in enumerate(own_taints or []):
            normalized = _normalize_taint(taint, "{0} taints[{1}]".format(where, index), state, problems)
            if normalized is None:
                continue
            identity = (normalized["key"], normalized["effect"])
            if identity in own_identities:
                problems.append("{0}: taint {1}:{2} is given more than once".format(where, *identity))
            own_identities.add(identity)
            node_taints = [t for t in node_taints if (t["key"], t["effect"]) != identity]
            node_taints.append(normalized)
        if name in desired:
            problems.append("{0}: node {1!r} is listed more than once".format(where, name))
            continue
        desired[name] = NodeSpec(name, node_labels, node_taints)

    if problems:
        raise InvalidSpecError(problems)
    return desired
