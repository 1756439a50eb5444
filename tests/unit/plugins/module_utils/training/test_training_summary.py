# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The summary lines: the one place a verdict is put into words."""

import os

from ansible_collections.gpuops.cluster.plugins.module_utils.training.summary import summary_lines, unjudged_lines
from ansible_collections.gpuops.cluster.plugins.module_utils.training.verdict import report_from_text

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "training_logs")


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def test_a_passing_cpu_run_over_ssh():
    report = report_from_text(fixture("lab_gloo_2node_tf.log"), {"expect_ranks": 2, "expect_placement": [1, 1]})
    per_rank = report["per_rank"]
    lines = summary_lines(report, {"launched_by": "horovodrun --gloo over SSH (node1, node2)",
                                   "cpu_transport": "Gloo over TCP", "src": "/cache/training-gloo.log",
                                   "report_path": "/cache/training-gloo.json"})
    assert lines == [
        "verdict:     PASSED (horovodrun --gloo over SSH (node1, node2))",
        "ranks:       2 (CPU, small_cnn, batch 16 per CPU, tensorflow)",
        "placement:   2 hosts (node1: 1 rank, node2: 1 rank), as the launcher placed them (2 hosts of 1 rank each)",
        "images/sec:  %.1f in total, %.1f +-%.1f per CPU" % (
            report["img_per_sec_total"]["mean"], report["img_per_sec_per_device"]["mean"],
            report["img_per_sec_per_device"]["spread"]),
        "per rank:    " + ", ".join("rank %d on %s %.1f img/sec over %d iterations" % (
            item["rank"], item["host"], item["img_per_sec"], item["iterations"]) for item in per_rank),
        "scaling:     not measured: set gpuops_training_baseline_img_per_sec (one device alone, same model and "
        "batch size)",
        "transport:   no NCCL: CPU ranks, Gloo over TCP",
        "log:         /cache/training-gloo.log",
        "report:      /cache/training-gloo.json",
    ]


def test_a_failing_gpu_run_names_its_failures_warnings_slowest_and_fastest_rank():
    report = report_from_text(fixture("horovod_pytorch_16gpu_socket_fallback.log"), {
        "expect_ranks": 16, "baseline_img_per_sec": 2470, "require_transport": ["NET/IB"]})
    lines = summary_lines(report, {"launched_by": "an MPIJob (default/gpuops-benchmark)", "src": "/x.log",
                                   "chart_path": "/x.png"})
    assert lines[0] == "verdict:     FAILED (an MPIJob (default/gpuops-benchmark))"
    assert lines[1] == "failures:    transport NET/IB is required but NCCL connected over NET/Socket x8, P2P x28"
    labels = [line[:13] for line in lines]
    assert labels == ["verdict:     ", "failures:    ", "ranks:       ", "placement:   ", "images/sec:  ",
                      "per rank:    ", "scaling:     ", "transport:   ", "log:         ", "chart:       "]
    # No placement asked: the hosts the log names, alone.
    assert lines[3] == "placement:   2 hosts (dgx-a01: 8 ranks, dgx-a02: 8 ranks)"
    # 16 ranks: only the slowest and the fastest.
    assert lines[5].count("img/sec over") == 2
    assert lines[6] == "scaling:     %.2f of linear (baseline 2470.0 img/sec on one GPU)" % report["scaling_efficiency"]
    assert lines[7] == "transport:   NCCL NET/Socket x8, P2P x28"


def test_a_gpu_log_without_nccl_lines_says_how_to_see_the_transport():
    report = report_from_text(fixture("pytorch_synthetic_1gpu_a100.log"), {})
    lines = summary_lines(report, {"content": "..."})
    assert lines[0] == "verdict:     PASSED"
    assert "transport:   no NCCL lines in the log (run with NCCL_DEBUG=INFO to see the transport)" in lines
    assert lines[-1] == "log:         (given as content)"


def test_warnings_are_one_line_and_a_summary_only_log_has_no_per_rank_line():
    report = report_from_text("Total images/sec = 500.0\nTraceback (most recent call last):\n", {})
    lines = summary_lines(report, {})
    assert not any(line.startswith("per rank:") for line in lines)
    assert "warnings:    the log holds 1 Python traceback(s)" in lines


def test_a_log_that_cannot_be_judged_says_why_in_the_same_form():
    lines = unjudged_lines("src: /x.log does not exist; expected the benchmark's log file",
                           {"src": "/x.log", "launched_by": "an MPIJob (ml/bench)"})
    assert lines == ["verdict:     FAILED (an MPIJob (ml/bench))",
                     "failures:    src: /x.log does not exist; expected the benchmark's log file",
                     "log:         /x.log"]
