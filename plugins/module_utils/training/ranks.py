# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Who ran: each rank's figures, how many ranks there were and how we know, what is missing."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.training import stats


def world_comm(log):
    if not log.nccl_comms:
        return None
    return max(log.nccl_comms.values(), key=lambda comm: (comm["nranks"], len(comm["ranks"])))


def rank_hosts(log):
    hosts = {}
    world = world_comm(log)
    if world:
        hosts.update((rank, host) for rank, host in world["ranks"].items() if host)
    hosts.update(log.rank_hosts)
    return hosts


def _series(rank, series):
    return {"rank": rank, "iteration": series.numbers, "img_per_sec": series.values}


def per_rank_entries(log, warnings):
    """Per-rank throughput {rank: {img_per_sec, spread, iterations, source}}, the iteration series
    [{rank, iteration, img_per_sec}] (the last two typed arrays) and which lines gave them."""
    if log.rank_iterations or log.rank_summaries:
        return _from_per_rank_lines(log)
    if log.rank_compute:
        warnings.append("ranks printed only 'Compute img/sec' lines: without their wall-clock 'Img/sec' lines "
                        "the run's total comes from rank 0")
    if log.tf_steps:
        return _from_tf_steps(log, warnings)
    series = [_series(0, log.iterations)] if len(log.iterations) else []
    if log.reported_per_device:
        mean, spread = log.reported_per_device
    elif len(log.iterations):
        mean, spread = stats.mean(log.iterations.values), stats.spread(log.iterations.values)
    else:
        return {}, series, None
    # Horovod's synthetic benchmarks print on rank 0 only.
    entries = {0: {"img_per_sec": mean, "spread": spread, "iterations": len(log.iterations),
                   "source": "Horovod rank 0 lines"}}
    return entries, series, "rank0"


def _from_per_rank_lines(log):
    entries = {}
    series = []
    for rank in sorted(set(log.rank_iterations) | set(log.rank_summaries)):
        iterations = log.rank_iterations.get(rank)
        if iterations is not None:
            series.append(_series(rank, iterations))
        if rank in log.rank_summaries:
            mean, spread = log.rank_summaries[rank]
        else:
            mean, spread = stats.mean(iterations.values), stats.spread(iterations.values)
        entries[rank] = {"img_per_sec": mean, "spread": spread, "iterations": len(iterations or ()),
                         "source": "per-rank lines"}
    return entries, series, "per_rank"


def _from_tf_steps(log, warnings):
    tagged = [rank for rank in log.tf_steps if rank is not None]
    if tagged:
        steps_by_rank = dict((rank, rank) for rank in tagged)
    elif len(log.tf_untagged_totals) <= 1:
        # One process printing without tags: a single-worker run.
        steps_by_rank = {0: None}
    else:
        warnings.append("tf_cnn_benchmarks output of %d workers is interleaved without rank tags: "
                        "per-rank figures cannot be told apart (run mpirun with --tag-output)"
                        % len(log.tf_untagged_totals))
        steps_by_rank = {}
    entries = {}
    series = []
    for rank in sorted(steps_by_rank):
        steps = log.tf_steps[steps_by_rank[rank]]
        series.append(_series(rank, steps))
        # tf_cnn_benchmarks prints a running mean: the last step line is the rank's figure.
        entries[rank] = {"img_per_sec": steps.values[-1], "spread": log.tf_uncertainty[steps_by_rank[rank]],
                         "iterations": len(steps), "source": "tf_cnn_benchmarks step lines"}
    return entries, series, "tf_cnn_benchmarks"


def count_ranks(log, entries, source):
    """(ranks, which lines said so): lines that state the count first, then the launcher's command
    line, then what can be inferred from the ranks seen."""
    if log.declared_size:
        return log.declared_size, "Horovod 'Number of %ss'" % (log.device or "device")
    if log.reported_total:
        return log.reported_total[0], "Horovod 'Total img/sec on N'"
    world = world_comm(log)
    if world:
        return world["nranks"], "NCCL nranks"
    if log.tf_devices and (log.tf_variables or "").lower() == "horovod":
        return len(log.tf_devices), "tf_cnn_benchmarks Devices"
    if len(log.tf_untagged_totals) > 1:
        return len(log.tf_untagged_totals), "workers that printed 'total images/sec'"
    if log.launch_ranks:
        return log.launch_ranks[0], "the launcher's command line (line %d)" % log.launch_ranks[1]
    if source in ("per_rank", "tf_cnn_benchmarks") and entries:
        return max(entries) + 1, "ranks that printed figures"
    if log.tagged_ranks:
        return max(log.tagged_ranks) + 1, "mpirun output tags"
    return 1, "a single process (no rank information in the log)"


def placement(log, ranks):
    """Where the ranks ran, as the log names them (the benchmark's 'Rank <R> on <host>' lines, NCCL's): each host with
    its count of ranks, and how many of the run's ranks the log names a host for."""
    named = dict((rank, host) for rank, host in rank_hosts(log).items() if 0 <= rank < ranks)
    hosts = {}
    for host in named.values():
        hosts[host] = hosts.get(host, 0) + 1
    return {"hosts": dict(sorted(hosts.items())), "ranks_named": len(named)}


def devices_per_rank(log, ranks):
    if log.tf_devices and (log.tf_variables or "").lower() != "horovod":
        return max(1, len(log.tf_devices) // max(ranks, 1))
    return 1


def ranks_text(ranks):
    ranks = list(ranks)
    if len(ranks) > 12:
        return ", ".join(str(rank) for rank in ranks[:12]) + " and %d more" % (len(ranks) - 12)
    return ", ".join(str(rank) for rank in ranks)


def missing_results(log, entries, source, ranks):
    """What is missing from the end of the log, as a list of reasons (empty when complete)."""
    missing = []
    horovod_started = log.benchmark_started or log.warmup_started or len(log.iterations) or log.declared_size
    if horovod_started and not log.reported_total:
        missing.append("no 'Total img/sec on N %s(s)' line" % (log.device or "GPU"))
    if source == "per_rank":
        without_summary = sorted(rank for rank in log.rank_iterations if rank not in log.rank_summaries)
        if without_summary:
            missing.append("no per-rank 'Img/sec per %s' line for rank(s) %s"
                           % (log.device or "GPU", ranks_text(without_summary)))
        absent = sorted(set(range(ranks)) - set(entries))
        if absent:
            missing.append("no figures at all from rank(s) %s of %d" % (ranks_text(absent), ranks))
    if log.tf_steps:
        tagged = [rank for rank in log.tf_steps if rank is not None]
        if tagged:
            without_total = sorted(rank for rank in tagged if rank not in log.tf_totals)
            if without_total:
                missing.append("no 'total images/sec' line for rank(s) %s" % ranks_text(without_total))
        elif not log.tf_untagged_totals:
            missing.append("no 'total images/sec' line")
    return missing
