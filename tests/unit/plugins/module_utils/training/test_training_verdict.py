# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict over the recorded logs in tests/unit/fixtures/training_logs (see its README)."""

import json
import os

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.training.chart import render_chart
from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError
from ansible_collections.gpuops.cluster.plugins.module_utils.training.options import validate_options
from ansible_collections.gpuops.cluster.plugins.module_utils.training.report_file import report_json
from ansible_collections.gpuops.cluster.plugins.module_utils.training.verdict import report_from_text

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "training_logs")


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def iteration_numbers(report):
    """Every point of the report's series, rank after rank, by its iteration (or step) number."""
    return [number for item in report["iterations"] for number in item["iteration"]]


def judge(name, **options):
    return report_from_text(fixture(name), options)


def test_pytorch_synthetic_on_one_gpu():
    report = judge("pytorch_synthetic_1gpu_a100.log", expect_ranks=1, baseline_img_per_sec=2470,
                   min_img_per_sec_per_device=2400, min_scaling_efficiency=0.95)
    assert (report["model"], report["batch_size"], report["device"], report["ranks"]) == ("resnet50", 256, "GPU", 1)
    assert report["img_per_sec_per_device"]["mean"] == 2453.6
    assert report["img_per_sec_per_device"]["spread"] == 16.9
    assert report["img_per_sec_total"]["mean"] == 2453.6
    assert report["scaling_efficiency"] == pytest.approx(2453.6 / 2470, abs=1e-4)
    assert iteration_numbers(report) == list(range(10))
    assert report["nccl"] is None and report["transports"] == {}
    assert (report["passed"], report["failures"], report["warnings"]) == (True, [], [])


def test_tensorflow_synthetic_prints_on_rank_0_only():
    report = judge("tensorflow2_synthetic_4gpu_v100.log", expect_ranks=4, require_transport=["P2P"])
    assert (report["framework"], report["model"], report["batch_size"], report["ranks"]) == (
        "tensorflow", "ResNet50", 32, 4)
    assert report["img_per_sec_per_device"] == {"mean": 342.4, "spread": 3.0, "source": "rank 0 only"}
    assert report["img_per_sec_total"]["mean"] == 1369.6
    assert report["img_per_sec_total"]["reported"] == 1369.6
    assert [item["rank"] for item in report["per_rank"]] == [0]
    assert report["transports"] == {"P2P": 8}
    assert report["nccl"]["version"] == "2.7.8" and report["nccl"]["cuda"] == "11.0"
    assert report["nccl"]["networks"] == ["Socket"]
    assert (report["nccl"]["nranks"], report["nccl"]["ranks_initialized"]) == (4, 4)
    assert report["passed"]
    assert any("only rank 0 printed throughput" in warning for warning in report["warnings"])


def test_tf_cnn_benchmarks_single_gpu():
    report = judge("tf_cnn_benchmarks_1gpu_v100.log", baseline_img_per_sec=372.1)
    assert (report["framework"], report["model"], report["batch_size"], report["ranks"]) == (
        "tensorflow", "resnet50", 64, 1)
    # The last step line holds the running mean of the whole run.
    assert report["per_rank"][0]["img_per_sec"] == 372.1
    assert report["img_per_sec_total"]["reported"] == 371.71
    assert iteration_numbers(report) == [1] + list(range(10, 101, 10))
    assert report["complete"] and report["passed"] and report["warnings"] == []


def test_tf_cnn_benchmarks_under_horovod_tagged_per_rank():
    report = judge("tf_cnn_benchmarks_horovod_4gpu_2node.log", expect_ranks=4, require_transport=["NET/IB"])
    assert report["ranks"] == 4 and report["devices_per_rank"] == 1
    assert [item["img_per_sec"] for item in report["per_rank"]] == [181.0, 180.9, 181.0, 180.9]
    assert report["img_per_sec_total"]["mean"] == pytest.approx(723.8)
    assert report["img_per_sec_total"]["reported"] == 722.02
    assert [item["host"] for item in report["per_rank"]] == ["hpc-gpu01", "hpc-gpu01", "hpc-gpu02", "hpc-gpu02"]
    assert report["transports"] == {"P2P": 2, "NET/IB": 4}
    assert report["passed"]


def test_sixteen_gpus_over_infiniband():
    report = judge("horovod_pytorch_16gpu_ib_nccl.log", expect_ranks=16, min_img_per_sec_per_device=2200,
                   baseline_img_per_sec=2470, min_scaling_efficiency=0.9, require_transport=["NET/IB", "p2p"])
    assert report["ranks"] == 16 and report["device"] == "GPU"
    assert len(report["per_rank"]) == 16
    # Every rank printed its own figure: the total is their sum, not rank 0 x 16.
    assert report["img_per_sec_total"]["mean"] == pytest.approx(36660.8)
    assert report["img_per_sec_total"]["source"] == "sum over 16 ranks"
    assert report["scaling_efficiency"] == pytest.approx(36660.8 / (16 * 2470), abs=1e-4)
    assert report["transports"] == {"NET/IB": 8, "P2P": 28}
    nccl = report["nccl"]
    assert (nccl["version"], nccl["cuda"], nccl["networks"]) == ("2.18.5", "12.2", ["IB"])
    assert (nccl["nranks"], nccl["ranks_initialized"], nccl["communicators"]) == (16, 16, 1)
    assert sorted(nccl["hosts"]) == ["dgx-a01", "dgx-a02"]
    assert len([item for item in nccl["interfaces"] if item["net"] == "IB"]) == 8
    assert sorted(nccl["bootstrap_interfaces"]) == ["ib0:10.10.1.11", "ib0:10.10.1.12"]
    assert {item["host"] for item in report["per_rank"][:8]} == {"dgx-a01"}
    assert {item["host"] for item in report["per_rank"][8:]} == {"dgx-a02"}
    assert (report["passed"], report["failures"], report["warnings"]) == (True, [], [])


def test_socket_fallback_fails_every_unmet_threshold():
    report = judge("horovod_pytorch_16gpu_socket_fallback.log", expect_ranks=16, min_img_per_sec_per_device=2000,
                   baseline_img_per_sec=2470, min_scaling_efficiency=0.9, require_transport=["NET/IB"])
    assert report["transports"] == {"NET/Socket": 8, "P2P": 28}
    assert report["nccl"]["networks"] == ["Socket"]
    assert report["nccl"]["interfaces"][0] == {"net": "Socket", "name": "eth0", "address": "10.20.1.11"}
    assert not report["passed"]
    assert report["failures"] == [
        "img/sec per GPU is under the minimum 2000: mean 1318.6; all 16 ranks are below it",
        "scaling efficiency 0.534 is under the minimum 0.9 (total 21097.4 img/sec over 16 GPU(s), "
        "baseline 2470 per GPU)",
        "transport NET/IB is required but NCCL connected over NET/Socket x8, P2P x28",
    ]


def test_recorded_mpirun_output_with_split_and_interleaved_lines():
    report = judge("mpirun_tagged_split_lines_cpu.log", expect_ranks=4)
    assert report["device"] == "CPU" and report["ranks"] == 4
    assert [(item["rank"], item["img_per_sec"], item["iterations"]) for item in report["per_rank"]] == [
        (0, 11.0, 8), (1, 11.4, 8), (2, 11.8, 8), (3, 12.1, 8)]
    assert len(iteration_numbers(report)) == 32
    assert report["img_per_sec_total"]["mean"] == pytest.approx(46.3)
    assert report["passed"] and report["warnings"] == []


def test_truncated_log_warns_and_fails():
    report = judge("horovod_pytorch_8gpu_truncated.log")
    assert not report["complete"]
    assert not report["passed"]
    assert report["failures"] == [
        "the run did not finish: no 'Total img/sec on N GPU(s)' line; "
        "no per-rank 'Img/sec per GPU' line for rank(s) 0, 1, 2, 3, 4, 5, 6, 7"]
    assert report["warnings"][0].startswith("the log ends before the final result")
    assert "the log ends in the middle of a line from rank(s) 3" in report["warnings"]
    # What was measured before the end is still reported.
    assert len(report["per_rank"]) == 8
    assert report["img_per_sec_total"]["reported"] is None


def test_a_forbidden_transport_fails_a_run_that_the_required_one_alone_passes():
    """Two of the four inter-node connections fell back to TCP: NET/IB is there, so require_transport passes;
    forbid_transport sees the NET/Socket ones."""
    text = fixture("tf_cnn_benchmarks_horovod_4gpu_2node.log").replace(
        "3 -> 0 [receive] via NET/IB/0", "3 -> 0 [receive] via NET/Socket/0").replace(
        "3 -> 0 [send] via NET/IB/0", "3 -> 0 [send] via NET/Socket/0")
    required_only = report_from_text(text, {"require_transport": ["NET/IB"]})
    assert required_only["transports"] == {"P2P": 2, "NET/IB": 2, "NET/Socket": 2}
    assert required_only["passed"]
    report = report_from_text(text, {"require_transport": ["NET/IB"], "forbid_transport": ["NET/Socket"]})
    assert report["failures"] == [
        "transport NET/Socket is forbidden but NCCL connected over it 2 time(s) (all: NET/IB x2, NET/Socket x2, P2P x2)"]
    assert report["thresholds"]["forbid_transport"] == ["NET/Socket"]
    # Every pair over InfiniBand: nothing forbidden was used.
    assert judge("tf_cnn_benchmarks_horovod_4gpu_2node.log", forbid_transport=["NET/Socket", "SHM"])["passed"]


def test_cpu_run_over_gloo():
    report = judge("horovod_gloo_cpu_2node.log", expect_ranks=4, min_img_per_sec_per_device=5,
                   require_transport=["NET/IB"])
    assert (report["framework"], report["device"], report["model"], report["batch_size"]) == (
        "pytorch", "CPU", "resnet18", 16)
    assert [item["host"] for item in report["per_rank"]] == ["nodea", "nodea", "nodeb", "nodeb"]
    assert report["nccl"] is None
    assert report["failures"] == [
        "transport NET/IB is required but the log has no NCCL connection lines (run with NCCL_DEBUG=INFO)"]


def test_slow_rank_is_named_although_the_totals_agree():
    report = judge("horovod_pytorch_8gpu_slow_rank.log", baseline_img_per_sec=372, min_scaling_efficiency=0.9)
    slow = [item for item in report["per_rank"] if item["relative_to_median"] < 0.9]
    assert [(item["rank"], item["compute_img_per_sec"]) for item in slow] == [(5, 215.2)]
    assert report["warnings"] == [
        "rank 5 on v100-node-3 is slow: 215.2 img/sec of compute, 56% of the median rank (385.8); "
        "in synchronous training every rank waits for it",
        "Horovod's 'Total img/sec' (1665.5) is rank 0's figure times 8: it does not show the slow rank(s) 5",
    ]
    assert report["transports"] == {"P2P": 12, "SHM": 4}
    assert report["failures"] == [
        "scaling efficiency 0.559 is under the minimum 0.9 (total 1665.1 img/sec over 8 GPU(s), baseline 372 per GPU)"]


def test_printed_total_that_disagrees_with_the_ranks_is_called_out():
    text = "\n".join([
        "Number of GPUs: 2",
        "Rank 0: Img/sec per GPU: 100.0 +-1.0",
        "Rank 1: Img/sec per GPU: 60.0 +-1.0",
        "Img/sec per GPU: 100.0 +-1.0",
        "Total img/sec on 2 GPU(s): 200.0 +-2.0",
    ]) + "\n"
    report = report_from_text(text, {})
    assert report["img_per_sec_total"]["mean"] == 160.0
    assert report["warnings"] == [
        "rank 1 is slow: 60.0 img/sec, 75% of the median rank (80.0)",
        "Horovod's 'Total img/sec' (200.0) is rank 0's figure times 2: it does not show the slow rank(s) 1",
        "the printed total (200.0 img/sec) differs by +25% from the sum over ranks (160.0): "
        "it is rank 0's figure times the world size",
    ]


def test_missing_ranks_and_wrong_rank_count():
    text = "Number of GPUs: 4\nRank 0: Img/sec per GPU: 10.0 +-0.1\nRank 1: Img/sec per GPU: 10.0 +-0.1\n" \
           "Total img/sec on 4 GPU(s): 40.0 +-0.4\n"
    report = report_from_text(text, {"expect_ranks": 8})
    assert report["failures"] == [
        "the run did not finish: no figures at all from rank(s) 2, 3 of 4",
        "expected 8 ranks, the log shows 4 (from Horovod 'Number of GPUs')",
    ]
    # Without every rank, the total is Horovod's printed one.
    assert report["img_per_sec_total"]["source"] == "Horovod 'Total img/sec' (rank 0 x 4)"


@pytest.mark.parametrize("text, message", [
    ("", "the training log is empty; expected Horovod synthetic benchmark lines"),
    ("  \n\n", "the training log is empty"),
    ("Epoch 1/10\nloss: 0.52\n", "no throughput figures in the training log (2 lines, none of them a throughput"),
    ("h:1:2 [0] NCCL INFO Using network IB\nh:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n",
     "no throughput figures in the training log (NCCL lines only)"),
])
def test_a_log_without_figures_is_an_error_not_a_pass(text, message):
    with pytest.raises(TrainingReportError) as error:
        report_from_text(text, {"expect_ranks": 1})
    assert message in str(error.value)
    assert "Rank <R>" in str(error.value)


@pytest.mark.parametrize("options, message", [
    ({"expect_ranks": 0}, "expect_ranks must be a whole number of ranks, 1 or more, got 0"),
    ({"min_img_per_sec_per_device": -5.0}, "min_img_per_sec_per_device must be a positive number"),
    ({"baseline_img_per_sec": 0.0}, "baseline_img_per_sec must be a positive number"),
    ({"min_scaling_efficiency": 0.9}, "min_scaling_efficiency needs baseline_img_per_sec"),
    ({"min_scaling_efficiency": 90.0, "baseline_img_per_sec": 10.0}, "90.0 looks like a percentage"),
    ({"min_scaling_efficiency": -0.1, "baseline_img_per_sec": 10.0}, "must be a fraction above 0"),
    ({"slow_rank_tolerance": 1.5}, "slow_rank_tolerance must be a fraction between 0 and 1"),
    ({"require_transport": ["infiniband"]}, "require_transport: 'infiniband' is not a transport"),
    ({"forbid_transport": ["tcp"]}, "forbid_transport: 'tcp' is not a transport"),
    ({"require_transport": ["NET/IB"], "forbid_transport": ["net/ib"]},
     "forbid_transport: NET/IB is also in require_transport; a transport is either required or forbidden"),
    ({"report_path": "/nonexistent-dir/report.json"}, "report_path: directory /nonexistent-dir does not exist"),
    ({"chart_path": ""}, "chart_path must be a file path, got an empty string"),
])
def test_bad_options_are_refused_with_a_message_naming_them(options, message):
    with pytest.raises(TrainingReportError) as error:
        validate_options(options)
    assert message in str(error.value)


def test_every_bad_option_is_named_at_once():
    with pytest.raises(TrainingReportError) as error:
        validate_options({"expect_ranks": -1, "min_img_per_sec_per_device": -1.0})
    assert "expect_ranks" in str(error.value) and "min_img_per_sec_per_device" in str(error.value)


def test_report_json_is_stable_and_readable():
    report = judge("horovod_pytorch_16gpu_ib_nccl.log", baseline_img_per_sec=2470)
    text = report_json(report)
    assert text == report_json(judge("horovod_pytorch_16gpu_ib_nccl.log", baseline_img_per_sec=2470))
    assert json.loads(text)["ranks"] == 16


def test_chart_without_iterations_shows_bars_per_rank():
    # The iteration and scaling panels, and the chart being the same for the same report, are
    # covered by the module's idempotence test.
    bars = render_chart(report_from_text("Rank 0: Img/sec per CPU: 5.0 +-0.1\nRank 1: Img/sec per CPU: 4.0 +-0.1\n", {}))
    assert bars[:8] == b"\x89PNG\r\n\x1a\n"


def test_signs_of_trouble_in_the_log_become_warnings():
    text = "\n".join([
        "[1,0]<stdout>:Number of GPUs: 2",
        "[1,0]<stdout>:h1:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE",
        "[1,1]<stdout>:h2:1:2 [0] NCCL WARN Net : Connection closed by remote peer",
        "[1,0]<stdout>:Rank 0 on h1: Img/sec per GPU: 100.0 +-1.0",
        "[1,1]<stdout>:Rank 1 on h2: Img/sec per GPU: 99.0 +-1.0",
        "[1,0]<stdout>:Img/sec per GPU: 100.0 +-1.0",
        "[1,0]<stdout>:Total img/sec on 2 GPU(s): 200.0 +-2.0",
        "[1,1]<stderr>:Traceback (most recent call last):",
        "mpirun noticed that process rank 1 with PID 0 on node h2 exited on signal 9 (Killed).",
    ]) + "\n"
    report = report_from_text(text, {})
    assert report["warnings"] == [
        "NCCL completed initialisation on 1 of 2 ranks",
        "NCCL printed 1 warning(s), the first: Net : Connection closed by remote peer",
        "the log holds 1 Python traceback(s)",
        "launcher: mpirun noticed that process rank 1 with PID 0 on node h2 exited on signal 9 (Killed).",
    ]
    assert report["passed"]


def test_devices_per_rank_for_a_multi_gpu_tf_cnn_process():
    text = "Batch size:  128 global\n             64 per device\nDevices:     ['/gpu:0', '/gpu:1']\n" \
           "Variables:   replicated\n100\timages/sec: 280.0 +/- 0.2 (jitter = 0.5)\t7.9\ntotal images/sec: 279.90\n"
    report = report_from_text(text, {"baseline_img_per_sec": 145.0, "min_img_per_sec_per_device": 150})
    assert (report["ranks"], report["devices_per_rank"]) == (1, 2)
    assert report["img_per_sec_per_device"]["mean"] == 140.0
    assert report["scaling_efficiency"] == pytest.approx(280.0 / (2 * 145.0), abs=1e-4)
    assert report["failures"] == ["img/sec per GPU is under the minimum 150: mean 140.0; below it: rank 0 (140.0)"]
