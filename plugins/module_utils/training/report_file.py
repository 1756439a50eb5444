# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report and chart files: JSON text, and each file written when its content or mode changes (common.files)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json

from ansible_collections.gpuops.cluster.plugins.module_utils.common.files import file_state, write_file

# Figures are converted this many at a time: a long run's series never exists as Python floats at once.
_CHUNK = 65536
_PLACEHOLDER = "\x00iterations\x00"


def _numbers_json(values, digits=None):
    parts = []
    for start in range(0, len(values), _CHUNK):
        chunk = values[start:start + _CHUNK]
        items = [round(value, digits) for value in chunk] if digits is not None else chunk.tolist()
        parts.append(json.dumps(items)[1:-1])
    return "[" + ", ".join(part for part in parts if part) + "]"


def _series_json(series):
    """Every rank's series on one line each: the series is the bulk of a long run's report, and one
    line per figure would make it ten times longer."""
    if not series:
        return "[]"
    lines = ['{"img_per_sec": %s, "iteration": %s, "rank": %s}' % (
        _numbers_json(item["img_per_sec"], 3), _numbers_json(item["iteration"]), json.dumps(item["rank"]))
        for item in series]
    return "[\n    " + ",\n    ".join(lines) + "\n  ]"


def report_json(report):
    """The report as JSON text, keys sorted, two-space indent; the iteration series as typed arrays
    (see ranks.per_rank_entries) or lists."""
    plain = dict(report)
    plain["iterations"] = _PLACEHOLDER
    head, _placeholder, tail = json.dumps(plain, indent=2, sort_keys=True).partition(json.dumps(_PLACEHOLDER))
    return head + _series_json(report.get("iterations") or []) + tail + "\n"


def binary_summary(content):
    """What a diff shows of a PNG: its size and digest."""
    if content is None:
        return ""
    return "PNG image, %d bytes, sha256 %s\n" % (len(content), hashlib.sha256(content).hexdigest())


def write_outputs(outputs, check_mode):
    """(changed, diffs) after writing every output whose content or mode differs (unless in check mode); outputs
    are (kind, path, bytes), a JSON report's diff shown as text, any other file's as its size and digest."""
    changed = False
    diffs = []
    for kind, path, content in outputs:
        file_changed, previous = file_state(path, content)
        if file_changed and not check_mode:
            write_file(path, content)
        changed = changed or file_changed
        if kind == "report":
            before = previous.decode("utf-8", "replace") if previous is not None else ""
            after = content.decode("utf-8")
        else:
            before, after = binary_summary(previous), binary_summary(content)
        diffs.append({"before_header": path, "after_header": path, "before": before, "after": after})
    return changed, diffs
