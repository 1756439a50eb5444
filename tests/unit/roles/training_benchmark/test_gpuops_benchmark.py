# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The training_benchmark role's program: its flags, and that what it prints is what training_log parses."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.training import parser as training_log
from gpuops_testlib.benchmark_program import load_benchmark


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark()


def test_knob_flags_become_horovod_variables(benchmark):
    args = benchmark.parse_args(["--fusion-threshold-mb", "64", "--cycle-time-ms", "3.5", "--hierarchical-allreduce"])
    assert benchmark.horovod_environment(args) == {
        "HOROVOD_FUSION_THRESHOLD": str(64 * 1024 * 1024),
        "HOROVOD_CYCLE_TIME": "3.5",
        "HOROVOD_HIERARCHICAL_ALLREDUCE": "1",
    }
    assert benchmark.horovod_environment(benchmark.parse_args([])) == {}


def test_sizes_default_by_device(benchmark):
    args = benchmark.parse_args([])
    assert benchmark.resolve_sizes(args, use_gpu=True) == ("resnet50", 32, 224)
    assert benchmark.resolve_sizes(args, use_gpu=False) == ("small_cnn", 16, 64)


def test_bad_sizes_are_refused(benchmark):
    with pytest.raises(SystemExit):
        benchmark.parse_args(["--batch-size", "0"])


def test_printed_lines_parse_per_rank(benchmark, capsys, monkeypatch):
    monkeypatch.setattr(benchmark.socket, "gethostname", lambda: "node2.lab")
    args = benchmark.parse_args([])
    reporter = benchmark.Reporter(rank=1, size=2, device_kind="cpu")
    reporter.header("small_cnn", 16, "TensorFlow 2.15.1", args)
    # A clock that advances 0.1 s per reading, and steps that report 0.05 s of compute each.
    readings = iter(range(10 ** 6))
    monkeypatch.setattr(benchmark.timeit, "default_timer", lambda: next(readings) * 0.1)
    benchmark.run_timed(reporter, args, 16, lambda: 0.05)
    printed = capsys.readouterr().out
    # Rank 1 prints only its own lines; Horovod's rank-0 lines are absent.
    assert "Total img/sec" not in printed
    log = training_log.parse(printed)
    assert sorted(log.rank_iterations) == [1]
    assert len(log.rank_iterations[1]) == args.num_iters
    assert log.rank_hosts[1] == "node2"
    assert 1 in log.rank_summaries and 1 in log.rank_compute
    assert log.device == "CPU"


def _tf_config(cluster, task_type, index):
    return {"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": task_type, "index": index}})}


def test_tf_config_gives_the_cluster_and_this_task(benchmark):
    cluster = {"chief": ["bench-chief-0.ns.svc:2222"], "worker": ["bench-worker-0.ns.svc:2222"]}
    assert benchmark.tf_config_cluster(_tf_config(cluster, "worker", 0)) == (cluster, "worker", 0)
    # The chief is rank 0 of synchronous training, then the workers in order.
    assert benchmark.training_ranks(cluster) == [("chief", 0), ("worker", 0)]
    assert benchmark.short_host(cluster["worker"][0]) == "bench-worker-0"


@pytest.mark.parametrize("environ, expected", [
    ({}, "needs TF_CONFIG"),
    ({"TF_CONFIG": "{not json"}, "TF_CONFIG must be"),
    ({"TF_CONFIG": json.dumps({"cluster": {"worker": ["a:1"]}})}, "TF_CONFIG must be"),
    (_tf_config({"ps": ["p:1"]}, "ps", 0), "has no worker"),
    (_tf_config({"worker": ["a:1"]}, "worker", 1), "task worker 1 is not in its cluster (1 worker task(s))"),
])
def test_a_bad_tf_config_is_refused_with_what_is_wrong(benchmark, environ, expected):
    with pytest.raises(SystemExit) as refused:
        benchmark.tf_config_cluster(environ)
    assert expected in str(refused.value)


def test_tf_config_distribution_is_tensorflow_only(benchmark):
    with pytest.raises(SystemExit):
        benchmark.parse_args(["--distribution", "tf_config", "--framework", "pytorch"])
    assert benchmark.parse_args(["--distribution", "tf_config"]).distribution == "tf_config"


def test_a_coordinator_prints_its_workers_lines_and_the_totals(benchmark, capsys):
    """Parameter-server training: the chief reports each worker's figures under that worker's name."""
    args = benchmark.parse_args(["--distribution", "tf_config"])
    leader = benchmark.Reporter(0, 2, "cpu", leads=True)
    workers = [benchmark.Reporter(rank, 2, "cpu", host="bench-worker-%d" % rank, leads=False) for rank in (0, 1)]
    leader.header("small_cnn", 16, "TensorFlow 2.15.1, ParameterServerStrategy", args)
    for rank, reporter in enumerate(workers):
        reporter.rank_iteration(0, 100.0 + rank)
        reporter.rank_summary([100.0 + rank])
    leader.totals([100.5])
    log = training_log.parse(capsys.readouterr().out)
    assert log.declared_size == 2
    assert log.rank_hosts == {0: "bench-worker-0", 1: "bench-worker-1"}
    assert sorted(log.rank_summaries) == [0, 1]
    assert log.reported_total[0] == 2
    # No figure for the coordinator itself, and no Horovod knobs in a run without Horovod.
    assert not log.rank_compute
