# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The few lines a person reads: the one place a verdict is put into words. The module returns them,
the JSON report holds them, the playbooks and tools/lab.sh print them as they are."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.training.presets import NO_TRANSPORT
from ansible_collections.gpuops.cluster.plugins.module_utils.training.thresholds import (
    hosts_text, placement_matches, placement_not_judged, placement_text,
)

# Every rank is listed up to this many; beyond it only the slowest and the fastest.
ALL_RANKS_UP_TO = 4
SCALING_NOT_MEASURED = ("not measured: set gpuops_training_baseline_img_per_sec "
                        "(one device alone, same model and batch size)")
NO_NCCL = "no NCCL lines in the log (run with NCCL_DEBUG=INFO to see the transport)"


def label(name, text):
    return "%-13s%s" % (name + ":", text)


def _or(value, default="?"):
    return default if value is None else value


def _verdict(passed, options):
    launched_by = options.get("launched_by")
    return "%s%s" % ("PASSED" if passed else "FAILED", " (%s)" % launched_by if launched_by else "")


def _log(options):
    return label("log", options.get("src") or "(given as content)")


def _ranks(report, device):
    return "%s (%s, %s, batch %s per %s, %s)" % (
        report["ranks"], device, _or(report["model"]), _or(report["batch_size"]), device,
        report["framework"] or "framework not shown")


def _images(report, device):
    total, per_device = report["img_per_sec_total"], report["img_per_sec_per_device"]
    # A total the program printed itself (DLLogger's total_ips) comes with no spread between its iterations.
    spread = " +-%.1f" % per_device["spread"] if per_device["spread"] is not None else ""
    return "%.1f in total, %.1f%s per %s" % (total["mean"] or 0.0, per_device["mean"] or 0.0, spread, device)


def _per_rank(report):
    ranks = [item for item in report["per_rank"] if item["img_per_sec"] is not None]
    if len(ranks) > ALL_RANKS_UP_TO:
        slowest = min(ranks, key=lambda item: item["img_per_sec"])
        fastest = max(ranks, key=lambda item: item["img_per_sec"])
        ranks = [item for item in ranks if item is slowest or item is fastest]
    return ", ".join("rank %d%s %.1f img/sec over %d iterations" % (
        item["rank"], " on %s" % item["host"] if item["host"] else "", item["img_per_sec"], item["iterations"])
        for item in ranks)


def _placement(report):
    """Where the ranks ran, beside where the launcher placed them; None when the log names no host and nothing was
    asked."""
    placement, expected = report["placement"], report["placement"]["expected"]
    if not placement["hosts"]:
        return "not judged: the log names no rank's host" if expected else None
    seen = hosts_text(placement["hosts"], limit=ALL_RANKS_UP_TO)
    if not expected:
        return seen
    matches = placement_matches(report)
    if matches is None:
        return "%s; not judged: %s" % (seen, placement_not_judged(report))
    return "%s, %s the launcher placed them (%s)" % (seen, "as" if matches else "not as", placement_text(expected))


def _scaling(report, device):
    if report["scaling_efficiency"] is None:
        return SCALING_NOT_MEASURED
    measured = ", measured in %s" % report["baseline"]["path"] if report.get("baseline") else ""
    return "%.2f of linear (baseline %.1f img/sec on one %s%s)" % (
        report["scaling_efficiency"], report["baseline_img_per_sec"], device, measured)


def transport_text(report, options):
    if report["transports"]:
        gpudirect = report["nccl"]["gpudirect_rdma"]
        # Between nodes, whether the NICs read the GPUs' memory directly (NET/IB/<n>/GDRDMA) or through the host's.
        direct = "; GPUDirect RDMA on %d of %d RDMA network connections" % (
            gpudirect["connections"], gpudirect["network"]) if gpudirect["network"] else ""
        return "NCCL " + ", ".join("%s x%d" % item for item in sorted(report["transports"].items())) + direct
    if report["device"] == "CPU":
        cpu_transport = options.get("cpu_transport")
        return "no NCCL: CPU ranks" + (", %s" % cpu_transport if cpu_transport else "")
    return NO_NCCL


_THRESHOLD_WORDS = (("expect_ranks", "ranks"), ("min_img_per_sec_per_device", "min img/sec per %s"),
                    ("min_scaling_efficiency", "min scaling"), ("require_transport", "required"),
                    ("forbid_transport", "forbidden"))


def _thresholds(report, device):
    """With a preset: which one, the precision that chose its floor, and where each threshold came from."""
    thresholds = report["thresholds"]
    preset = thresholds["preset"]
    head = "preset %s" % preset["name"]
    if preset["precision"]:
        head += ", %s (%s)" % (preset["precision"], preset["precision_from"])
    parts = []
    for key, words in _THRESHOLD_WORDS:
        words = words % device if "%s" in words else words
        value = thresholds.get(key)
        if value not in (None, []):
            shown = ", ".join(value) if isinstance(value, list) else "%g" % value
            transport = preset["applied"].get(key, {}).get("transport")
            transport = "no NCCL transport" if transport == NO_TRANSPORT else transport
            origin = "explicit, over the preset's" if key in preset["overridden"] else thresholds["origin"][key]
            parts.append("%s %s%s (%s)" % (words, shown, " for %s" % transport if transport else "", origin))
        if key in preset["not_applied"]:
            parts.append("%s from the preset not applied: %s" % (words, preset["not_applied"][key]))
    return "%s: %s" % (head, "; ".join(parts))


def summary_lines(report, options):
    """The printable lines of a report, in a fixed order, labels padded to one width. options gives
    launched_by, cpu_transport, src and the report and chart paths."""
    device = report["device"] or "device"
    lines = [label("verdict", _verdict(report["passed"], options))]
    if not report["passed"]:
        lines.append(label("failures", "; ".join(report["failures"])))
    lines.append(label("ranks", _ranks(report, device)))
    placement = _placement(report)
    if placement:
        lines.append(label("placement", placement))
    lines.append(label("images/sec", _images(report, device)))
    per_rank = _per_rank(report)
    if per_rank:
        lines.append(label("per rank", per_rank))
    lines.append(label("scaling", _scaling(report, device)))
    lines.append(label("transport", transport_text(report, options)))
    if report["thresholds"].get("preset"):
        lines.append(label("thresholds", _thresholds(report, device)))
    if report["warnings"]:
        lines.append(label("warnings", "; ".join(report["warnings"])))
    lines.append(_log(options))
    for name in ("report", "chart"):
        if options.get(name + "_path"):
            lines.append(label(name, options[name + "_path"]))
    return lines


def unjudged_lines(problem, options):
    """The lines of a log that could not be judged at all (missing, unreadable, a refused figure)."""
    return [label("verdict", _verdict(False, options)), label("failures", problem), _log(options)]
