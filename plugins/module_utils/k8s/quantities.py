# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Container resource names and quantities (cpu, memory, hugepages, GPUs), checked before any API call."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.names import (
    QUALIFIED_NAME_RE,
    is_dns1123_subdomain,
)

# k8s.io/apimachinery/pkg/api/resource: a decimal number with an optional binary (Ki..Ei),
# decimal SI (n, u, m, k, M..E) or exponent suffix. Resource quantities may not be negative.
_QUANTITY_RE = re.compile(r"^(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$")
STANDARD_RESOURCES = ("cpu", "memory", "ephemeral-storage")
HUGEPAGES_PREFIX = "hugepages-"


def quantity_text(value):
    """A resource quantity as the API wants it (a string), or None when it is not a valid one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value) if value >= 0 else None
    if isinstance(value, float):
        if value < 0:
            return None
        value = repr(value)
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if _QUANTITY_RE.match(value) else None


def resource_name_problem(name):
    """Why `name` cannot be a container resource name; None when it can."""
    if not isinstance(name, str) or not name:
        return "resource name must be a non-empty string, got {0!r}".format(name)
    if name in STANDARD_RESOURCES:
        return None
    if name.startswith(HUGEPAGES_PREFIX):
        if quantity_text(name[len(HUGEPAGES_PREFIX):]) is None:
            return ("hugepage resource {0!r} must be hugepages-<page size> with a quantity page size, "
                    "e.g. hugepages-2Mi or hugepages-1Gi".format(name))
        return None
    if "/" in name:
        prefix, _sep, local = name.partition("/")
        if is_dns1123_subdomain(prefix) and QUALIFIED_NAME_RE.match(local) and len(local) <= 63:
            return None
        return "extended resource name {0!r} must be <dns subdomain>/<name>, e.g. nvidia.com/gpu".format(name)
    return ("unknown resource name {0!r}: expected cpu, memory, ephemeral-storage, hugepages-<size> "
            "or a domain-qualified extended resource such as nvidia.com/gpu".format(name))


def is_counted(name):
    """Extended resources and hugepages cannot be overcommitted: request must equal limit."""
    return name.startswith(HUGEPAGES_PREFIX) or "/" in name


def is_hugepages(name):
    return name.startswith(HUGEPAGES_PREFIX)
