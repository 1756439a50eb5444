# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Comparing a desired job with the live one, for any job kind.

A job's spec is mostly immutable once created, so the question is only "is the live job the one
asked for?". The spec this collection applied is recorded on the job as compact JSON: the next run
compares against exactly what it asked for, not against the live spec, to which the API server adds
the CRD's defaults.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import json

APPLIED_SPEC_ANNOTATION = "gpuops.io/applied-spec"
APPLIED_SPEC_HASH_ANNOTATION = "gpuops.io/applied-spec-sha256"


def canonical_json(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def spec_hash(spec):
    return hashlib.sha256(canonical_json(spec).encode("utf-8")).hexdigest()


def with_applied_spec(body):
    """The body to send: the desired one, annotated with the spec it carries."""
    sent = copy.deepcopy(body)
    annotations = sent["metadata"].setdefault("annotations", {})
    annotations[APPLIED_SPEC_ANNOTATION] = canonical_json(body["spec"])
    annotations[APPLIED_SPEC_HASH_ANNOTATION] = spec_hash(body["spec"])
    return sent


def _differences(desired, actual, path, out, subset):
    if isinstance(desired, dict) and isinstance(actual, dict):
        keys = set(desired) if subset else set(desired) | set(actual)
        for key in sorted(keys):
            _differences(desired.get(key), actual.get(key), "{0}.{1}".format(path, key), out, subset)
    elif isinstance(desired, list) and isinstance(actual, list) and len(desired) == len(actual):
        for index, (want, have) in enumerate(zip(desired, actual)):
            _differences(want, have, "{0}[{1}]".format(path, index), out, subset)
    elif desired != actual:
        out.append("{0}: {1} -> {2}".format(path, canonical_json(actual), canonical_json(desired)))


def spec_differences(body, live):
    """What differs between the desired body's spec and the live job's, as 'path: live -> desired'.

    A job this collection created carries the spec it applied, and is compared with that exactly
    (a removed field counts). Any other job is compared on the fields the desired spec sets,
    since the API server fills in the CRD's defaults.
    """
    annotations = (live.get("metadata") or {}).get("annotations") or {}
    recorded = annotations.get(APPLIED_SPEC_ANNOTATION)
    out = []
    if recorded is not None:
        try:
            applied = json.loads(recorded)
        except ValueError:
            applied = None
        if applied is not None:
            _differences(body["spec"], applied, "spec", out, subset=False)
            return out
    _differences(body["spec"], live.get("spec") or {}, "spec", out, subset=True)
    return out
