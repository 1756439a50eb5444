# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The verdict's options, checked before anything is read or written."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError
from ansible_collections.gpuops.cluster.plugins.module_utils.training.presets import preset_problems

KNOWN_TRANSPORTS = ("NET/IB", "NET/Socket", "P2P", "SHM")


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


def between_nodes(name):
    """Whether a transport carries NCCL's traffic between nodes (NET/IB, NET/Socket, a network plugin's NET/):
    a run on one node has no other node to reach, so it can never use one."""
    return (normalize_transport(name) or "").startswith("NET/")


def _threshold_problems(options):
    problems = []
    expect_ranks = options.get("expect_ranks")
    if expect_ranks is not None and expect_ranks < 1:
        problems.append("expect_ranks must be a whole number of ranks, 1 or more, got %r" % (expect_ranks,))
    placement = options.get("expect_placement")
    if placement is not None:
        if not placement or not all(isinstance(count, int) and count >= 1 for count in placement):
            problems.append("expect_placement must list each host's ranks, 1 or more each, such as [8, 8], got %r"
                            % (placement,))
        elif expect_ranks is not None and sum(placement) != expect_ranks:
            problems.append("expect_placement places %d ranks (%s) but expect_ranks is %d"
                            % (sum(placement), " + ".join(map(str, placement)), expect_ranks))
    for name in ("min_img_per_sec_per_device", "baseline_img_per_sec"):
        value = options.get(name)
        if value is not None and not value > 0:
            problems.append("%s must be a positive number (omit it to skip the check), got %r" % (name, value))
    efficiency = options.get("min_scaling_efficiency")
    if efficiency is not None:
        if not efficiency > 0:
            problems.append("min_scaling_efficiency must be a fraction above 0 (1.0 is linear scaling), got %r"
                            % (efficiency,))
        elif efficiency > 1.5:
            problems.append("min_scaling_efficiency must be a fraction such as 0.9 (1.0 is linear scaling); "
                            "%r looks like a percentage" % (efficiency,))
        if options.get("baseline_img_per_sec") is None and not options.get("baseline_report"):
            problems.append("min_scaling_efficiency needs baseline_img_per_sec, the single-device img/sec "
                            "that scaling is measured against, or baseline_report, the report of a run that measured it")
    if options.get("baseline_report") and options.get("baseline_img_per_sec") is not None:
        problems.append("baseline_report and baseline_img_per_sec both give the baseline; give one")
    tolerance = options.get("slow_rank_tolerance")
    if tolerance is not None and not 0 < tolerance < 1:
        problems.append("slow_rank_tolerance must be a fraction between 0 and 1 (0.1 flags a rank 10%% slower "
                        "than the median), got %r" % (tolerance,))
    for key in ("require_transport", "forbid_transport"):
        for name in options.get(key) or []:
            if normalize_transport(name) is None:
                problems.append("%s: %r is not a transport; expected one of %s or NET/<plugin name>"
                                % (key, name, ", ".join(KNOWN_TRANSPORTS)))
    both = sorted(set(filter(None, map(normalize_transport, options.get("require_transport") or [])))
                  & set(filter(None, map(normalize_transport, options.get("forbid_transport") or []))))
    if both:
        problems.append("forbid_transport: %s is also in require_transport; a transport is either required or "
                        "forbidden" % ", ".join(both))
    return problems


def path_problems(options):
    problems = []
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
    return problems


def validate_options(options):
    """Check thresholds, the preset and paths; raise naming every problem at once."""
    problems = _threshold_problems(options) + preset_problems(options) + path_problems(options)
    if problems:
        raise TrainingReportError("; ".join(problems))
