# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The training_report module end to end through main(): arguments, check mode, diff, files."""

import json
import os
import stat

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.cluster.plugins.module_utils.training import run as training_run
from ansible_collections.gpuops.cluster.plugins.modules import training_report

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "training_logs")
IB_LOG = os.path.join(FIXTURES, "horovod_pytorch_16gpu_ib_nccl.log")
SOCKET_LOG = os.path.join(FIXTURES, "horovod_pytorch_16gpu_socket_fallback.log")


def run_module(args, capsys):
    """Run main() with args; return (exit code, parsed JSON result)."""
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exit_info:
            training_report.main()
    return exit_info.value.code, json.loads(capsys.readouterr().out)


def test_passing_run_returns_the_figures_and_changes_nothing_without_files(capsys):
    code, result = run_module({"src": IB_LOG, "expect_ranks": 16, "require_transport": ["NET/IB"],
                               "baseline_img_per_sec": 2470, "min_scaling_efficiency": 0.9}, capsys)
    assert code == 0
    assert result["passed"] is True and result["failures"] == [] and result["changed"] is False
    assert result["ranks"] == 16 and result["transports"] == {"NET/IB": 8, "P2P": 28}
    assert result["scaling_efficiency"] == pytest.approx(0.9276, abs=1e-4)
    assert result["log_warnings"] == []


def test_failing_run_lists_every_unmet_threshold(capsys):
    code, result = run_module({"src": SOCKET_LOG, "expect_ranks": 8, "min_img_per_sec_per_device": 2000,
                               "baseline_img_per_sec": 2470, "min_scaling_efficiency": 0.9,
                               "require_transport": ["NET/IB", "SHM"]}, capsys)
    assert code == 1 and result["failed"] is True and result["passed"] is False
    assert len(result["failures"]) == 5
    for fragment in ("expected 8 ranks, the log shows 16", "under the minimum 2000", "scaling efficiency 0.534",
                     "transport NET/IB is required", "transport SHM is required"):
        assert fragment in result["msg"]
    # The figures come back with the failure, for a report or a debug task.
    assert result["img_per_sec_total"]["mean"] == pytest.approx(21097.4)


def test_content_instead_of_src(capsys):
    with open(os.path.join(FIXTURES, "pytorch_synthetic_1gpu_a100.log")) as handle:
        content = handle.read()
    code, result = run_module({"content": content, "expect_ranks": 1}, capsys)
    assert code == 0 and result["img_per_sec_per_device"]["mean"] == 2453.6


def test_truncated_log_fails_and_warns(capsys):
    code, result = run_module({"src": os.path.join(FIXTURES, "horovod_pytorch_8gpu_truncated.log")}, capsys)
    assert code == 1
    assert result["msg"].startswith("training verdict: the run did not finish")
    assert any(warning.startswith("the log ends before the final result") for warning in result["log_warnings"])
    assert any("the log ends before the final result" in str(warning) for warning in result["warnings"])


def test_check_mode_reports_the_change_and_writes_nothing(tmp_path, capsys):
    report_path = str(tmp_path / "verdict.json")
    code, result = run_module({"src": IB_LOG, "report_path": report_path, "_ansible_check_mode": True,
                               "_ansible_diff": True}, capsys)
    assert code == 0 and result["changed"] is True
    assert not os.path.exists(report_path)
    assert result["diff"][0]["before"] == ""
    assert json.loads(result["diff"][0]["after"])["ranks"] == 16


def test_report_and_chart_are_written_once_then_left_alone(tmp_path, capsys):
    report_path = str(tmp_path / "verdict.json")
    chart_path = str(tmp_path / "verdict.png")
    args = {"src": IB_LOG, "baseline_img_per_sec": 2470, "report_path": report_path, "chart_path": chart_path,
            "_ansible_diff": True}
    code, result = run_module(args, capsys)
    assert code == 0 and result["changed"] is True
    assert (result["report_path"], result["chart_path"]) == (report_path, chart_path)
    for path in (report_path, chart_path):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    with open(report_path) as handle:
        written = json.load(handle)
    assert written["passed"] is True and written["ranks"] == 16 and written["warnings"] == []
    with open(chart_path, "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    assert result["diff"][1]["after"].startswith("PNG image, ")

    code, result = run_module(args, capsys)
    assert code == 0 and result["changed"] is False
    assert result["diff"][0]["before"] == result["diff"][0]["after"]


def test_a_changed_verdict_rewrites_the_report_with_a_diff(tmp_path, capsys):
    report_path = str(tmp_path / "verdict.json")
    run_module({"src": IB_LOG, "report_path": report_path}, capsys)
    code, result = run_module({"src": IB_LOG, "report_path": report_path, "expect_ranks": 16,
                               "_ansible_diff": True}, capsys)
    assert code == 0 and result["changed"] is True
    assert '"expect_ranks": null' in result["diff"][0]["before"]
    assert '"expect_ranks": 16' in result["diff"][0]["after"]


@pytest.mark.parametrize("args, message", [
    ({"src": IB_LOG, "content": "Model: x"}, "parameters are mutually exclusive: src|content"),
    ({"expect_ranks": 2}, "one of the following is required: src, content"),
    ({"src": IB_LOG, "min_img_per_sec_per_device": -1}, "min_img_per_sec_per_device must be a positive number"),
    ({"src": IB_LOG, "expect_ranks": 0}, "expect_ranks must be a whole number of ranks, 1 or more"),
    ({"src": IB_LOG, "min_scaling_efficiency": 0.9}, "min_scaling_efficiency needs baseline_img_per_sec"),
    ({"src": IB_LOG, "require_transport": ["infiniband"]}, "require_transport: 'infiniband' is not a transport"),
    ({"src": "/nonexistent/benchmark.log"}, "src: /nonexistent/benchmark.log does not exist"),
    ({"content": ""}, "the training log is empty; expected Horovod synthetic benchmark lines"),
    ({"content": "Epoch 1 done\n"}, "no throughput figures in the training log"),
    ({"src": IB_LOG, "report_path": "/nonexistent/verdict.json"}, "report_path: directory /nonexistent does not exist"),
])
def test_bad_input_fails_before_any_change_with_a_clear_message(args, message, capsys):
    code, result = run_module(args, capsys)
    assert code == 1 and result["failed"] is True
    assert message in result["msg"]
    assert "changed" not in result or result["changed"] is False


def test_chart_without_matplotlib_fails_with_the_usual_missing_library_message(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(training_run, "chart_available", lambda: False)
    chart_path = str(tmp_path / "verdict.png")
    code, result = run_module({"src": IB_LOG, "chart_path": chart_path}, capsys)
    assert code == 1
    assert "Failed to import the required Python library (matplotlib)" in result["msg"]
    assert not os.path.exists(chart_path)


def test_the_summary_is_returned_and_written_and_the_series_only_written(tmp_path, capsys):
    report_path = str(tmp_path / "verdict.json")
    code, result = run_module({"src": IB_LOG, "report_path": report_path, "launched_by": "an MPIJob (default/bench)",
                               "cpu_transport": "Gloo over TCP"}, capsys)
    assert code == 0
    assert result["summary"][0] == "verdict:     PASSED (an MPIJob (default/bench))"
    assert result["summary"][-1] == "report:      %s" % report_path
    assert "iterations" not in result
    assert [item["iterations"] for item in result["per_rank"]] == [10] * 16
    with open(report_path) as handle:
        written = json.load(handle)
    assert written["summary"] == result["summary"]
    assert [len(item["img_per_sec"]) for item in written["iterations"]] == [10] * 16
    assert written["iterations"][0]["iteration"] == list(range(10))


def test_a_nan_figure_fails_the_task_naming_the_file_line(tmp_path, capsys):
    log = tmp_path / "bench.log"
    log.write_text("Rank 0: Iter #0: 10.0 img/sec per GPU\nRank 0: Iter #1: nan img/sec per GPU\n")
    code, result = run_module({"src": str(log)}, capsys)
    assert code == 1
    assert result["msg"] == ("line 2 of %s: the figure nan is not a number of images per second: "
                             "'Rank 0: Iter #1: nan img/sec per GPU'" % log)
    # A log that cannot be judged still has the summary lines a person reads, made in the same place.
    assert result["summary"] == ["verdict:     FAILED", "failures:    " + result["msg"], "log:         %s" % log]


def test_a_preset_fills_the_thresholds_and_the_result_says_where_each_came_from(capsys):
    code, result = run_module({"src": SOCKET_LOG, "threshold_preset": "a100-sxm", "expect_ranks": 16,
                               "benchmark_command": ["mpirun", "-np", "16", "python3", "gpuops_benchmark.py",
                                                     "--mixed-precision"], "baseline_img_per_sec": 2470}, capsys)
    assert code == 1
    assert result["msg"] == ("training verdict: scaling efficiency 0.534 is under the minimum 0.7 (total 21097.4 "
                             "img/sec over 16 GPU(s), baseline 2470 per GPU)")
    thresholds = result["thresholds"]
    assert (thresholds["min_img_per_sec_per_device"], thresholds["min_scaling_efficiency"]) == (1235, 0.7)
    assert thresholds["origin"] == {"expect_ranks": "explicit", "min_img_per_sec_per_device": "preset",
                                    "min_scaling_efficiency": "preset"}
    assert thresholds["preset"]["applied"]["min_scaling_efficiency"]["url"] == "https://arxiv.org/abs/1802.05799"
    assert [line for line in result["summary"] if line.startswith("thresholds:")] == [
        "thresholds:  preset a100-sxm, amp (--mixed-precision in the benchmark command): ranks 16 (explicit); "
        "min img/sec per GPU 1235 (preset); min scaling 0.7 for NET/Socket (preset)"]


@pytest.mark.parametrize("args, message", [
    ({"threshold_preset": "t4"}, "value of threshold_preset must be one of: a100-sxm, cpu-lab, h100-sxm, v100, got: t4"),
    ({"threshold_preset": "v100"}, "threshold_preset v100 has a floor per device for each precision (amp, fp32) and the "
                                   "precision is not known: no benchmark command was given"),
])
def test_a_preset_that_cannot_be_applied_fails_before_the_log_is_read(args, message, capsys):
    args = dict(args, src=IB_LOG)
    code, result = run_module(args, capsys)
    assert code == 1 and message in result["msg"]
    assert "ranks" not in result
