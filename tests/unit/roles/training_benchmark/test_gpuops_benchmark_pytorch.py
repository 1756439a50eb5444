# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark's PyTorch options without PyTorch: --distribution ddp's rank environment, mixed precision and
channels-last, the refusals before any work, and that a DDP run's lines are what training_report reads."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.training import parser as training_log
from ansible_collections.gpuops.cluster.plugins.module_utils.training.run import run_training_report
from gpuops_testlib.ansible_run import REPO_ROOT
from gpuops_testlib.benchmark_program import load_benchmark

# The child processes import gpuops_testlib as pytest does, from tests/.
TESTS_DIR = os.path.join(REPO_ROOT, "tests")
FIXTURES = os.path.join(TESTS_DIR, "unit", "fixtures", "training_logs")
RENDEZVOUS = {"MASTER_ADDR": "node1", "MASTER_PORT": "29500"}
TORCHRUN = dict(RENDEZVOUS, RANK="3", WORLD_SIZE="4", LOCAL_RANK="1", LOCAL_WORLD_SIZE="2")
MPIRUN = dict(RENDEZVOUS, OMPI_COMM_WORLD_RANK="2", OMPI_COMM_WORLD_SIZE="4", OMPI_COMM_WORLD_LOCAL_RANK="0",
              OMPI_COMM_WORLD_LOCAL_SIZE="2")


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark()


def test_the_rank_comes_from_torchrun_or_mpirun(benchmark):
    assert benchmark.ddp_ranks(TORCHRUN) == ("torchrun", 3, 4, 1, 2)
    assert benchmark.ddp_ranks(MPIRUN) == ("mpirun", 2, 4, 0, 2)
    # torchrun started under mpirun (one torchrun per host): torchrun's variables name the training rank.
    assert benchmark.ddp_ranks(dict(MPIRUN, **TORCHRUN))[0] == "torchrun"


@pytest.mark.parametrize("environ, expected", [
    ({}, "needs the rank variables of torchrun (RANK, WORLD_SIZE, LOCAL_RANK) or of mpirun (OMPI_COMM_WORLD_RANK"),
    (dict(MPIRUN, MASTER_PORT=""), "under mpirun needs MASTER_ADDR (the first rank's host) and MASTER_PORT (a free "
                                   "port there), and MASTER_PORT is not set"),
    (dict(TORCHRUN, WORLD_SIZE="four"), "needs whole numbers in RANK, WORLD_SIZE and LOCAL_RANK"),
    (dict(TORCHRUN, RANK="4"), "rank 4 of world size 4 (local rank 1 of 2) is not a rank of the run"),
])
def test_a_missing_or_broken_rank_environment_is_refused(benchmark, environ, expected):
    with pytest.raises(SystemExit) as refused:
        benchmark.ddp_ranks(environ)
    assert expected in str(refused.value)


def test_mixed_precision_alone_is_fp16_as_before(benchmark):
    assert benchmark.parse_args(["--mixed-precision"]).mixed_precision == "fp16"
    assert benchmark.parse_args(["--mixed-precision", "--num-iters", "3"]).num_iters == 3
    assert benchmark.parse_args(["--mixed-precision", "bf16"]).mixed_precision == "bf16"
    assert benchmark.parse_args([]).mixed_precision is None
    args = benchmark.parse_args(["--distribution", "ddp", "--mixed-precision", "bf16", "--channels-last", "--device", "cpu"])
    assert benchmark.precision_name(args) == "bf16, channels-last"


@pytest.mark.parametrize("argv, expected", [
    (["--distribution", "mpi"], "argument --distribution: invalid choice: 'mpi'"),
    (["--mixed-precision", "fp8"], "argument --mixed-precision: invalid choice: 'fp8'"),
    (["--device", "cpu", "--mixed-precision"], "--mixed-precision fp16 needs GPUs"),
    (["--framework", "tensorflow", "--distribution", "ddp"], "--distribution ddp is PyTorch's DistributedDataParallel: "
                                                             "it needs --framework pytorch"),
    (["--framework", "tensorflow", "--channels-last"], "--channels-last is PyTorch's memory format"),
    (["--distribution", "ddp", "--fp16-allreduce", "--cycle-time-ms", "2"],
     "--fp16-allreduce, --cycle-time-ms: Horovod's knobs, which --distribution ddp does not use"),
])
def test_bad_flags_are_refused_before_any_framework_is_imported(benchmark, capsys, argv, expected):
    with pytest.raises(SystemExit):
        benchmark.parse_args(argv)
    assert expected in capsys.readouterr().err


def test_fp16_on_a_rank_that_found_no_gpu_stops_it_before_any_work(benchmark):
    """--device auto: only the framework knows whether the rank has a GPU; it stops right after asking."""
    with pytest.raises(SystemExit) as refused:
        benchmark.refuse_cpu_precision(benchmark.parse_args(["--mixed-precision", "fp16"]), use_gpu=False)
    assert "--mixed-precision fp16 needs GPUs" in str(refused.value)
    benchmark.refuse_cpu_precision(benchmark.parse_args(["--mixed-precision", "bf16"]), use_gpu=False)
    benchmark.refuse_cpu_precision(benchmark.parse_args(["--mixed-precision", "fp16"]), use_gpu=True)


def test_each_line_is_one_write(benchmark, monkeypatch):
    """Ranks under torchrun share one pipe: a line written in two pieces could be split by another rank's."""
    writes = []

    class Pipe(io.StringIO):
        def write(self, text):
            writes.append(text)
            return len(text)

    monkeypatch.setattr(benchmark.sys, "stdout", Pipe())
    benchmark.Reporter(rank=0, size=2, device_kind="gpu", host="node1").iteration(3, 97.25)
    assert writes == ["Rank 0 on node1: Iter #3: 97.2 img/sec per GPU\n", "Iter #3: 97.2 img/sec per GPU\n"]


def test_a_ddp_runs_lines_from_a_stand_in_step_parse_as_every_mode(benchmark, capsys, monkeypatch):
    args = benchmark.parse_args(["--distribution", "ddp", "--mixed-precision", "bf16", "--num-iters", "4"])
    readings = iter(range(10 ** 6))
    monkeypatch.setattr(benchmark.timeit, "default_timer", lambda: next(readings) * 0.1)
    for rank, host in ((0, "node1"), (1, "node2")):
        reporter = benchmark.Reporter(rank, 2, "gpu", host=host)
        reporter.header("resnet50", 256, "PyTorch 2.13.0, DistributedDataParallel over nccl (torchrun)", args)
        benchmark.run_timed(reporter, args, 256, lambda: 0.05)
    printed = capsys.readouterr().out
    assert "Framework: PyTorch 2.13.0, DistributedDataParallel over nccl (torchrun); precision: bf16\n" in printed
    log = training_log.parse(printed)
    assert log.framework == "pytorch" and log.device == "GPU" and log.declared_size == 2
    assert log.rank_hosts == {0: "node1", 1: "node2"}
    assert sorted(log.rank_compute) == [0, 1]
    assert [len(log.rank_iterations[rank]) for rank in (0, 1)] == [4, 4]


def test_a_real_torchrun_ddp_run_passes_training_report():
    """Recorded with torchrun --nproc_per_node 2 on CPUs: Gloo, small_cnn, the program's defaults."""
    report = run_training_report({"src": os.path.join(FIXTURES, "torchrun_ddp_gloo_cpu_2rank.log"), "expect_ranks": 2})
    assert report["passed"], report["failures"]
    assert (report["ranks"], report["device"], report["framework"], report["model"]) == (2, "CPU", "pytorch", "small_cnn")
    assert [rank["iterations"] for rank in report["per_rank"]] == [10, 10]
    # Rank 0's Horovod-style total agrees with the sum of the ranks' own lines.
    total = report["img_per_sec_total"]
    assert total["source"] == "sum over 2 ranks" and total["reported"] == pytest.approx(total["mean"], rel=0.01)


def test_a_finished_ddp_rank_leaves_with_status_0_and_every_line_it_wrote():
    """The rank skips the native teardown at exit, and its buffered lines still reach the pipe its launcher reads."""
    program = ("import sys\n"
               "sys.path.insert(0, sys.argv[1])\n"
               "from gpuops_testlib.benchmark_program import load_benchmark\n"
               "benchmark = load_benchmark()\n"
               "sys.stdout.write('Total img/sec on 2 CPU(s): 190.2 +-222.4')\n"
               "sys.stderr.write('a warning')\n"
               "benchmark.leave_without_native_teardown()\n"
               "sys.stdout.write('never written')\n")
    # Buffered as in a pod, where nothing sets PYTHONUNBUFFERED.
    buffered = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    left = subprocess.run([sys.executable, "-c", program, TESTS_DIR], capture_output=True, text=True, check=False,
                          timeout=60, env=buffered)
    assert (left.returncode, left.stdout, left.stderr) == (0, "Total img/sec on 2 CPU(s): 190.2 +-222.4", "a warning")


def test_the_compute_clock_stops_when_the_last_gradient_bucket_is_ready(benchmark, monkeypatch):
    """DDP's backward() waits for every all-reduce; the compute figure stops at this rank's own last gradients."""
    class Bucket(object):
        def __init__(self, last):
            self.last = last

        def is_last(self):
            return self.last

    synchronized, times = [], {}
    monkeypatch.setattr(benchmark.timeit, "default_timer", lambda: 12.5)
    hook = benchmark.last_bucket_clock(lambda: synchronized.append(True), lambda group, bucket: ("allreduced", group, bucket))
    first = Bucket(last=False)
    assert hook(times, first) == ("allreduced", None, first)
    assert not synchronized and not times
    hook(times, Bucket(last=True))
    assert synchronized == [True] and times == {"ready": 12.5}
