# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Kubernetes name and label syntax, checked locally so that bad input fails before any API call.

The rules are those of k8s.io/apimachinery/pkg/util/validation (IsQualifiedName, IsValidLabelValue,
IsDNS1123Subdomain, IsDNS1035Label), worded as the API server words them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1035_LABEL_MAX_LENGTH = 63
QUALIFIED_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1035_LABEL_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
# The taint effects core/v1 validation accepts, for taints and tolerations alike.
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def is_dns1123_subdomain(name):
    return len(name) <= DNS1123_SUBDOMAIN_MAX_LENGTH and bool(DNS1123_SUBDOMAIN_RE.match(name))


def is_dns1035_label(name):
    return len(name) <= DNS1035_LABEL_MAX_LENGTH and bool(DNS1035_LABEL_RE.match(name))


def _name_syntax_problems(text, lead, max_length, length_lead=None):
    """The length and character rules shared by the name part of a qualified name and a label value."""
    problems = []
    if len(text) > max_length:
        problems.append("{0}be no more than {1} characters".format(
            length_lead if length_lead is not None else lead, max_length))
    if not QUALIFIED_NAME_RE.match(text):
        problems.append("{0}consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                        "alphanumeric character".format(lead))
    return problems


def qualified_name_problems(name):
    """Problems with a label key, taint key or resource name, as the API server would word them; [] when valid."""
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
        if not DNS1123_SUBDOMAIN_RE.match(prefix):
            problems.append("prefix part must be a lowercase RFC 1123 subdomain (e.g. 'example.com')")
    if not local:
        problems.append("name part must be non-empty")
    else:
        problems.extend(_name_syntax_problems(local, "name part must ", QUALIFIED_NAME_MAX_LENGTH))
    return problems


def label_value_problems(value):
    """Problems with a label value (also used for taint values); [] when valid. Empty is valid."""
    if not isinstance(value, str):
        return ["must be a string, got {0}".format(type(value).__name__)]
    if value == "":
        return []
    return _name_syntax_problems(value, "must be an empty string or ", LABEL_VALUE_MAX_LENGTH, "must ")
