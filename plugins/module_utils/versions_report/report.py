# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The versions report behind gpuops.cluster.versions_report: what each node and the cluster run, against the pins.

Plain Python, no Ansible. kubernetes_api reads the Nodes and the components' objects; here they become rows
(component, where, observed, pinned, status), one fixed-width table and one JSON-able dict.

A status is one of:
  match     the observed version is the pinned one
  drift     it is another one
  absent    the node or the component's object is not in the cluster
  unknown   the facts cannot give the version (no GPU facts, no toolkit version, an image by digest):
            never guessed
  unpinned  a version is observed but nothing pins it (versions.yml pins no driver, CUDA, toolkit or kubelet)
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import json
import re
import zlib

NODE_COMPONENTS = ("driver", "cuda", "container_toolkit", "kubelet")
CLUSTER_COMPONENTS = ("nvidia_device_plugin", "gpu_operator", "mpi_operator", "training_operator")
COMPONENTS = NODE_COMPONENTS + CLUSTER_COMPONENTS

MATCH = "match"
DRIFT = "drift"
ABSENT = "absent"
UNKNOWN = "unknown"
UNPINNED = "unpinned"
STATUSES = (MATCH, DRIFT, ABSENT, UNKNOWN, UNPINNED)

# An image tag that names a release (v0.17.1, 0.8.2, v25.3.0-ubi9), not a build (v1-d6eb98e) or a channel (latest).
_RELEASE_TAG_RE = re.compile(r"^v?[0-9]+(\.[0-9]+)+([-+][0-9A-Za-z.+-]+)?$")
_GZIP_MAGIC = b"\x1f\x8b"
_EMPTY = "-"
_HEADER = ("COMPONENT", "WHERE", "OBSERVED", "PINNED", "STATUS", "NOTE")


# ---------------------------------------------------------------------------------------------
# Versions


def normalize_version(version):
    """The version as compared: without surrounding blanks and without a leading 'v' before a digit."""
    text = version.strip()
    if text[:1] in ("v", "V") and text[1:2].isdigit():
        return text[1:]
    return text


def versions_match(observed, pinned):
    """Whether observed is the pinned version, normalised.

    A pin with fewer dot-separated parts is a branch: 570 pins every 570.x driver, v1.34 every 1.34 kubelet.
    Anything else is a difference, a build suffix included (0.17.1-ubi9 is not 0.17.1: another image).
    """
    observed_parts = normalize_version(observed).split(".")
    pinned_parts = normalize_version(pinned).split(".")
    return observed_parts[:len(pinned_parts)] == pinned_parts


def judge(observed, pinned, found=True):
    """The status of one row."""
    if not found:
        return ABSENT
    if observed is None:
        return UNKNOWN
    if pinned is None:
        return UNPINNED
    return MATCH if versions_match(observed, pinned) else DRIFT


# ---------------------------------------------------------------------------------------------
# Input checks: each problem names the item, before any row is made


def _type_name(value):
    return type(value).__name__


def _check_version(where, value):
    """value itself when it is a version string or None; ValueError naming where otherwise."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("{0}: a version must be a string, got {1} {2!r}".format(where, _type_name(value), value))
    if not value.strip():
        raise ValueError("{0}: a version must not be empty".format(where))
    return value.strip()


def normalize_nodes(nodes):
    """The nodes as [{"name", "gpu", "toolkit"}], sorted by name.

    Each item is a node name, or a dict with the name, the node's gpuops_gpu fact as "gpu" (or None where it
    was not gathered) and its container toolkit version as "toolkit" (or None).
    """
    if nodes is None:
        return []
    if not isinstance(nodes, list):
        raise ValueError("nodes must be a list of node names or dicts, got {0}".format(_type_name(nodes)))
    seen = {}
    result = []
    for index, item in enumerate(nodes):
        where = "nodes[{0}]".format(index)
        if isinstance(item, str):
            item = {"name": item}
        if not isinstance(item, dict):
            raise ValueError("{0}: must be a node name or a dict with name, gpu and toolkit, got {1} {2!r}"
                             .format(where, _type_name(item), item))
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ValueError("{0}: a node needs a name (a non-empty string), got {1!r}".format(where, name))
        name = name.strip()
        where = "{0} ({1})".format(where, name)
        if name in seen:
            raise ValueError("{0}: node {1} is also nodes[{2}]".format(where, name, seen[name]))
        seen[name] = index
        unknown = sorted(set(item) - set(("name", "gpu", "toolkit")))
        if unknown:
            raise ValueError("{0}: unknown key(s) {1}; expected name, gpu and toolkit".format(where, ", ".join(unknown)))
        gpu = item.get("gpu")
        if gpu is not None and not isinstance(gpu, dict):
            raise ValueError("{0}: gpu must be the node's gpuops_gpu fact (a dict) or null, got {1} {2!r}"
                             .format(where, _type_name(gpu), gpu))
        if gpu is not None:
            gpu = dict(gpu)
            for key in ("driver_version", "cuda_version"):
                gpu[key] = _check_version("{0}: gpu.{1}".format(where, key), gpu.get(key))
        result.append({"name": name, "gpu": gpu,
                       "toolkit": _check_version("{0}: toolkit".format(where), item.get("toolkit"))})
    return sorted(result, key=lambda node: node["name"])


def normalize_pins(pins):
    """The pins as {component: version or None} for every component; ValueError naming a bad one."""
    if pins is None:
        pins = {}
    if not isinstance(pins, dict):
        raise ValueError("pins must be a dict of component: version, got {0}".format(_type_name(pins)))
    unknown = sorted(str(name) for name in pins if name not in COMPONENTS)
    if unknown:
        raise ValueError("pins: unknown component(s) {0}; expected some of: {1}"
                         .format(", ".join(unknown), ", ".join(COMPONENTS)))
    return dict((name, _check_version("pins.{0}".format(name), pins.get(name))) for name in COMPONENTS)


# ---------------------------------------------------------------------------------------------
# What the cluster's objects say


def image_tag(image):
    """The tag of an image reference, or None when it has none (by digest only, or no tag at all)."""
    reference = image.split("@", 1)[0]
    name, _colon, tag = reference.rpartition(":")
    if not name or "/" in tag:  # no colon, or the colon of a registry's port
        return None
    return tag


def kubelet_version(node):
    """The kubelet version the Node object reports, or None."""
    return ((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion") or None


def observation(where, found=True, observed=None, source=None, note=None):
    """What was seen of one cluster component: where it was looked for, whether it is there, its version."""
    return {"where": where, "found": found, "observed": observed, "source": source, "note": note}


def _first_container_image(obj):
    containers = ((((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")) or []
    return containers[0].get("image") if containers else None


def observe_workload(obj, where, version_label=None):
    """The version a DaemonSet or Deployment runs: the tag of its first container's image when the tag is a
    release; else the version label the role wrote on it (the release it applied); else unknown, saying why."""
    if obj is None:
        return observation(where, found=False, note="not found")
    image = _first_container_image(obj)
    tag = image_tag(image) if image else None
    if tag is not None and _RELEASE_TAG_RE.match(tag):
        return observation(where, observed=tag, source="image")
    label = ((obj.get("metadata") or {}).get("labels") or {}).get(version_label) if version_label else None
    if label:
        return observation(where, observed=label, source="label")
    if not image:
        return observation(where, note="no container image")
    if tag is None:
        return observation(where, note="image without a tag: " + image)
    return observation(where, note="image tag is not a release: " + tag)


def helm_release(secret):
    """The release Helm keeps in a Secret (its 'release' entry: JSON, gzipped, base64 under the Secret's base64)."""
    data = (secret.get("data") or {}).get("release")
    if not data:
        raise ValueError("the Secret has no release entry")
    try:
        raw = base64.b64decode(data)
        if raw[:2] != _GZIP_MAGIC:
            raw = base64.b64decode(raw)
        if raw[:2] == _GZIP_MAGIC:
            raw = zlib.decompress(raw, 16 + zlib.MAX_WBITS)
        return json.loads(raw.decode("utf-8"))
    except (TypeError, ValueError, binascii.Error, zlib.error, UnicodeDecodeError) as error:
        raise ValueError("the release entry is not a Helm release: {0}".format(error))


def observe_helm_chart(secrets, where):
    """The chart version of a Helm release, from the Secrets of its deployed revision(s); None when there are none.

    The newest revision wins (the 'version' label Helm sets on each). An unreadable record is unknown, saying why.
    """
    if not secrets:
        return None

    def revision(secret):
        value = ((secret.get("metadata") or {}).get("labels") or {}).get("version", "")
        return int(value) if value.isdigit() else -1

    newest = max(secrets, key=revision)
    try:
        version = ((helm_release(newest).get("chart") or {}).get("metadata") or {}).get("version")
    except ValueError as error:
        return observation(where, note="Helm release record unreadable: {0}".format(error))
    if not isinstance(version, str) or not version:
        return observation(where, note="Helm release record has no chart version")
    return observation(where, observed=version, source="helm chart")


# ---------------------------------------------------------------------------------------------
# The report


def _row(component, where, observed, pinned, status, source=None, note=None):
    return {"component": component, "where": where, "observed": observed, "pinned": pinned, "status": status,
            "source": source, "note": note}


def _gpu_row(component, key, node, pinned):
    gpu = node["gpu"]
    if gpu is None:
        return _row(component, node["name"], None, pinned, UNKNOWN, note="no GPU facts")
    if not gpu.get("present"):
        return _row(component, node["name"], None, pinned, UNKNOWN, note=gpu.get("reason") or "no GPU reported")
    observed = gpu.get(key)
    if observed is None:
        return _row(component, node["name"], None, pinned, UNKNOWN, note="nvidia-smi did not report it")
    return _row(component, node["name"], observed, pinned, judge(observed, pinned), source="gpu facts")


def node_rows(node, node_object, pins):
    """The four rows of one node: driver, CUDA, container toolkit, kubelet."""
    name = node["name"]
    rows = [_gpu_row("driver", "driver_version", node, pins["driver"]),
            _gpu_row("cuda", "cuda_version", node, pins["cuda"])]
    toolkit = node["toolkit"]
    rows.append(_row("container_toolkit", name, toolkit, pins["container_toolkit"], judge(toolkit, pins["container_toolkit"]),
                     source="given" if toolkit else None, note=None if toolkit else "not reported"))
    if node_object is None:
        rows.append(_row("kubelet", name, None, pins["kubelet"], ABSENT, note="no such node in the cluster"))
    else:
        kubelet = _check_version("node {0}: status.nodeInfo.kubeletVersion".format(name), kubelet_version(node_object))
        rows.append(_row("kubelet", name, kubelet, pins["kubelet"], judge(kubelet, pins["kubelet"]),
                         source="node" if kubelet else None, note=None if kubelet else "not reported"))
    return rows


def component_row(component, seen, pinned):
    """The row of one cluster component from its observation()."""
    observed = _check_version("{0} at {1}".format(component, seen["where"]), seen["observed"])
    return _row(component, seen["where"], observed, pinned, judge(observed, pinned, seen["found"]),
                source=seen["source"], note=seen["note"])


def build_report(nodes, node_objects, components, pins):
    """The report: rows, the table's lines, the drifting rows and the counts.

    nodes: normalize_nodes() items; node_objects: the cluster's Node objects (those not in nodes are left out);
    components: {component: observation()} for the cluster components asked about, in any order;
    pins: normalize_pins().
    """
    unknown = sorted(set(components) - set(CLUSTER_COMPONENTS))
    if unknown:
        raise ValueError("components: unknown component(s) {0}; expected some of: {1}"
                         .format(", ".join(unknown), ", ".join(CLUSTER_COMPONENTS)))
    by_name = dict(((item.get("metadata") or {}).get("name"), item) for item in node_objects or [])
    rows = []
    for node in nodes:
        rows.extend(node_rows(node, by_name.get(node["name"]), pins))
    for component in CLUSTER_COMPONENTS:
        if component in components:
            rows.append(component_row(component, components[component], pins[component]))
    counts = dict((status, sum(1 for row in rows if row["status"] == status)) for status in STATUSES)
    return {
        "rows": rows,
        "drift": [row for row in rows if row["status"] == DRIFT],
        "counts": counts,
        "nodes": [node["name"] for node in nodes],
        "table": table_lines(rows, len(nodes), counts),
    }


def table_lines(rows, node_count, counts):
    """One fixed-width line per row under a header, then one line of counts."""
    cells = [_HEADER] + [(row["component"], row["where"], row["observed"] or _EMPTY, row["pinned"] or _EMPTY,
                          row["status"], row["note"] or "") for row in rows]
    widths = [max(len(line[column]) for line in cells) for column in range(len(_HEADER) - 1)]
    lines = ["  ".join([cell.ljust(width) for cell, width in zip(line, widths)] + [line[-1]]).rstrip()
             for line in cells]
    components = len([row for row in rows if row["component"] in CLUSTER_COMPONENTS])
    lines.append("{0} node(s), {1} cluster component(s): {2}".format(
        node_count, components, ", ".join("{0} {1}".format(counts[status], status) for status in STATUSES)))
    return lines


def report_json(report):
    """The report file's text: the rows, the drift and the counts, keys sorted; the same report, the same text."""
    content = dict((key, report[key]) for key in ("rows", "drift", "counts", "nodes"))
    content["format"] = 1
    return json.dumps(content, indent=2, sort_keys=True) + "\n"
