# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A parsed log into the verdict: figures, warnings and unmet thresholds, as a JSON-ready dict."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.training import ranks as rank_info
from ansible_collections.gpuops.cluster.plugins.module_utils.training import stats
from ansible_collections.gpuops.cluster.plugins.module_utils.training.baseline import baseline_warnings, with_baseline
from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError
from ansible_collections.gpuops.cluster.plugins.module_utils.training.formats import EXPECTED_FORMATS
from ansible_collections.gpuops.cluster.plugins.module_utils.training.nccl import gpudirect_counts
from ansible_collections.gpuops.cluster.plugins.module_utils.training.options import validate_options
from ansible_collections.gpuops.cluster.plugins.module_utils.training.parser import parse
from ansible_collections.gpuops.cluster.plugins.module_utils.training.presets import (
    THRESHOLD_KEYS, apply_preset, run_precision,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.training.thresholds import (
    check_thresholds, placement_matches, placement_not_judged,
)

# A printed total that differs from the sum over ranks by more than this is called out.
TOTAL_MISMATCH_TOLERANCE = 0.05
DEFAULT_SLOW_RANK_TOLERANCE = 0.1
_round = stats.round_figure


def _require_figures(log, entries):
    if log.line_count == 0:
        raise TrainingReportError("the training log is empty; expected %s" % EXPECTED_FORMATS)
    if (entries or log.reported_total or log.tf_untagged_totals or log.tf_totals or log.wrapper_total
            or log.dllogger_total or len(log.dllogger_steps)):
        return
    found = "NCCL lines only" if log.nccl_seen else "%d lines, none of them a throughput figure" % log.line_count
    raise TrainingReportError("no throughput figures in the training log (%s); expected %s" % (found, EXPECTED_FORMATS))


def _per_rank_items(log, entries, per_device_count, hosts):
    items = []
    for rank in sorted(entries):
        entry = entries[rank]
        item = {"rank": rank, "host": hosts.get(rank), "img_per_sec": _round(entry["img_per_sec"]),
                "img_per_sec_per_device": _round(entry["img_per_sec"] / per_device_count),
                "spread": _round(entry["spread"]), "iterations": entry["iterations"], "source": entry["source"]}
        if rank in log.rank_compute:
            item["compute_img_per_sec"] = _round(log.rank_compute[rank][0])
            item["compute_spread"] = _round(log.rank_compute[rank][1])
        items.append(item)
    return items


def _printed_total(log):
    """The run's total as the log printed it, and which line printed it."""
    if log.reported_total:
        return log.reported_total[1], "Horovod 'Total img/sec' (rank 0 x %d)" % log.reported_total[0]
    if log.tf_totals:
        return log.tf_totals[0 if 0 in log.tf_totals else min(log.tf_totals)], "tf_cnn_benchmarks 'total images/sec'"
    if log.tf_untagged_totals:
        return log.tf_untagged_totals[0], "tf_cnn_benchmarks 'total images/sec'"
    if log.wrapper_total:
        return log.wrapper_total[0], "the summary line 'Total images/sec' (line %d)" % log.wrapper_total[1]
    if log.dllogger_total:
        return log.dllogger_total[0], "DLLogger's summary total_ips (line %d)" % log.dllogger_total[1]
    if len(log.dllogger_steps):
        # A run stopped before its summary: the steps it logged, each the whole run's images per second then.
        figures = [value for _step, value in log.dllogger_steps.points()]
        return stats.mean(figures), "the mean total_ips of DLLogger's %d step(s), no summary" % len(figures)
    return None, None


def _figures(log, entries, source, ranks, devices_per_rank):
    """(per device, total, every rank known): the run's throughput and where it came from."""
    devices = ranks * devices_per_rank
    printed, printed_source = _printed_total(log)
    if entries:
        mean, spread = stats.pooled(list(entries.values()))
        per_device = {"mean": _round(mean / devices_per_rank), "spread": _round(spread / devices_per_rank),
                      "source": "rank 0 only" if source == "rank0" else "%d rank(s)" % len(entries)}
    else:
        printed_spread = log.reported_total[2] / devices if log.reported_total else None
        per_device = {"mean": _round(printed / devices), "spread": _round(printed_spread),
                      "source": "printed total / %d devices" % devices}
    every_rank_known = source in ("per_rank", "tf_cnn_benchmarks") and set(entries) >= set(range(ranks))
    if every_rank_known:
        total = {"mean": _round(sum(entry["img_per_sec"] for entry in entries.values())),
                 "spread": _round(sum(entry["spread"] for entry in entries.values())),
                 "source": "sum over %d ranks" % len(entries)}
    elif printed is not None:
        total = {"mean": _round(printed), "spread": _round(log.reported_total[2]) if log.reported_total else None,
                 "source": printed_source}
    else:
        total = {"mean": _round(per_device["mean"] * devices), "spread": _round(per_device["spread"] * devices),
                 "source": "mean per device x %d devices" % devices}
    total["reported"] = _round(printed)
    return per_device, total, every_rank_known


def _slow_ranks(log, per_rank, tolerance, warnings):
    """Slow ranks: what Horovod's own figures cannot show. In synchronous training every rank waits
    for the slowest at each step, so wall-clock figures come out alike; each rank's compute figure,
    where printed, is what names the one holding the others back."""
    compared, figure = [item for item in per_rank if "compute_img_per_sec" in item], "compute_img_per_sec"
    if len(compared) < 2:
        compared, figure = per_rank, "img_per_sec"
    if len(compared) < 2:
        return
    median = stats.median([item[figure] for item in compared])
    slow = []
    for item in compared:
        relative = item[figure] / median if median else None
        item["relative_to_median"] = _round(relative, 3)
        if relative is not None and relative < 1 - tolerance:
            slow.append(item)
    compute = figure == "compute_img_per_sec"
    for item in slow:
        warnings.append("rank %d%s is slow: %.1f %s, %.0f%% of the median rank (%.1f)%s" % (
            item["rank"], " on %s" % item["host"] if item["host"] else "", item[figure],
            "img/sec of compute" if compute else "img/sec", 100 * item["relative_to_median"], median,
            "; in synchronous training every rank waits for it" if compute else ""))
    if slow and log.reported_total:
        warnings.append("Horovod's 'Total img/sec' (%.1f) is rank 0's figure times %d: it does not show "
                        "the slow rank(s) %s" % (log.reported_total[1], log.reported_total[0],
                                                 rank_info.ranks_text(item["rank"] for item in slow)))


def _nccl_section(log, devices, warnings):
    if not log.nccl_seen:
        return None
    world = rank_info.world_comm(log)
    if world and len(world["ranks"]) < world["nranks"]:
        warnings.append("NCCL completed initialisation on %d of %d ranks" % (len(world["ranks"]), world["nranks"]))
    if world and world["nranks"] != devices:
        warnings.append("NCCL's communicator has %d ranks but the benchmark reports %d %s(s)"
                        % (world["nranks"], devices, log.device or "device"))
    if log.nccl_warnings:
        warnings.append("NCCL printed %d warning(s), the first: %s" % (len(log.nccl_warnings), log.nccl_warnings[0]))
    return {
        "version": log.nccl_version, "cuda": log.nccl_cuda, "networks": list(log.nccl_networks),
        "nranks": world["nranks"] if world else None, "ranks_initialized": len(world["ranks"]) if world else None,
        "communicators": len(log.nccl_comms), "interfaces": list(log.nccl_interfaces),
        "bootstrap_interfaces": list(log.nccl_bootstrap), "hosts": list(log.nccl_hosts),
        "transport_details": dict(log.transport_details), "warnings": list(log.nccl_warnings),
        "gpudirect_rdma": dict(zip(("connections", "network"), gpudirect_counts(log.transport_details))),
    }


def _log_warnings(log, source, ranks, missing, warnings, failures):
    if missing:
        warnings.append("the log ends before the final result: %s" % "; ".join(missing))
        failures.append("the run did not finish: %s" % "; ".join(missing))
    if log.partial_lines:
        warnings.append("the log ends in the middle of a line from rank(s) %s"
                        % rank_info.ranks_text(sorted(set(item["rank"] for item in log.partial_lines))))
    if source == "rank0" and ranks > 1:
        warnings.append("only rank 0 printed throughput: a slow rank would not show; print per-rank lines (%s)"
                        % "Rank <R>: Img/sec per <GPU|CPU>: <X> +-<Y>")


def build_report(log, options):
    """The verdict as a JSON-ready dict, its 'iterations' series as typed arrays (see report_file).
    Raises TrainingReportError when the log has no figures."""
    warnings, failures = [], []
    entries, series, source = rank_info.per_rank_entries(log, warnings)
    _require_figures(log, entries)
    ranks, ranks_source = rank_info.count_ranks(log, entries, source)
    per_device_count = rank_info.devices_per_rank(log, ranks)
    devices = ranks * per_device_count
    per_rank = _per_rank_items(log, entries, per_device_count, rank_info.rank_hosts(log))
    per_device, total, every_rank_known = _figures(log, entries, source, ranks, per_device_count)
    tolerance = options.get("slow_rank_tolerance") or DEFAULT_SLOW_RANK_TOLERANCE
    _slow_ranks(log, per_rank, tolerance, warnings)
    if total["reported"] is not None and every_rank_known and total["mean"]:
        difference = total["reported"] / total["mean"] - 1
        if abs(difference) > TOTAL_MISMATCH_TOLERANCE:
            warnings.append("the printed total (%.1f img/sec) differs by %+.0f%% from the sum over ranks (%.1f): "
                            "it is rank 0's figure times the world size" % (total["reported"], 100 * difference, total["mean"]))
    missing = rank_info.missing_results(log, entries, source, ranks)
    _log_warnings(log, source, ranks, missing, warnings, failures)
    nccl = _nccl_section(log, devices, warnings)
    if log.tracebacks:
        warnings.append("the log holds %d Python traceback(s)" % log.tracebacks)
    warnings.extend("launcher: %s" % error for error in log.launcher_errors)
    baseline = options.get("baseline_img_per_sec")
    report = {
        "sources": list(log.sources), "framework": log.framework, "model": log.model, "batch_size": log.batch_size,
        "device": log.device, "ranks": ranks, "ranks_source": ranks_source, "devices_per_rank": per_device_count,
        "img_per_sec_per_device": per_device, "img_per_sec_total": total, "per_rank": per_rank,
        "iterations": series, "transports": dict(log.transports), "nccl": nccl, "baseline_img_per_sec": baseline,
        "scaling_efficiency": _round(total["mean"] / (devices * baseline), 4) if baseline and total["mean"] is not None else None,
        "placement": rank_info.placement(log, ranks), "precision": run_precision(options)[0],
        "baseline": options.get("baseline"), "complete": not missing, "warnings": warnings,
    }
    if options.get("baseline"):
        warnings.extend(baseline_warnings(options["baseline"], report))
    report["placement"]["expected"] = options.get("expect_placement")
    if options.get("expect_placement") and placement_matches(report) is None:
        warnings.append("the placement of the ranks was not judged: %s" % placement_not_judged(report))
    # The preset's efficiency floor is the one of the transport the log shows: known only now.
    effective, origin, preset_warnings = apply_preset(options, report)
    warnings.extend(preset_warnings)
    failures.extend(check_thresholds(report, effective))
    report["failures"] = failures
    report["passed"] = not failures
    report["thresholds"] = dict((key, effective.get(key)) for key in THRESHOLD_KEYS)
    report["thresholds"]["slow_rank_tolerance"] = tolerance
    report["thresholds"].update(origin)
    return report


def report_from_text(text, options, name="content"):
    """Validate, parse and judge a whole text (for tests and small logs)."""
    validate_options(options)
    return build_report(parse(text, name), with_baseline(options))
