# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Turn a parsed training log into a verdict: figures, warnings, unmet thresholds, a JSON report
and a PNG chart. Plain Python; the training_report module is a thin adapter over it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import io
import json
import math
import os
import tempfile

from ansible_collections.gpuops.cluster.plugins.module_utils.training_log import (
    EXPECTED_FORMATS,
    parse,
)

# Horovod prints mean +- 1.96 standard deviations of its per-iteration figures; the same convention
# is used for every spread computed here so that the two can be compared.
SPREAD_Z = 1.96
# A printed total that differs from the sum over ranks by more than this is called out.
TOTAL_MISMATCH_TOLERANCE = 0.05
DEFAULT_SLOW_RANK_TOLERANCE = 0.1
KNOWN_TRANSPORTS = ("NET/IB", "NET/Socket", "P2P", "SHM")
REPORT_MODE = 0o644


class TrainingReportError(Exception):
    """Bad input or a log that cannot be judged; the message says what was expected. library names
    a missing Python library, for the module to report with Ansible's usual wording."""

    def __init__(self, message, library=None):
        super(TrainingReportError, self).__init__(message)
        self.library = library


def _round(value, digits=3):
    if value is None:
        return None
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return round(float(value), digits)


def _mean(values):
    return sum(values) / len(values)


def _spread(values):
    """SPREAD_Z population standard deviations, as Horovod computes its '+-' figure."""
    if len(values) < 2:
        return 0.0
    average = _mean(values)
    return SPREAD_Z * math.sqrt(sum((value - average) ** 2 for value in values) / len(values))


def _median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def normalize_transport(name):
    """Map what a user writes (ib, net/ib, Socket, p2p) to the names used in the report."""
    text = str(name).strip()
    if not text:
        return None
    upper = text.upper()
    for known in KNOWN_TRANSPORTS:
        if upper == known.upper():
            return known
    if upper in ("IB", "SOCKET"):
        return "NET/IB" if upper == "IB" else "NET/Socket"
    if upper.startswith("NET/") and len(text) > 4:
        return "NET/" + text[4:]
    return None


def validate_options(options):
    """Check thresholds and paths before anything is read or written; raise with every problem."""
    problems = []

    def positive(name):
        value = options.get(name)
        if value is not None and not value > 0:
            problems.append("%s must be a positive number (omit it to skip the check), got %r" % (name, value))

    expect_ranks = options.get("expect_ranks")
    if expect_ranks is not None and expect_ranks < 1:
        problems.append("expect_ranks must be a whole number of ranks, 1 or more, got %r" % (expect_ranks,))
    positive("min_img_per_sec_per_device")
    positive("baseline_img_per_sec")
    efficiency = options.get("min_scaling_efficiency")
    if efficiency is not None:
        if not efficiency > 0:
            problems.append("min_scaling_efficiency must be a fraction above 0 (1.0 is linear scaling), got %r"
                            % (efficiency,))
        elif efficiency > 1.5:
            problems.append("min_scaling_efficiency must be a fraction such as 0.9 (1.0 is linear scaling); "
                            "%r looks like a percentage" % (efficiency,))
        if options.get("baseline_img_per_sec") is None:
            problems.append("min_scaling_efficiency needs baseline_img_per_sec, the single-device img/sec "
                            "that scaling is measured against")
    tolerance = options.get("slow_rank_tolerance")
    if tolerance is not None and not 0 < tolerance < 1:
        problems.append("slow_rank_tolerance must be a fraction between 0 and 1 (0.1 flags a rank 10%% slower "
                        "than the median), got %r" % (tolerance,))
    for name in options.get("require_transport") or []:
        if normalize_transport(name) is None:
            problems.append("require_transport: %r is not a transport; expected one of %s or NET/<plugin name>"
                            % (name, ", ".join(KNOWN_TRANSPORTS)))
    for key in ("report_path", "chart_path"):
        path = options.get(key)
        if path is None:
            continue
        if not str(path).strip():
            problems.append("%s must be a file path, got an empty string" % key)
            continue
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            problems.append("%s: directory %s does not exist" % (key, directory))
        elif os.path.isdir(path):
            problems.append("%s: %s is a directory; give a file path" % (key, path))
    if problems:
        raise TrainingReportError("; ".join(problems))


def _rank_hosts(log):
    hosts = {}
    world = _world_comm(log)
    if world:
        hosts.update((rank, host) for rank, host in world["ranks"].items() if host)
    hosts.update(log.rank_hosts)
    return hosts


def _world_comm(log):
    if not log.nccl_comms:
        return None
    return max(log.nccl_comms.values(), key=lambda comm: (comm["nranks"], len(comm["ranks"])))


def _per_rank(log, warnings):
    """Per-rank throughput as [{rank, img_per_sec, spread, iterations, source}], and the iteration
    series [{rank, iteration, img_per_sec}] for the chart."""
    entries = {}
    series = []
    if log.rank_iterations or log.rank_summaries:
        for rank in sorted(set(log.rank_iterations) | set(log.rank_summaries)):
            values = [value for _iteration, value in log.rank_iterations.get(rank, [])]
            series.extend({"rank": rank, "iteration": iteration, "img_per_sec": _round(value)}
                          for iteration, value in log.rank_iterations.get(rank, []))
            if rank in log.rank_summaries:
                mean, spread = log.rank_summaries[rank]
            else:
                mean, spread = _mean(values), _spread(values)
            entries[rank] = {"img_per_sec": mean, "spread": spread, "iterations": len(values),
                             "source": "per-rank lines"}
        return entries, series, "per_rank"
    if log.rank_compute:
        warnings.append("ranks printed only 'Compute img/sec' lines: without their wall-clock 'Img/sec' lines "
                        "the run's total comes from rank 0")
    if log.tf_steps:
        tagged = [rank for rank in log.tf_steps if rank is not None]
        if tagged:
            steps_by_rank = dict((rank, log.tf_steps[rank]) for rank in tagged)
        elif len(log.tf_untagged_totals) <= 1:
            # One process printing without tags: a single-worker run.
            steps_by_rank = {0: log.tf_steps[None]}
        else:
            warnings.append("tf_cnn_benchmarks output of %d workers is interleaved without rank tags: "
                            "per-rank figures cannot be told apart (run mpirun with --tag-output)"
                            % len(log.tf_untagged_totals))
            steps_by_rank = {}
        for rank in sorted(steps_by_rank):
            steps = steps_by_rank[rank]
            # tf_cnn_benchmarks prints a running mean: the last step line is the rank's figure.
            _step, mean, uncertainty = steps[-1]
            series.extend({"rank": rank, "iteration": step, "img_per_sec": _round(value)}
                          for step, value, _u in steps)
            entries[rank] = {"img_per_sec": mean, "spread": uncertainty, "iterations": len(steps),
                             "source": "tf_cnn_benchmarks step lines"}
        return entries, series, "tf_cnn_benchmarks"
    values = [value for _iteration, value in log.iterations]
    series.extend({"rank": 0, "iteration": iteration, "img_per_sec": _round(value)}
                  for iteration, value in log.iterations)
    if log.reported_per_device:
        mean, spread = log.reported_per_device
    elif values:
        mean, spread = _mean(values), _spread(values)
    else:
        return entries, series, None
    # Horovod's synthetic benchmarks print on rank 0 only.
    entries[0] = {"img_per_sec": mean, "spread": spread, "iterations": len(values),
                  "source": "Horovod rank 0 lines"}
    return entries, series, "rank0"


def _count_ranks(log, entries, source):
    if log.declared_size:
        return log.declared_size, "Horovod 'Number of %ss'" % (log.device or "device")
    if log.reported_total:
        return log.reported_total[0], "Horovod 'Total img/sec on N'"
    world = _world_comm(log)
    if world:
        return world["nranks"], "NCCL nranks"
    if log.tf_devices and (log.tf_variables or "").lower() == "horovod":
        return len(log.tf_devices), "tf_cnn_benchmarks Devices"
    if len(log.tf_untagged_totals) > 1:
        return len(log.tf_untagged_totals), "workers that printed 'total images/sec'"
    if source in ("per_rank", "tf_cnn_benchmarks") and entries:
        return max(entries) + 1, "ranks that printed figures"
    if log.tagged_ranks:
        return max(log.tagged_ranks) + 1, "mpirun output tags"
    return 1, "a single process (no rank information in the log)"


def _devices_per_rank(log, ranks):
    if log.tf_devices and (log.tf_variables or "").lower() != "horovod":
        return max(1, len(log.tf_devices) // max(ranks, 1))
    return 1


def _completeness(log, entries, source, ranks):
    """What is missing from the end of the log, as a list of reasons (empty when complete)."""
    missing = []
    horovod_started = log.benchmark_started or log.warmup_started or log.iterations or log.declared_size
    if horovod_started and not log.reported_total:
        missing.append("no 'Total img/sec on N %s(s)' line" % (log.device or "GPU"))
    if source == "per_rank":
        without_summary = sorted(rank for rank in log.rank_iterations if rank not in log.rank_summaries)
        if without_summary:
            missing.append("no per-rank 'Img/sec per %s' line for rank(s) %s"
                           % (log.device or "GPU", _ranks_text(without_summary)))
        absent = sorted(set(range(ranks)) - set(entries))
        if absent:
            missing.append("no figures at all from rank(s) %s of %d" % (_ranks_text(absent), ranks))
    if log.tf_steps:
        tagged = [rank for rank in log.tf_steps if rank is not None]
        if tagged:
            without_total = sorted(rank for rank in tagged if rank not in log.tf_totals)
            if without_total:
                missing.append("no 'total images/sec' line for rank(s) %s" % _ranks_text(without_total))
        elif not log.tf_untagged_totals:
            missing.append("no 'total images/sec' line")
    return missing


def _ranks_text(ranks):
    ranks = list(ranks)
    if len(ranks) > 12:
        return ", ".join(str(rank) for rank in ranks[:12]) + " and %d more" % (len(ranks) - 12)
    return ", ".join(str(rank) for rank in ranks)


def _pooled(entries):
    """Mean over ranks and a pooled spread: within-rank and between-rank variation together."""
    means = [entry["img_per_sec"] for entry in entries]
    spreads = [entry["spread"] for entry in entries]
    within = _mean([spread ** 2 for spread in spreads])
    between = _spread(means) ** 2
    return _mean(means), math.sqrt(within + between)


def build_report(log, options):
    """The verdict as a JSON-ready dict. Raises TrainingReportError when the log has no figures."""
    if log.line_count == 0:
        raise TrainingReportError("the training log is empty; expected %s" % EXPECTED_FORMATS)
    warnings = []
    failures = []
    entries, series, source = _per_rank(log, warnings)
    if not entries and not log.reported_total and not log.tf_untagged_totals:
        found = "NCCL lines only" if log.nccl_seen else "%d lines, none of them a throughput figure" % log.line_count
        raise TrainingReportError(
            "no throughput figures in the training log (%s); expected %s" % (found, EXPECTED_FORMATS)
        )

    ranks, ranks_source = _count_ranks(log, entries, source)
    devices_per_rank = _devices_per_rank(log, ranks)
    devices = ranks * devices_per_rank
    hosts = _rank_hosts(log)
    world = _world_comm(log)

    per_rank = []
    for rank in sorted(entries):
        entry = entries[rank]
        per_rank.append({
            "rank": rank,
            "host": hosts.get(rank),
            "img_per_sec": _round(entry["img_per_sec"]),
            "img_per_sec_per_device": _round(entry["img_per_sec"] / devices_per_rank),
            "spread": _round(entry["spread"]),
            "iterations": entry["iterations"],
            "source": entry["source"],
        })
        if rank in log.rank_compute:
            per_rank[-1]["compute_img_per_sec"] = _round(log.rank_compute[rank][0])
            per_rank[-1]["compute_spread"] = _round(log.rank_compute[rank][1])

    # Per device: pooled over every rank that printed figures.
    per_device = None
    if entries:
        mean, spread = _pooled(list(entries.values()))
        per_device = {"mean": _round(mean / devices_per_rank), "spread": _round(spread / devices_per_rank),
                      "source": "rank 0 only" if source == "rank0" else "%d rank(s)" % len(entries)}

    reported_total = None
    if log.reported_total:
        reported_total = log.reported_total[1]
    elif 0 in log.tf_totals:
        reported_total = log.tf_totals[0]
    elif log.tf_totals:
        reported_total = log.tf_totals[min(log.tf_totals)]
    elif log.tf_untagged_totals:
        reported_total = log.tf_untagged_totals[0]

    if per_device is None:
        printed_spread = log.reported_total[2] / devices if log.reported_total else None
        per_device = {"mean": _round(reported_total / devices), "spread": _round(printed_spread),
                      "source": "printed total / %d devices" % devices}

    every_rank_known = source in ("per_rank", "tf_cnn_benchmarks") and set(entries) >= set(range(ranks))
    if every_rank_known:
        total = {"mean": _round(sum(entry["img_per_sec"] for entry in entries.values())),
                 "spread": _round(sum(entry["spread"] for entry in entries.values())),
                 "source": "sum over %d ranks" % len(entries)}
    elif log.reported_total:
        total = {"mean": _round(log.reported_total[1]), "spread": _round(log.reported_total[2]),
                 "source": "Horovod 'Total img/sec' (rank 0 x %d)" % log.reported_total[0]}
    elif reported_total is not None:
        total = {"mean": _round(reported_total), "spread": None, "source": "tf_cnn_benchmarks 'total images/sec'"}
    else:
        total = {"mean": _round(per_device["mean"] * devices), "spread": _round(per_device["spread"] * devices),
                 "source": "mean per device x %d devices" % devices}
    total["reported"] = _round(reported_total)

    # Slow ranks: what Horovod's own figures cannot show. In synchronous training every rank waits
    # for the slowest at each step, so wall-clock figures come out alike; each rank's compute
    # figure, where printed, is what names the one holding the others back.
    tolerance = options.get("slow_rank_tolerance") or DEFAULT_SLOW_RANK_TOLERANCE
    slow = []
    compared = [item for item in per_rank if "compute_img_per_sec" in item]
    figure = "compute_img_per_sec"
    if len(compared) < 2:
        compared, figure = per_rank, "img_per_sec"
    if len(compared) >= 2:
        median = _median([item[figure] for item in compared])
        for item in compared:
            relative = item[figure] / median if median else None
            item["relative_to_median"] = _round(relative, 3)
            if relative is not None and relative < 1 - tolerance:
                slow.append(item)
        for item in slow:
            warnings.append("rank %d%s is slow: %.1f %s, %.0f%% of the median rank (%.1f)%s" % (
                item["rank"], " on %s" % item["host"] if item["host"] else "", item[figure],
                "img/sec of compute" if figure == "compute_img_per_sec" else "img/sec",
                100 * item["relative_to_median"], median,
                "; in synchronous training every rank waits for it" if figure == "compute_img_per_sec" else ""))
        if slow and log.reported_total:
            slow_ranks = _ranks_text(item["rank"] for item in slow)
            warnings.append("Horovod's 'Total img/sec' (%.1f) is rank 0's figure times %d: it does not show "
                            "the slow rank(s) %s" % (log.reported_total[1], log.reported_total[0], slow_ranks))
    if reported_total is not None and every_rank_known and total["mean"]:
        difference = reported_total / total["mean"] - 1
        if abs(difference) > TOTAL_MISMATCH_TOLERANCE:
            warnings.append(
                "the printed total (%.1f img/sec) differs by %+.0f%% from the sum over ranks (%.1f): "
                "it is rank 0's figure times the world size" % (reported_total, 100 * difference, total["mean"]))

    missing = _completeness(log, entries, source, ranks)
    if missing:
        warnings.append("the log ends before the final result: %s" % "; ".join(missing))
        failures.append("the run did not finish: %s" % "; ".join(missing))
    if log.partial_lines:
        warnings.append("the log ends in the middle of a line from rank(s) %s"
                        % _ranks_text(sorted(set(item["rank"] for item in log.partial_lines))))
    if source == "rank0" and ranks > 1:
        warnings.append("only rank 0 printed throughput: a slow rank would not show; print per-rank lines (%s)"
                        % "Rank <R>: Img/sec per <GPU|CPU>: <X> +-<Y>")

    nccl = None
    if log.nccl_seen:
        initialised = len(world["ranks"]) if world else None
        nccl = {
            "version": log.nccl_version,
            "cuda": log.nccl_cuda,
            "networks": list(log.nccl_networks),
            "nranks": world["nranks"] if world else None,
            "ranks_initialized": initialised,
            "communicators": len(log.nccl_comms),
            "interfaces": list(log.nccl_interfaces),
            "bootstrap_interfaces": list(log.nccl_bootstrap),
            "hosts": list(log.nccl_hosts),
            "transport_details": dict(log.transport_details),
            "warnings": list(log.nccl_warnings),
        }
        if world and len(world["ranks"]) < world["nranks"]:
            warnings.append("NCCL completed initialisation on %d of %d ranks" % (len(world["ranks"]), world["nranks"]))
        if world and world["nranks"] != devices:
            warnings.append("NCCL's communicator has %d ranks but the benchmark reports %d %s(s)"
                            % (world["nranks"], devices, log.device or "device"))
        if log.nccl_warnings:
            warnings.append("NCCL printed %d warning(s), the first: %s" % (len(log.nccl_warnings), log.nccl_warnings[0]))
    if log.tracebacks:
        warnings.append("the log holds %d Python traceback(s)" % log.tracebacks)
    for error in log.launcher_errors:
        warnings.append("launcher: %s" % error)

    baseline = options.get("baseline_img_per_sec")
    efficiency = None
    if baseline and total["mean"] is not None:
        efficiency = _round(total["mean"] / (devices * baseline), 4)

    report = {
        "sources": list(log.sources),
        "framework": log.framework,
        "model": log.model,
        "batch_size": log.batch_size,
        "device": log.device,
        "ranks": ranks,
        "ranks_source": ranks_source,
        "devices_per_rank": devices_per_rank,
        "img_per_sec_per_device": per_device,
        "img_per_sec_total": total,
        "per_rank": per_rank,
        "iterations": series,
        "transports": dict(log.transports),
        "nccl": nccl,
        "baseline_img_per_sec": baseline,
        "scaling_efficiency": efficiency,
        "complete": not missing,
        "warnings": warnings,
    }
    failures.extend(check_thresholds(report, options))
    report["failures"] = failures
    report["passed"] = not failures
    report["thresholds"] = dict((key, options.get(key)) for key in (
        "expect_ranks", "min_img_per_sec_per_device", "min_scaling_efficiency", "require_transport",
        "slow_rank_tolerance"))
    report["thresholds"]["slow_rank_tolerance"] = tolerance
    return report


def check_thresholds(report, options):
    """Every unmet threshold, each as one sentence."""
    failures = []
    device = report["device"] or "device"
    expect_ranks = options.get("expect_ranks")
    if expect_ranks is not None and report["ranks"] != expect_ranks:
        failures.append("expected %d ranks, the log shows %d (from %s)"
                        % (expect_ranks, report["ranks"], report["ranks_source"]))
    minimum = options.get("min_img_per_sec_per_device")
    if minimum is not None:
        mean = report["img_per_sec_per_device"]["mean"]
        below = [item for item in report["per_rank"] if item["img_per_sec_per_device"] < minimum]
        if mean is None:
            failures.append("img/sec per %s is unknown, the minimum is %g" % (device, minimum))
        elif mean < minimum or below:
            if below and len(below) == len(report["per_rank"]) and len(below) > 1:
                detail = "; all %d ranks are below it" % len(below)
            elif below:
                shown = ", ".join("rank %d (%.1f)" % (item["rank"], item["img_per_sec_per_device"])
                                  for item in below[:8])
                detail = "; below it: %s%s" % (shown, " and %d more" % (len(below) - 8) if len(below) > 8 else "")
            else:
                detail = ""
            failures.append("img/sec per %s is under the minimum %g: mean %.1f%s" % (device, minimum, mean, detail))
    minimum = options.get("min_scaling_efficiency")
    if minimum is not None:
        efficiency = report["scaling_efficiency"]
        if efficiency is None or efficiency < minimum:
            failures.append("scaling efficiency %s is under the minimum %g (total %.1f img/sec over %d %s(s), "
                            "baseline %g per %s)" % (
                                "unknown" if efficiency is None else "%.3f" % efficiency, minimum,
                                report["img_per_sec_total"]["mean"], report["ranks"] * report["devices_per_rank"],
                                device, options.get("baseline_img_per_sec"), device))
    for wanted in options.get("require_transport") or []:
        name = normalize_transport(wanted)
        if report["transports"].get(name):
            continue
        if not report["transports"]:
            failures.append("transport %s is required but the log has no NCCL connection lines "
                            "(run with NCCL_DEBUG=INFO)" % name)
        else:
            seen = ", ".join("%s x%d" % item for item in sorted(report["transports"].items()))
            failures.append("transport %s is required but NCCL connected over %s" % (name, seen))
    return failures


def report_from_text(text, options):
    validate_options(options)
    return build_report(parse(text), options)


def report_json(report):
    return json.dumps(report, indent=2, sort_keys=True) + "\n"


def chart_available():
    try:
        import matplotlib  # noqa: F401 pylint: disable=unused-import
    except ImportError:
        return False
    return True


def render_chart(report):
    """PNG bytes: throughput per iteration per rank and, with a baseline, ideal against measured
    total. Deterministic for a given report, so that an unchanged run leaves the file alone."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    device = report["device"] or "device"
    scaling = report["scaling_efficiency"] is not None
    figure = Figure(figsize=(11 if scaling else 7, 4.5), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 2 if scaling else 1, 1)
    by_rank = {}
    for point in report["iterations"]:
        by_rank.setdefault(point["rank"], []).append((point["iteration"], point["img_per_sec"]))
    if by_rank:
        for rank in sorted(by_rank):
            points = sorted(by_rank[rank])
            axes.plot([x for x, _y in points], [y for _x, y in points], marker="o", markersize=3,
                      linewidth=1, label="rank %d" % rank)
        axes.set_xlabel("step" if "tf_cnn_benchmarks" in report["sources"] else "iteration")
        if len(by_rank) <= 16:
            axes.legend(fontsize="x-small", ncol=4 if len(by_rank) > 8 else 2, loc="lower right")
    else:
        ranks = [item["rank"] for item in report["per_rank"]]
        axes.bar([str(rank) for rank in ranks], [item["img_per_sec"] for item in report["per_rank"]],
                 yerr=[item["spread"] or 0 for item in report["per_rank"]])
        axes.set_xlabel("rank")
    # From zero, so that iteration jitter does not look like a collapse and a slow rank stands out.
    highest = max([point["img_per_sec"] or 0 for point in report["iterations"]]
                  + [item["img_per_sec"] + (item["spread"] or 0) for item in report["per_rank"]] + [1])
    axes.set_ylim(0, highest * 1.15)
    axes.set_ylabel("img/sec per rank")
    batch = report["batch_size"] if report["batch_size"] else "?"
    title = "%s, %d %s(s), batch %s" % (report["model"] or "model", report["ranks"], device, batch)
    axes.set_title(title, fontsize="medium")
    axes.grid(True, alpha=0.3)
    if scaling:
        axes = figure.add_subplot(1, 2, 2)
        devices = report["ranks"] * report["devices_per_rank"]
        labels = ["1 %s (baseline)" % device, "ideal, %d" % devices, "measured, %d" % devices]
        values = [report["baseline_img_per_sec"], report["baseline_img_per_sec"] * devices,
                  report["img_per_sec_total"]["mean"]]
        bars = axes.bar(labels, values, color=["#999999", "#bbbbbb", "#1f77b4"])
        axes.bar_label(bars, fmt="%.0f", fontsize="small")
        axes.set_ylabel("img/sec in total")
        axes.set_title("scaling efficiency %.1f%%" % (100 * report["scaling_efficiency"]), fontsize="medium")
        axes.grid(True, axis="y", alpha=0.3)
    # Fixed margins rather than tight_layout(), which draws the whole figure once more.
    figure.subplots_adjust(left=0.08 if scaling else 0.12, right=0.98, bottom=0.12, top=0.92, wspace=0.25)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def file_state(path, content, mode=REPORT_MODE):
    """(changed, previous bytes or None) for writing content with mode at path."""
    try:
        with open(path, "rb") as handle:
            previous = handle.read()
    except (IOError, OSError):
        return True, None
    if previous != content:
        return True, previous
    return (os.stat(path).st_mode & 0o7777) != mode, previous


def write_file(path, content, mode=REPORT_MODE):
    """Replace path atomically with content, then set mode."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".training_report.", dir=directory)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
        os.chmod(temporary, mode)
        os.rename(temporary, path)
    except Exception:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def read_log(options):
    """The log's text from content or from the file at src."""
    if options.get("content") is not None:
        return options["content"]
    path = options.get("src")
    if not path:
        raise TrainingReportError("one of src (a log file) or content (the log itself) is required")
    if not os.path.exists(path):
        raise TrainingReportError("src: %s does not exist; expected the benchmark's log file" % path)
    if os.path.isdir(path):
        raise TrainingReportError("src: %s is a directory; expected the benchmark's log file" % path)
    try:
        with io.open(path, "r", encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except (IOError, OSError) as error:
        raise TrainingReportError("src: cannot read %s: %s" % (path, error))


def _binary_summary(content):
    if content is None:
        return ""
    return "PNG image, %d bytes, sha256 %s\n" % (len(content), hashlib.sha256(content).hexdigest())


def run_training_report(params, check_mode=False, diff=False, warn=None):
    """Everything the module does: validate, read, judge, write the files that changed.

    Returns the module result: the report's fields (its warnings as log_warnings, since Ansible
    reserves 'warnings'), changed, the paths and, when asked, the diff."""
    options = dict(params)
    validate_options(options)
    if options.get("chart_path") and not chart_available():
        raise TrainingReportError("chart_path needs the matplotlib Python library", library="matplotlib")
    report = build_report(parse(read_log(options)), options)

    outputs = []
    if options.get("report_path"):
        outputs.append(("report", options["report_path"], report_json(report).encode("utf-8")))
    if options.get("chart_path"):
        outputs.append(("chart", options["chart_path"], render_chart(report)))
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
            before, after = _binary_summary(previous), _binary_summary(content)
        diffs.append({"before_header": path, "after_header": path, "before": before, "after": after})

    result = dict(report)
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
