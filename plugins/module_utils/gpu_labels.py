# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The labels of a GPU node, named and formatted as NVIDIA's GPU feature discovery (GFD) writes them.

Plain Python, no Ansible: the gpu_node_labels role reaches it through the gpuops.cluster.gpu_node_labels
filter. This file owns every label name the role writes. A label whose value the facts do not give (an
old driver without compute_cap, a fact gathered by an older gpu_facts, or no gathering at all) is left
out, never guessed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_facts import product_label_value

PRESENT = "nvidia.com/gpu.present"
PRODUCT = "nvidia.com/gpu.product"
COUNT = "nvidia.com/gpu.count"
OPENSHIFT_ACCELERATOR = "openshift.com/gpu-accelerator"

MEMORY = "nvidia.com/gpu.memory"
FAMILY = "nvidia.com/gpu.family"
COMPUTE_MAJOR = "nvidia.com/gpu.compute.major"
COMPUTE_MINOR = "nvidia.com/gpu.compute.minor"
DRIVER_MAJOR = "nvidia.com/cuda.driver-version.major"
DRIVER_MINOR = "nvidia.com/cuda.driver-version.minor"
DRIVER_REVISION = "nvidia.com/cuda.driver-version.revision"
DRIVER_FULL = "nvidia.com/cuda.driver-version.full"
RUNTIME_MAJOR = "nvidia.com/cuda.runtime-version.major"
RUNTIME_MINOR = "nvidia.com/cuda.runtime-version.minor"
RUNTIME_FULL = "nvidia.com/cuda.runtime-version.full"
MIG_CAPABLE = "nvidia.com/mig.capable"

# What the role wrote before it wrote GFD's labels: also all it writes where GFD runs.
BASE_KEYS = (PRESENT, PRODUCT, COUNT, OPENSHIFT_ACCELERATOR)
# The labels beyond product and count that GFD writes, and the role too where GFD does not run.
GFD_KEYS = (MEMORY, FAMILY, COMPUTE_MAJOR, COMPUTE_MINOR, DRIVER_MAJOR, DRIVER_MINOR, DRIVER_REVISION,
            DRIVER_FULL, RUNTIME_MAJOR, RUNTIME_MINOR, RUNTIME_FULL, MIG_CAPABLE)

# Compute capability major (and, where one major spans two families, the first minor of the second) to
# GFD's family name. A major GFD does not name gets no family label (GFD writes "undefined").
_FAMILIES = {
    1: "tesla", 2: "fermi", 3: "kepler", 5: "maxwell", 6: "pascal",
    7: (5, "volta", "turing"),
    8: (9, "ampere", "ada-lovelace"),
    9: "hopper",
    # Blackwell has two majors: 10 (data centre) and 12.
    10: "blackwell", 12: "blackwell",
}

_DRIVER_VERSION_RE = re.compile(r"^([0-9]+)\.([0-9]+)(?:\.([0-9]+))?$")
_CUDA_VERSION_RE = re.compile(r"^([0-9]+)\.([0-9]+)(?:\.[0-9]+)?$")
_COMPUTE_CAPABILITY_RE = re.compile(r"^([0-9]+)\.([0-9]+)$")
_COUNT_RE = re.compile(r"^[0-9]+$")


class GpuLabelsError(ValueError):
    """Input the labels cannot be computed from; the message names the value and what was expected."""


def gpu_family(major, minor):
    """GFD's family for a compute capability, or None where GFD names none."""
    family = _FAMILIES.get(major)
    if isinstance(family, tuple):
        first_minor_of_second, first, second = family
        return first if minor < first_minor_of_second else second
    return family


def _count(value, where):
    if isinstance(value, str) and _COUNT_RE.match(value):
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise GpuLabelsError("{0} must be a count >= 0, got {1!r}".format(where, value))
    return value


def _text(value, where):
    if not isinstance(value, str):
        raise GpuLabelsError("{0} must be a string, got {1!r}".format(where, value))
    return value


def _version(value, pattern, where, expected):
    match = pattern.match(_text(value, where))
    if not match:
        raise GpuLabelsError("{0} must be {1}, got {2!r}".format(where, expected, value))
    return match.groups()


def gfd_labels(gathered):
    """GFD's labels beyond product and count, from a gpuops_gpu fact: only those its facts give."""
    if not gathered.get("present"):
        return {}
    labels = {}
    if gathered.get("memory_mib") is not None:
        labels[MEMORY] = str(_count(gathered["memory_mib"], "gpuops_gpu.memory_mib"))
    if gathered.get("compute_capability") is not None:
        major, minor = (int(part) for part in _version(
            gathered["compute_capability"], _COMPUTE_CAPABILITY_RE, "gpuops_gpu.compute_capability", "major.minor"))
        labels[COMPUTE_MAJOR] = str(major)
        labels[COMPUTE_MINOR] = str(minor)
        family = gpu_family(major, minor)
        if family:
            labels[FAMILY] = family
    if gathered.get("driver_version") is not None:
        major, minor, revision = _version(gathered["driver_version"], _DRIVER_VERSION_RE,
                                          "gpuops_gpu.driver_version", "major.minor[.revision]")
        labels.update({DRIVER_MAJOR: major, DRIVER_MINOR: minor, DRIVER_FULL: gathered["driver_version"]})
        # GFD writes an empty revision for a two-part version; an empty label selects nothing useful.
        if revision is not None:
            labels[DRIVER_REVISION] = revision
    if gathered.get("cuda_version") is not None:
        major, minor = (int(part) for part in _version(
            gathered["cuda_version"], _CUDA_VERSION_RE, "gpuops_gpu.cuda_version", "major.minor"))
        labels.update({RUNTIME_MAJOR: str(major), RUNTIME_MINOR: str(minor),
                       RUNTIME_FULL: "{0}.{1}".format(major, minor)})
    if gathered.get("mig_capable") is not None:
        if not isinstance(gathered["mig_capable"], bool):
            raise GpuLabelsError("gpuops_gpu.mig_capable must be true or false, got {0!r}".format(
                gathered["mig_capable"]))
        labels[MIG_CAPABLE] = "true" if gathered["mig_capable"] else "false"
    return labels


def gpu_node_labels(gathered=None, product=None, count=None, product_enabled=True, count_enabled=True,
                    gfd_managed=False, openshift=False, extra=None):
    """The labels one GPU node should carry, or {} when it has no GPU.

    ``gathered``: the host's gpuops_gpu fact ({} or None when not gathered). ``product`` and ``count``:
    inventory values, which win over the gathered ones. ``gfd_managed``: GFD labels the node, so only
    the labels of BASE_KEYS are written. ``extra``: more labels, which win for the same key.
    """
    gathered = {} if gathered is None else gathered
    if not isinstance(gathered, dict):
        raise GpuLabelsError("gpuops_gpu must be the dict gpuops.cluster.gpu_facts returns, got {0!r}".format(gathered))
    extra = {} if extra is None else extra
    if not isinstance(extra, dict):
        raise GpuLabelsError("the extra labels must be a dict, got {0!r}".format(extra))
    if count is None:
        count = _count(gathered.get("count", 0), "gpuops_gpu.count")
    else:
        count = _count(count, "the GPU count")
    if count == 0:
        return {}

    labels = {PRESENT: "true"}
    if product is None:
        product = _text(gathered.get("product_label", ""), "gpuops_gpu.product_label")
    product = product_label_value(_text(product, "the GPU product"))
    if product_enabled and product:
        labels[PRODUCT] = product
    if count_enabled:
        labels[COUNT] = str(count)
    if not gfd_managed:
        labels.update(gfd_labels(gathered))
    if openshift:
        labels[OPENSHIFT_ACCELERATOR] = "true"
    labels.update(extra)
    return labels


def gpu_node_label_keys(gfd_managed=False, extra=None):
    """Every key gpu_node_labels may write, for state=absent to remove (each with an empty value)."""
    keys = BASE_KEYS if gfd_managed else BASE_KEYS + GFD_KEYS
    labels = dict((key, "") for key in keys)
    labels.update(dict((key, "") for key in (extra or {})))
    return labels
