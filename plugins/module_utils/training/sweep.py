# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One report of a scaling sweep from the reports training_report wrote for each size: throughput, throughput per
rank and efficiency against the baseline size, the efficiency floors, the table a person reads, and the files."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpuops.cluster.plugins.module_utils.training.chart import chart_available, render_sweep_chart
from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError
from ansible_collections.gpuops.cluster.plugins.module_utils.training.options import path_problems
from ansible_collections.gpuops.cluster.plugins.module_utils.training.report_file import write_outputs
from ansible_collections.gpuops.cluster.plugins.module_utils.training.stats import round_figure
from ansible_collections.gpuops.cluster.plugins.module_utils.training.summary import label, transport_text
from ansible_collections.gpuops.cluster.plugins.module_utils.training.sweep_plan import check_floors, check_ranks

# A failure's first line, cut here, is what the summary shows; the JSON report keeps every word.
SHOWN_FAILURE = 200
_ROW = "%5s %9s %9s %9s %10s %5s  %s"


def _ranks_word(count):
    return "%d rank%s" % (count, "" if count == 1 else "s")


def _read_report(path):
    """(the size's report, None) or (None, why it cannot be read)."""
    if not path:
        return None, "no report: the run left no log to judge"
    try:
        with open(path) as handle:
            return json.load(handle), None
    except (IOError, OSError, ValueError) as error:
        return None, "its report %s cannot be read: %s" % (path, error)


def _row(size):
    report, problem = _read_report(size.get("report_path"))
    reasons = list(size.get("failures") or [])
    if report is not None and not reasons and not report.get("passed"):
        reasons = list(report.get("failures") or [])
    if report is None and (size.get("report_path") or not reasons):
        reasons.append(problem)
    # An unfinished run's figures are of the ranks that got that far: no measure of the size.
    finished = report is not None and report.get("complete")
    total = report["img_per_sec_total"]["mean"] if finished else None
    return {
        "ranks": size["ranks"], "passed": not reasons, "failures": reasons,
        "img_per_sec_total": total,
        "img_per_sec_per_rank": round_figure(total / report["ranks"]) if total is not None and report["ranks"] else None,
        "complete": bool(finished),
        "transport": transport_text(report, {}) if report else None,
        "device": report.get("device") if report else None,
        "report_path": size.get("report_path"), "log": size.get("log"),
    }


def _efficiency(rows, baseline):
    """Each row's ideal (the baseline's figure per rank times its ranks) and efficiency, where both are known."""
    per_rank = dict((row["ranks"], row["img_per_sec_per_rank"]) for row in rows).get(baseline)
    for row in rows:
        row["ideal_img_per_sec"] = round_figure(per_rank * row["ranks"]) if per_rank else None
        known = per_rank and row["img_per_sec_per_rank"] is not None
        row["scaling_efficiency"] = round_figure(row["img_per_sec_per_rank"] / per_rank, 4) if known else None


def _floor_failures(rows, floors, baseline):
    failures = []
    for row in rows:
        floor = row["min_efficiency"] = floors.get(row["ranks"])
        if floor is None or (row["scaling_efficiency"] is not None and row["scaling_efficiency"] >= floor):
            continue
        if row["scaling_efficiency"] is None and not row["passed"]:
            # The size's own failure says why it has no figures.
            continue
        if row["scaling_efficiency"] is None:
            why = "the %s run has no figures" % _ranks_word(baseline if row["ideal_img_per_sec"] is None else row["ranks"])
            failures.append("%s: scaling efficiency unknown (%s), the floor is %g" % (_ranks_word(row["ranks"]), why, floor))
        else:
            failures.append("%s: scaling efficiency %.2f is under the floor %g (%.1f img/sec per rank, %.1f at %s)" % (
                _ranks_word(row["ranks"]), row["scaling_efficiency"], floor, row["img_per_sec_per_rank"],
                row["ideal_img_per_sec"] / row["ranks"], _ranks_word(baseline)))
    return failures


def _shown(reason):
    first = str(reason).strip().splitlines()[0] if str(reason).strip() else "failed"
    return first if len(first) <= SHOWN_FAILURE else first[:SHOWN_FAILURE] + "..."


def _figure(value, text="%.1f"):
    return "-" if value is None else text % value


def _transports(rows):
    """Each transport once, with the sizes that used it: most sweeps show one."""
    sizes = {}
    for row in rows:
        if row["transport"]:
            sizes.setdefault(row["transport"], []).append(str(row["ranks"]))
    if not sizes:
        return "-"
    if len(sizes) == 1:
        return list(sizes)[0]
    return "; ".join("%s rank(s): %s" % (", ".join(ranks), transport) for transport, ranks in sizes.items())


def sweep_lines(sweep, options):
    """The lines a person reads: the verdict, why it failed, the baseline, the table, the files."""
    rows = sweep["sizes"]
    launched_by = options.get("launched_by")
    lines = [label("sweep", "%s (%d sizes%s)" % ("PASSED" if sweep["passed"] else "FAILED", len(rows),
                                                 ", %s" % launched_by if launched_by else ""))]
    if not sweep["passed"]:
        lines.append(label("failures", "; ".join(_shown(reason) for reason in sweep["failures"])))
    lines.append(label("baseline", sweep["baseline_note"]))
    lines.append(label("sizes", _ROW % ("ranks", "img/sec", "per rank", "ideal", "efficiency", "floor", "result")))
    for row in rows:
        lines.append(" " * 13 + (_ROW % (
            row["ranks"], _figure(row["img_per_sec_total"]), _figure(row["img_per_sec_per_rank"]),
            _figure(row["ideal_img_per_sec"]), _figure(row["scaling_efficiency"], "%.2f"),
            _figure(row["min_efficiency"], "%.2f"), "passed" if row["passed"] else "FAILED")))
    lines.append(label("transport", _transports(rows)))
    for name in ("report", "chart"):
        if options.get(name + "_path"):
            lines.append(label(name, options[name + "_path"]))
    return lines


def build_sweep(options):
    """The sweep's report as a JSON-ready dict. options: sizes ([{ranks, report_path, failures, log}]),
    min_efficiency, launched_by, and the report and chart paths. Raises TrainingReportError on bad input."""
    sizes = options.get("sizes") or []
    ranks, problems = check_ranks([size.get("ranks") for size in sizes], "sizes' ranks")
    floors, wrong = check_floors(options.get("min_efficiency"), ranks, "min_efficiency")
    problems += wrong + path_problems(options)
    if problems:
        raise TrainingReportError("; ".join(problems))
    baseline = 1 if 1 in ranks else ranks[0]
    rows = [_row(size) for size in sorted(sizes, key=lambda size: size["ranks"])]
    _efficiency(rows, baseline)
    failures = ["%s: %s" % (_ranks_word(row["ranks"]), "; ".join(str(reason) for reason in row["failures"]))
                for row in rows if row["failures"]]
    failures += _floor_failures(rows, floors, baseline)
    note = _ranks_word(baseline) + ("" if baseline == 1 else ", the smallest size (the sweep has no 1-rank run)")
    baseline_row = [row for row in rows if row["ranks"] == baseline][0]
    if baseline_row["img_per_sec_per_rank"] is not None:
        note += ", %.1f img/sec per rank" % baseline_row["img_per_sec_per_rank"]
    else:
        note += ", no figures: efficiency is not measured"
    sweep = {"passed": not failures, "failures": failures, "baseline_ranks": baseline, "baseline_note": note,
             "min_efficiency": dict((str(size), floor) for size, floor in sorted(floors.items())),
             "launched_by": options.get("launched_by"), "sizes": rows,
             "report_path": options.get("report_path"), "chart_path": options.get("chart_path")}
    sweep["summary"] = sweep_lines(sweep, options)
    return sweep


def run_training_sweep(params, check_mode=False, diff=False):
    """Everything the training_sweep module does: check, build, write the files that changed."""
    options = dict(params)
    if options.get("chart_path") and not chart_available():
        raise TrainingReportError("chart_path needs the matplotlib Python library", library="matplotlib")
    sweep = build_sweep(options)
    outputs = []
    if options.get("report_path"):
        outputs.append(("report", options["report_path"], (json.dumps(sweep, indent=2, sort_keys=True) + "\n").encode("utf-8")))
    if options.get("chart_path"):
        outputs.append(("chart", options["chart_path"], render_sweep_chart(sweep)))
    changed, diffs = write_outputs(outputs, check_mode)
    result = dict(sweep, changed=changed)
    if diff and diffs:
        result["diff"] = diffs
    return result
