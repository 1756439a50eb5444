# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the training_report module does, in order: validate, read once, judge, summarise, write the
files that changed (or, in check mode, say that they would)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.training.baseline import with_baseline
from ansible_collections.gpuops.cluster.plugins.module_utils.training.chart import chart_available, render_chart
from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError
from ansible_collections.gpuops.cluster.plugins.module_utils.training.options import validate_options
from ansible_collections.gpuops.cluster.plugins.module_utils.training.parser import parse_lines
from ansible_collections.gpuops.cluster.plugins.module_utils.training.report_file import report_json, write_outputs
from ansible_collections.gpuops.cluster.plugins.module_utils.training.source import log_name, open_log
from ansible_collections.gpuops.cluster.plugins.module_utils.training.summary import summary_lines
from ansible_collections.gpuops.cluster.plugins.module_utils.training.verdict import build_report


def judge(options):
    """The report of the log that options name (src or content), read in one pass."""
    name = log_name(options)
    stream = open_log(options)
    try:
        log = parse_lines(stream, name)
    finally:
        stream.close()
    report = build_report(log, options)
    report["summary"] = summary_lines(report, options)
    return report


def _outputs(report, options):
    outputs = []
    if options.get("report_path"):
        outputs.append(("report", options["report_path"], report_json(report).encode("utf-8")))
    if options.get("chart_path"):
        outputs.append(("chart", options["chart_path"], render_chart(report)))
    return outputs


def run_training_report(params, check_mode=False, diff=False, warn=None):
    """Everything the module does. Returns the module result: the report's fields but the iteration
    series (which only the report file holds), its warnings as log_warnings (Ansible reserves
    'warnings'), changed, the paths and, when asked, the diff."""
    options = dict(params)
    validate_options(options)
    if options.get("chart_path") and not chart_available():
        raise TrainingReportError("chart_path needs the matplotlib Python library", library="matplotlib")
    report = judge(with_baseline(options))
    changed, diffs = write_outputs(_outputs(report, options), check_mode)
    result = dict(report)
    del result["iterations"]
    result["log_warnings"] = result.pop("warnings")
    result["changed"] = changed
    for kind in ("report_path", "chart_path"):
        if options.get(kind):
            result[kind] = options[kind]
    if diff and diffs:
        result["diff"] = diffs
    if warn is not None:
        for message in result["log_warnings"]:
            warn(message)
    return result
