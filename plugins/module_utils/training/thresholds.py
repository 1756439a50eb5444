# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every unmet threshold of a report, each as one sentence."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.training.options import normalize_transport


def check_thresholds(report, options):
    """Every unmet threshold, each as one sentence."""
    device = report["device"] or "device"
    return (_ranks(report, options) + _placement(report) + _per_device(report, options, device)
            + _scaling(report, options, device) + _transports(report, options))


def _ranks(report, options):
    expect_ranks = options.get("expect_ranks")
    if expect_ranks is not None and report["ranks"] != expect_ranks:
        return ["expected %d ranks, the log shows %d (from %s)" % (expect_ranks, report["ranks"], report["ranks_source"])]
    return []


def hosts_text(hosts, limit=8):
    """'2 hosts (a: 2 ranks, b: 2 ranks)': the hosts a log names, each with its ranks, the first `limit` of them."""
    shown = ["%s: %d rank%s" % (host, count, "" if count == 1 else "s") for host, count in list(hosts.items())[:limit]]
    more = " and %d more" % (len(hosts) - limit) if len(hosts) > limit else ""
    return "%d host%s (%s%s)" % (len(hosts), "" if len(hosts) == 1 else "s", ", ".join(shown), more)


def placement_text(expected):
    """'2 hosts of 2 ranks each', or '3 hosts of 4, 2 and 2 ranks': the placement a launcher asked for."""
    if len(set(expected)) == 1:
        hosts, ranks = len(expected), expected[0]
        plural = ("" if hosts == 1 else "s", "" if ranks == 1 else "s", " each" if hosts > 1 else "")
        return "%d host%s of %d rank%s%s" % (hosts, plural[0], ranks, plural[1], plural[2])
    counts = [str(count) for count in expected]
    return "%d hosts of %s and %s ranks" % (len(expected), ", ".join(counts[:-1]), counts[-1])


def placement_not_judged(report):
    """Why the placement the launcher asked for cannot be judged, or None when it can: the log shows another count of
    ranks (which the rank count judges), or does not name every rank's host (a log of rank 0's lines alone names
    none)."""
    placement = report["placement"]
    if sum(placement["expected"]) != report["ranks"]:
        return "the log shows %d ranks where the launcher placed %d" % (report["ranks"], sum(placement["expected"]))
    if placement["ranks_named"] < report["ranks"]:
        return "the log names the host of %d of %d ranks" % (placement["ranks_named"], report["ranks"])
    return None


def placement_matches(report):
    """Whether the ranks ran as the launcher placed them (each host's count of ranks, in any order); None where no
    placement was asked or the log does not let it be judged (placement_not_judged says why)."""
    placement = report["placement"]
    if not placement["expected"] or placement_not_judged(report):
        return None
    return sorted(placement["hosts"].values()) == sorted(placement["expected"])


def _placement(report):
    """Ranks spread otherwise than the launcher placed them: an mpirun that ignored the operator's host file (Open MPI
    5 reads PRTE_MCA_*, not OMPI_MCA_orte_*) runs every rank on one node, and its run still completes."""
    if placement_matches(report) is not False:
        return []
    placement = report["placement"]
    return ["the ranks ran on %s; the launcher placed them on %s"
            % (hosts_text(placement["hosts"]), placement_text(placement["expected"]))]


def _per_device(report, options, device):
    minimum = options.get("min_img_per_sec_per_device")
    if minimum is None:
        return []
    mean = report["img_per_sec_per_device"]["mean"]
    below = [item for item in report["per_rank"] if item["img_per_sec_per_device"] < minimum]
    if mean is None:
        return ["img/sec per %s is unknown, the minimum is %g" % (device, minimum)]
    if not (mean < minimum or below):
        return []
    if below and len(below) == len(report["per_rank"]) and len(below) > 1:
        detail = "; all %d ranks are below it" % len(below)
    elif below:
        shown = ", ".join("rank %d (%.1f)" % (item["rank"], item["img_per_sec_per_device"]) for item in below[:8])
        detail = "; below it: %s%s" % (shown, " and %d more" % (len(below) - 8) if len(below) > 8 else "")
    else:
        detail = ""
    return ["img/sec per %s is under the minimum %g: mean %.1f%s" % (device, minimum, mean, detail)]


def _scaling(report, options, device):
    minimum = options.get("min_scaling_efficiency")
    if minimum is None:
        return []
    efficiency = report["scaling_efficiency"]
    if efficiency is not None and efficiency >= minimum:
        return []
    return ["scaling efficiency %s is under the minimum %g (total %.1f img/sec over %d %s(s), baseline %g per %s)" % (
        "unknown" if efficiency is None else "%.3f" % efficiency, minimum, report["img_per_sec_total"]["mean"],
        report["ranks"] * report["devices_per_rank"], device, options.get("baseline_img_per_sec"), device)]


def _transports(report, options):
    return _required(report, options) + _forbidden(report, options) + _gpudirect(report, options)


def _gpudirect(report, options):
    """Every network connection over GPUDirect RDMA, where required: one without it means that the GPU's traffic to
    its NIC went through host memory (nvidia-peermem not loaded, or the GPU and NIC under different PCIe roots)."""
    if not options.get("require_gpudirect_rdma"):
        return []
    direct, network = report["nccl"]["gpudirect_rdma"]["connections"], report["nccl"]["gpudirect_rdma"]["network"]
    if not network:
        return ["GPUDirect RDMA is required but NCCL made no RDMA connection between nodes (NET/IB and the like; TCP "
                "sockets carry none; a run across nodes with NCCL_DEBUG=INFO shows them)"]
    if direct < network:
        seen = ", ".join("%s x%d" % item for item in sorted(report["nccl"]["transport_details"].items()))
        return ["GPUDirect RDMA is required but %d of %d RDMA network connections went without it (all: %s)"
                % (network - direct, network, seen)]
    return []


def _forbidden(report, options):
    """A forbidden transport that carried any connection: NET/Socket beside NET/IB means some pairs of ranks
    fell back to TCP, which require_transport alone cannot see."""
    failures = []
    for unwanted in options.get("forbid_transport") or []:
        name = normalize_transport(unwanted)
        count = report["transports"].get(name)
        if count:
            seen = ", ".join("%s x%d" % item for item in sorted(report["transports"].items()))
            failures.append("transport %s is forbidden but NCCL connected over it %d time(s) (all: %s)"
                            % (name, count, seen))
    return failures


def _required(report, options):
    failures = []
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
