# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The training_benchmark role's program: its flags, and that what it prints is what training_log parses."""

from __future__ import annotations

import importlib.util
import os

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.training import parser as training_log

PROGRAM = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "training_benchmark", "files",
                       "gpuops_benchmark.py")


@pytest.fixture(scope="module")
def benchmark():
    spec = importlib.util.spec_from_file_location("gpuops_benchmark", PROGRAM)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
