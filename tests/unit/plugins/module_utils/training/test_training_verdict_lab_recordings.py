# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict over logs recorded on the lab nodes by tools/record_training_logs.py (real Horovod runs).

Each figure expected here is read from the log with a plain search for the line that carries it, so the
tests say: the report holds what the ranks printed, whichever launcher tagged the lines and however the
lines of the ranks interleaved.
"""

import os
import re

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.training.verdict import report_from_text

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "training_logs")

# file: (ranks, hosts of the ranks in rank order, model, batch size per rank, tag form of the launcher)
COMPLETE_RUNS = {
    "lab_gloo_2node_tf.log": (2, ["node1", "node2"], "small_cnn", 16, "horovodrun"),
    "lab_gloo_1node_tf.log": (1, ["node1"], "small_cnn", 16, "horovodrun"),
    "lab_mpi_2node_4rank_tf.log": (4, ["node1", "node1", "node2", "node2"], "small_cnn", 16, "mpirun"),
    "lab_mpi_1node_2rank_tf.log": (2, ["node1", "node1"], "small_cnn", 16, "mpirun"),
    "lab_mpi_2node_knobs_tf.log": (2, ["node1", "node2"], "small_cnn", 16, "mpirun"),
    "lab_gloo_2node_resnet50_tf.log": (2, ["node1", "node2"], "resnet50", 4, "horovodrun"),
}
TAG = {"horovodrun": re.compile(r"^\[(\d+)\]<(stdout|stderr)>:", re.M),
       "mpirun": re.compile(r"^\[1,(\d+)\]<(stdout|stderr)>:", re.M)}
RANK_RESULT = re.compile(r"Rank (\d+) on (\S+): Img/sec per CPU: ([0-9.]+) \+-([0-9.]+)")
TOTAL = re.compile(r"Total img/sec on (\d+) CPU\(s\): ([0-9.]+) \+-([0-9.]+)")


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


@pytest.mark.parametrize("name", sorted(COMPLETE_RUNS))
def test_a_complete_lab_run_is_reported_as_its_ranks_printed_it(name):
    ranks, hosts, model, batch_size, launcher = COMPLETE_RUNS[name]
    text = fixture(name)
    # The recording is what the launcher wrote: every rank's lines carry its tag.
    assert sorted({int(rank) for rank, _stream in TAG[launcher].findall(text)}) == list(range(ranks))

    report = report_from_text(text, {"expect_ranks": ranks})

    assert report["passed"] and report["complete"], report["failures"]
    assert (report["framework"], report["device"], report["model"], report["batch_size"], report["ranks"]) == (
        "tensorflow", "CPU", model, batch_size, ranks)
    printed = sorted((int(rank), host, float(mean)) for rank, host, mean, _spread in RANK_RESULT.findall(text))
    assert [(item["rank"], item["host"], item["img_per_sec"]) for item in report["per_rank"]] == printed
    assert [item["host"] for item in report["per_rank"]] == hosts
    # Horovod's own total is rank 0's figure times the world size; the report's is the sum over the ranks.
    world, reported, _spread = TOTAL.search(text).groups()
    assert int(world) == ranks
    assert report["img_per_sec_total"]["reported"] == float(reported)
    assert report["img_per_sec_total"]["mean"] == pytest.approx(sum(mean for _rank, _host, mean in printed), abs=0.05)
    assert report["nccl"] is None and report["transports"] == {}
    # Every rank's every timed iteration is kept for the chart.
    iterations_per_rank = len(re.findall(r"Rank 0 on \S+: Iter #\d+:", text))
    assert iterations_per_rank > 0
    assert sum(len(item["iteration"]) for item in report["iterations"]) == ranks * iterations_per_rank


def test_a_cpu_run_cannot_prove_a_fabric_and_says_why():
    report = report_from_text(fixture("lab_mpi_2node_4rank_tf.log"), {"expect_ranks": 4, "require_transport": ["NET/IB"]})
    assert not report["passed"]
    assert report["failures"] == [
        "transport NET/IB is required but the log has no NCCL connection lines (run with NCCL_DEBUG=INFO)"]


def test_the_one_node_run_is_the_baseline_of_the_two_node_run():
    baseline = report_from_text(fixture("lab_gloo_1node_tf.log"), {"expect_ranks": 1})
    single = baseline["img_per_sec_total"]["mean"]
    report = report_from_text(fixture("lab_gloo_2node_tf.log"), {"expect_ranks": 2, "baseline_img_per_sec": single})
    assert report["scaling_efficiency"] == pytest.approx(report["img_per_sec_total"]["mean"] / (2 * single), abs=0.0001)
    # Asking for more than the lab's shared cores can give fails, naming the figures.
    strict = report_from_text(fixture("lab_gloo_2node_tf.log"),
                              {"expect_ranks": 2, "baseline_img_per_sec": single, "min_scaling_efficiency": 1.5})
    assert not strict["passed"]
    assert strict["failures"] == ["scaling efficiency %.3f is under the minimum 1.5 (total %.1f img/sec over 2 CPU(s), "
                                  "baseline %s per CPU)" % (report["scaling_efficiency"],
                                                            report["img_per_sec_total"]["mean"], single)]


def test_horovod_knobs_are_reported_in_the_header_the_benchmark_prints():
    text = fixture("lab_mpi_2node_knobs_tf.log")
    assert "fp16 allreduce: yes" in text
    assert "HOROVOD_HIERARCHICAL_ALLREDUCE=1" in text and "HOROVOD_FUSION_THRESHOLD=33554432" in text
    report = report_from_text(text, {"expect_ranks": 2})
    assert report["passed"]


def test_a_launcher_killed_mid_run_leaves_a_log_that_fails_with_what_was_measured():
    text = fixture("lab_gloo_2node_launcher_killed.log")
    assert "Total img/sec" not in text
    report = report_from_text(text, {"expect_ranks": 2})
    assert not report["complete"] and not report["passed"]
    assert report["failures"][0].startswith("the run did not finish: no 'Total img/sec on N CPU(s)' line")
    assert report["warnings"][0].startswith("the log ends before the final result")
    # The iterations printed before the kill are still there for the report and the chart.
    assert report["iterations"]
    assert report["img_per_sec_total"]["reported"] is None


def test_a_rank_killed_mid_run_fails_the_job_and_the_log_says_which():
    text = fixture("lab_mpi_2node_rank_killed.log")
    report = report_from_text(text, {"expect_ranks": 2})
    assert not report["complete"] and not report["passed"]
    assert report["failures"] == ["the run did not finish: no 'Total img/sec on N CPU(s)' line; "
                                  "no per-rank 'Img/sec per CPU' line for rank(s) 0, 1"]
    # mpirun's own account of the dead process is passed on, naming the rank and the node.
    assert re.search(r"^launcher: mpirun noticed that process rank 1 with PID \d+ on node node2 exited on signal 9 "
                     r"\(Killed\)\.$", "\n".join(report["warnings"]), re.M), report["warnings"]
    assert report["iterations"]


# A TFJob's replica logs as the tfjob_launcher role writes them: each under a line naming its pod.
TFJOB_RUNS = {
    "lab_tfjob_multi_worker_2node_tf.log": (["gpuops-tfjob-worker-0", "gpuops-tfjob-worker-1"], 16),
    "lab_tfjob_parameter_server_2workers_tf.log": (["with-ps-worker-0", "with-ps-worker-1"], 8),
}


@pytest.mark.parametrize("name", sorted(TFJOB_RUNS))
def test_a_tfjob_run_is_reported_from_its_replicas_logs(name):
    hosts, batch_size = TFJOB_RUNS[name]
    text = fixture(name)
    report = report_from_text(text, {"expect_ranks": 2})
    assert report["passed"] and report["complete"], report["failures"]
    assert (report["device"], report["model"], report["batch_size"], report["ranks"]) == (
        "CPU", "small_cnn", batch_size, 2)
    printed = sorted((int(rank), host, float(mean)) for rank, host, mean, _spread in RANK_RESULT.findall(text))
    assert [(item["rank"], item["host"], item["img_per_sec"]) for item in report["per_rank"]] == printed
    assert [item["host"] for item in report["per_rank"]] == hosts
    assert report["img_per_sec_total"]["mean"] == pytest.approx(sum(mean for _rank, _host, mean in printed), abs=0.05)
