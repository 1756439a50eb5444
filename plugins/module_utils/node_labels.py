# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Bulk planning and application of Kubernetes node labels and taints.

Plain Python, no Ansible: the module in plugins/modules/node_labels.py is a thin adapter.

The flow is validate (local, no API call) -> one list of all nodes -> plan (pure) -> apply the
planned merge patches concurrently. Validation follows the apiserver's own syntax rules so a bad
key fails here, before anything is sent, instead of halfway through a thousand patches.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re
from concurrent.futures import ThreadPoolExecutor

# Syntax rules of k8s.io/apimachinery/pkg/util/validation (IsQualifiedName, IsValidLabelValue,
# IsDNS1123Subdomain) and the taint effects accepted by core/v1 validation.
QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
_QUALIFIED_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

# A taint list is replaced as a whole by a merge patch: a patch that changes taints carries the
# resourceVersion it was planned from, and a conflicting concurrent write is re-read and re-planned.
CONFLICT_RETRIES = 3


class NodeLabelsError(Exception):
    """Base of the errors this planner reports; the message is meant for a person."""


class InvalidSpecError(NodeLabelsError):
    def __init__(self, problems):
        self.problems = list(problems)
        super(InvalidSpecError, self).__init__(
            "invalid node label/taint specification ({0} problem(s)): {1}".format(
                len(self.problems), "; ".join(self.problems)))


class UnknownNodesError(NodeLabelsError):
    def __init__(self, names):
        self.names = sorted(names)
        super(UnknownNodesError, self).__init__(
            "{0} node(s) not found in the cluster, nothing was changed: {1}".format(
                len(self.names), ", ".join(self.names)))


class ApplyError(NodeLabelsError):
    def __init__(self, failures, applied):
        self.failures = dict(failures)
        self.applied = sorted(applied)
        details = "; ".join("{0}: {1}".format(name, self.failures[name]) for name in sorted(self.failures))
        super(ApplyError, self).__init__(
            "patching failed on {0} node(s) ({1} other node(s) were patched): {2}".format(
                len(self.failures), len(self.applied), details))


class ConflictError(Exception):
    """Raised by a node API when the apiserver answers 409 to a patch carrying a resourceVersion."""


# ---------------------------------------------------------------------------------------------
# Syntax validation


def qualified_name_problems(name):
    """Problems with a label key or taint key, as the apiserver would word them; [] when valid."""
    if not isinstance(name, str):
        return ["must be a string, got {0}".format(type(name).__name__)]
    parts = name.split("/")
    if len(parts) == 1:
        prefix, local = "", parts[0]
    elif len(parts) == 2:
        prefix, local = parts
        if not prefix:
            return ["prefix part must be non-empty"]
    else:
        return ["a qualified name must be a name part with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"]
    problems = []
    if prefix:
        if len(prefix) > DNS1123_SUBDOMAIN_MAX_LENGTH:
            problems.append("prefix part must be no more than {0} characters".format(DNS1123_SUBDOMAIN_MAX_LENGTH))
        if not _DNS1123_SUBDOMAIN_RE.match(prefix):
            problems.append("prefix part must be a lowercase RFC 1123 subdomain (e.g. 'example.com')")
    if not local:
        problems.append("name part must be non-empty")
    else:
        if len(local) > QUALIFIED_NAME_MAX_LENGTH:
            problems.append("name part must be no more than {0} characters".format(QUALIFIED_NAME_MAX_LENGTH))
        if not _QUALIFIED_NAME_RE.match(local):
            problems.append("name part must consist of alphanumeric characters, '-', '_' or '.', and must "
                            "start and end with an alphanumeric character")
    return problems


def label_value_problems(value):
    """Problems with a label value (also used for taint values); [] when valid. Empty is valid."""
    if not isinstance(value, str):
        return ["must be a string, got {0}".format(type(value).__name__)]
    if value == "":
        return []
    problems = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        problems.append("must be no more than {0} characters".format(LABEL_VALUE_MAX_LENGTH))
    if not _QUALIFIED_NAME_RE.match(value):
        problems.append("must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                        "and must start and end with an alphanumeric character")
    return problems


def label_value_text(value):
    """Label values are strings in the API; YAML hands over ints and booleans (count: 8, present: true)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return value


# ---------------------------------------------------------------------------------------------
# Desired state


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
    value = label_value_text(taint.get("value"))
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
        value = label_value_text(raw_value)
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


# ---------------------------------------------------------------------------------------------
# Planning


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


# ---------------------------------------------------------------------------------------------
# Applying


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


# ---------------------------------------------------------------------------------------------
# The Kubernetes API, through the official client


class KubernetesNodeApi(object):
    """Node list/get/patch over a kubernetes.client.ApiClient, as plain dicts.

    The typed CoreV1Api models are skipped on purpose: deserializing a thousand V1Node objects
    costs more than the list call itself, and a strategic-merge patch is all CoreV1Api.patch_node
    can send for a dict body, while this planner relies on JSON merge patch semantics.
    """

    def __init__(self, api_client, request_timeout=None):
        self._client = api_client
        self._timeout = request_timeout

    def _call(self, what, method, path, path_params=None, body=None, content_type=None):
        from kubernetes.client.exceptions import ApiException

        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        try:
            return self._client.call_api(
                path, method,
                path_params=path_params or {},
                query_params=[],
                header_params=headers,
                body=body,
                response_type="object",
                auth_settings=["BearerToken"],
                _return_http_data_only=True,
                _request_timeout=self._timeout,
            )
        except ApiException as error:
            if error.status == 409:
                raise ConflictError("conflict: {0}: the node changed meanwhile".format(what))
            raise NodeLabelsError("{0}: HTTP {1} {2}: {3}".format(
                what, error.status, error.reason, _api_message(error)))

    def list_nodes(self):
        return self._call("listing nodes", "GET", "/api/v1/nodes").get("items") or []

    def get_node(self, name):
        return self._call("reading node " + name, "GET", "/api/v1/nodes/{name}", path_params={"name": name})

    def patch_node(self, name, patch):
        return self._call("patching node " + name, "PATCH", "/api/v1/nodes/{name}", path_params={"name": name},
                          body=patch, content_type="application/merge-patch+json")


def _api_message(error):
    """The apiserver's Status message, not the whole HTTP dump that str(ApiException) gives."""
    import json

    try:
        return json.loads(error.body).get("message") or error.body
    except (TypeError, ValueError, AttributeError):
        return error.body


def reconcile(api, desired, state, check_mode=False, parallelism=16):
    """Validate-plan-apply in one call: returns (changes, applied names)."""
    changes = plan(desired, api.list_nodes(), state)
    if check_mode:
        return changes, []
    return changes, apply_changes(api, changes, desired, state, parallelism)
